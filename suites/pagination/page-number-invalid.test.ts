import { expectErrorObject, expectResponse, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { getPage, itemIds, sameItems } from '../harness/pages.ts';
import { useSession } from '../harness/session.ts';
import { beforeAll, runsAlone } from '../harness/suite-api.ts';

runsAlone("it compares pages of the Admin's /passwords.json read one after another");
const s = useSession();
const SIZE = 5;
const LIST = '/passwords';
const NOT_PAGE_NUMBERS = ['-1', 'abc', '1.5', '-0', '%20'];

// More than one page of 5, so the first page differs from every other.
beforeAll(async () => {
  const project = await s.fixtures.createProject();
  for (let i = 0; i <= SIZE; i++) await s.fixtures.createPassword(project);
});

// The spec names no page, 0 and 1 only; what another value gives is the server's choice, but it
// is either a refusal with the error object or the first page, never a server error.
clauseTest('PAG-10', 'record the reply to page numbers -1, "abc", 1.5, -0 and " "', async (t) => {
  const first = itemIds(await getPage(s.admin, LIST, 1, SIZE));
  for (const page of NOT_PAGE_NUMBERS) {
    const ex = await s.admin.get(`${LIST}/page/${page}.json`, { headers: { 'X-Page-Size': String(SIZE) } });
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
});
