import { violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { inFlight } from '../harness/config.ts';
import { useSession } from '../harness/session.ts';
import { runsAlone } from '../harness/suite-api.ts';
import { allListIds } from './resource-helpers.ts';

runsAlone("it walks the Admin's whole /passwords.json");
const s = useSession();

// "JSON array of the passwords the user can access": a new Normal user has no access to a
// project the Admin just created, so none of its passwords may be listed for them, while the
// Admin ("sees all resources") gets every one of them.
clauseTest('EP-03', 'list in GET /passwords.json only the passwords the user can access', async () => {
  const user = await s.user('normal user');
  const project = await s.fixtures.createProject();
  const hidden = [await s.fixtures.createPassword(project), await s.fixtures.createPassword(project)];

  // Both lists walked side by side, their pages --concurrency at once.
  const [seenByUser, seenByAdmin] = await Promise.all([
    allListIds(user.client, '/passwords', inFlight(s.config)),
    allListIds(s.admin, '/passwords', inFlight(s.config)),
  ]);
  for (const id of hidden) {
    const page = seenByUser.get(String(id));
    if (page) violation(page, `no password of project ${project}, to which the Normal user ${user.username} has no access`, `password ${id} listed`);
  }

  const missing = hidden.filter((id) => !seenByAdmin.has(String(id)));
  if (missing.length > 0) {
    const ex = await s.admin.get('/passwords/count.json', { headers: { 'X-Page-Size': '1000' } });
    violation(ex, `the Admin's list to hold passwords ${hidden.join(', ')}`, `passwords ${missing.join(', ')} missing from all ${seenByAdmin.size} listed`);
  }
});
