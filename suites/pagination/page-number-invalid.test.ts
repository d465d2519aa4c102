import { expectErrorObject, expectResponse, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import type { ApiClient } from '../harness/client.ts';
import { aloneWhenShared, ownOrAdminList } from '../harness/own-list.ts';
import { getPage, itemIds, sameItems } from '../harness/pages.ts';
import { useSession } from '../harness/session.ts';
import { beforeAll } from '../harness/suite-api.ts';

const s = useSession();
const SIZE = 5;
const LIST = '/passwords';
const NOT_PAGE_NUMBERS = ['-1', 'abc', '1.5', '-0', '%20'];
/** Who reads the list: a user who sees a project of the run's own only, else the Admin. */
let viewer: ApiClient;
/** Whether the list is the Admin's, which files beside this one write while it is read. */
let shared = false;

// More than one page of 5, so the first page differs from every other: a list of the run's own
// (only this file writes it), else the Admin's with a project of the run's own added. Decision:
// beside other files on a list of its own; on the Admin's list the check has the target to
// itself, as a file that runs alone would.
beforeAll(async () => {
  const list = await ownOrAdminList(s, SIZE + 1, 'page-number-invalid', { topUp: true });
  viewer = list.viewer;
  shared = list.shared !== undefined;
});

// The spec names no page, 0 and 1 only; what another value gives is the server's choice, but it
// is either a refusal with the error object or the first page, never a server error.
clauseTest(
  'PAG-10',
  'record the reply to page numbers -1, "abc", 1.5, -0 and " "',
  aloneWhenShared(
    () => shared,
    async (t) => {
      const first = itemIds(await getPage(viewer, LIST, 1, SIZE));
      for (const page of NOT_PAGE_NUMBERS) {
        const ex = await viewer.get(`${LIST}/page/${page}.json`, { headers: { 'X-Page-Size': String(SIZE) } });
        expectResponse(ex, 'a 4XX error object or the first page');
        const { status } = ex.response;
        const label = `page ${JSON.stringify(decodeURIComponent(page))}`;
        if (status >= 400 && status <= 499) {
          const body = expectErrorObject(ex);
          t.observe(label, { status, type: body.type, message: body.message });
        } else if (status === 200) {
          const ids = itemIds(ex);
          if (!sameItems(ids, first)) violation(ex, `a 4XX error object or the first page (items ${first.join(', ')})`, `items ${ids.join(', ')}`);
          t.observe(label, { status, page: 'the first page' });
        } else {
          violation(ex, 'a 4XX error object or the first page', `status ${status}`);
        }
      }
    },
  ),
);
