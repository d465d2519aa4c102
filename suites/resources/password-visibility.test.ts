import type { Exchange } from '../../core/exchange.ts';
import { violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { exclusive } from '../harness/gate.ts';
import { useSession } from '../harness/session.ts';
import { holdsBetweenCounts } from '../oracle/lists.ts';
import { listIds } from './resource-helpers.ts';

const s = useSession();

// "JSON array of the passwords the user can access": a new Normal user has no access to a
// project the Admin just created, so none of its passwords may be listed for them, while the
// Admin ("sees all resources") gets every one of them. A long list is read by its ends
// (`listIds`): the Admin's passwords found on neither end of an installation's list are not judged.
clauseTest('EP-03', 'list in GET /passwords.json only the passwords the user can access', async (t) => {
  const user = await s.user('normal user');
  const project = await s.fixtures.createProject();
  const hidden = [await s.fixtures.createPassword(project), await s.fixtures.createPassword(project)];

  // Both lists read side by side.
  const [seenByUser, seenByAdmin] = await Promise.all([listIds(user.client, '/passwords'), listIds(s.admin, '/passwords')]);
  for (const id of hidden) {
    const page = seenByUser.ids.get(String(id));
    if (page) violation(page, `no password of project ${project}, to which the Normal user ${user.username} has no access`, `password ${id} listed`);
  }

  const missing = hidden.filter((id) => !seenByAdmin.ids.has(String(id)));
  if (missing.length > 0 && !seenByAdmin.whole) {
    t.observe(
      "the Admin's list",
      `passwords ${missing.join(', ')} on neither the first nor the last of ${seenByAdmin.pages} pages of 1000: not judged (the order is not shown)`,
    );
  } else if (missing.length > 0) {
    // Files beside this one and other users write to the Admin's list while its pages are read
    // one after another, and an item can move from a page not yet read to one already read.
    // The finding stands when a fresh read misses them too, between two equal counts, with the
    // target to itself (files beside this one create and delete).
    let last: Exchange | undefined;
    const count = async () => {
      last = await s.admin.get('/passwords/count.json', { headers: { 'X-Page-Size': '1000' } });
      return (last.json as { num_items?: unknown } | undefined)?.num_items;
    };
    const stands = await exclusive(() =>
      holdsBetweenCounts(count, async () => {
        const again = await listIds(s.admin, '/passwords');
        return again.whole && missing.some((id) => !again.ids.has(String(id)));
      }),
    );
    if (!stands) {
      t.observe("the Admin's list", `passwords ${missing.join(', ')} missing from one read of the list, found or not judged on a second (the list moved)`);
      return;
    }
    violation(
      last!,
      `the Admin's list to hold passwords ${hidden.join(', ')}`,
      `passwords ${missing.join(', ')} missing from all ${seenByAdmin.ids.size} listed`,
    );
  }
});
