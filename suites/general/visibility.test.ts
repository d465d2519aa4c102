import { expectResponse, expectSchema, expectStatus, violation } from '../harness/assert.ts';
import type { ApiClient } from '../harness/client.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { itemIds, type Count } from '../harness/pages.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();
const PAGE = 1000;

/** Every password id the client's list shows, page by page. */
async function listedIds(client: ApiClient): Promise<Set<number>> {
  const headers = { 'X-Page-Size': String(PAGE) };
  const count = expectSchema(await client.get('/passwords/count.json', { headers }), 'count') as Count;
  const ids = new Set<number>();
  for (let page = 1; page <= Math.max(1, count.num_pages); page++) {
    for (const id of itemIds(await client.get(`/passwords/page/${page}.json`, { headers }))) ids.add(id);
  }
  return ids;
}

clauseTest('GEN-08', 'show the Admin a password that a Project manager created, in the list and by id', async () => {
  const pm = await s.user('project manager', { label: 'gen08-project-manager' });
  const project = await s.fixtures.createProject(pm.client);
  const password = await s.fixtures.createPassword(project, {}, pm.client);
  expectStatus(await s.admin.get(`/passwords/${password}.json`), 200);
  if (!(await listedIds(s.admin)).has(password)) {
    violation(await s.admin.get('/passwords.json'), `password ${password} (created by a Project manager) in the Admin's list`, 'absent from every page');
  }
});

clauseTest('GEN-09', 'hide from a new Normal user, Read only user and Project manager a password they were given no access to', async () => {
  const project = await s.fixtures.createProject();
  const password = await s.fixtures.createPassword(project);
  for (const role of ['normal user', 'read only', 'project manager'] as const) {
    const user = await s.user(role, { label: `gen09-${role.replace(/\s+/g, '-')}` });
    if ((await listedIds(user.client)).has(password)) {
      violation(await user.client.get('/passwords.json'), `password ${password} absent from the list of a new ${role}`, 'listed');
    }
    const shown = await user.client.get(`/passwords/${password}.json`);
    expectResponse(shown, `a refusal of password ${password} to a new ${role}`);
    if (shown.response.status >= 200 && shown.response.status < 300) {
      violation(shown, `a refusal of password ${password} to a new ${role}`, `status ${shown.response.status}`);
    }
  }
});
