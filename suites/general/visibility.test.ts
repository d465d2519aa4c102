import { expectResponse, expectSchema, expectStatus, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import type { ApiClient } from '../harness/client.ts';
import { inFlight } from '../harness/config.ts';
import { ahead } from '../harness/in-order.ts';
import { type Count, itemIds } from '../harness/pages.ts';
import { useSession } from '../harness/session.ts';
import { runsAlone } from '../harness/suite-api.ts';

runsAlone("it holds the Admin's lists to their counts");
const s = useSession();
const PAGE = 1000;

/** Every password id the client's list shows, page by page. */
async function listedIds(client: ApiClient): Promise<Set<string>> {
  const headers = { 'X-Page-Size': String(PAGE) };
  const count = expectSchema(await client.get('/passwords/count.json', { headers }), 'count') as Count;
  const ids = new Set<string>();
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
  if (!(await listedIds(s.admin)).has(String(password))) {
    violation(await s.admin.get('/passwords.json'), `password ${password} (created by a Project manager) in the Admin's list`, 'absent from every page');
  }
});

clauseTest('GEN-09', 'hide from a new Normal user, Read only user and Project manager a password they were given no access to', async () => {
  const project = await s.fixtures.createProject();
  const password = await s.fixtures.createPassword(project);
  for (const role of ['normal user', 'read only', 'project manager'] as const) {
    const user = await s.user(role, { label: `gen09-${role.replace(/\s+/g, '-')}` });
    if ((await listedIds(user.client)).has(String(password))) {
      violation(await user.client.get('/passwords.json'), `password ${password} absent from the list of a new ${role}`, 'listed');
    }
    const shown = await user.client.get(`/passwords/${password}.json`);
    expectResponse(shown, `a refusal of password ${password} to a new ${role}`);
    if (shown.response.status >= 200 && shown.response.status < 300) {
      violation(shown, `a refusal of password ${password} to a new ${role}`, `status ${shown.response.status}`);
    }
  }
});

/**
 * Every id a paginated list shows the client (pages of 1000), or undefined when the list is
 * refused. The list's count.json for the same user must agree with what the list shows (SIZE-10):
 * a count of everything for a user who sees less breaks §4 rule 8 as much as a leak breaks §1.
 */
async function idsOfList(client: ApiClient, base: string): Promise<Set<string> | undefined> {
  const headers = { 'X-Page-Size': String(PAGE) };
  const first = await client.get(`${base}.json`, { headers });
  if (first.response?.status !== 200 || !Array.isArray(first.json)) return undefined;
  const ids = new Set(itemIds(first));
  const countEx = await client.get(`${base}/count.json`, { headers });
  const count = countEx.response?.status === 200 ? (countEx.json as Partial<Count>) : undefined;
  const pages = count?.num_pages ?? 1;
  for (let page = 2; page <= pages; page++) for (const id of itemIds(await client.get(`${base}/page/${page}.json`, { headers }))) ids.add(id);
  if (typeof count?.num_items === 'number' && count.num_items !== ids.size) {
    violation(countEx, `num_items ${ids.size}: the items ${base}.json shows this user`, `num_items ${count.num_items}`);
  }
  return ids;
}

// Every list of passwords or projects (the product's lists, product facts §6), not only
// /passwords.json: an Admin's project and password, live and archived, found by their search
// text too, stay out of every list of users who were given no access.
clauseTest(
  ['GEN-09', 'SIZE-10'],
  "hide an Admin's projects and passwords, live and archived, from every list, count and show of a new Normal user, Read only user and Project manager",
  async (t) => {
    const tag = s.fixtures.name('gen09-every-list');
    const project = await s.fixtures.createProject(s.admin, { name: `${tag}-project` });
    const password = await s.fixtures.createPassword(project, { name: `${tag}-password` });
    const archivedProject = await s.fixtures.createProject(s.admin, { name: `${tag}-archived-project` });
    const archivedPassword = await s.fixtures.createPassword(archivedProject, { name: `${tag}-archived-password` });
    expectStatus(await s.admin.put(`/passwords/${archivedPassword}/archive.json`), 204);
    expectStatus(await s.admin.put(`/projects/${archivedProject}/archive.json`), 204);
    const search = encodeURIComponent(tag);
    const lists: Array<[string, number[]]> = [
      ['/projects', [project, archivedProject]],
      ['/projects/archived', [archivedProject]],
      [`/projects/search/${search}`, [project, archivedProject]],
      ['/passwords', [password, archivedPassword]],
      ['/passwords/archived', [archivedPassword]],
      [`/passwords/search/${search}`, [password, archivedPassword]],
      [`/projects/${project}/passwords`, [password]],
    ];
    // Reads change nothing (and the file runs alone): side by side, judged in order.
    const adminIds = new Map<string, Set<string> | undefined>();
    for await (const [[base], ids] of ahead(lists, inFlight(s.config), ([base]) => idsOfList(s.admin, base))) adminIds.set(base, ids);
    // Each id is judged in the lists where the Admin sees it: elsewhere its absence proves nothing.
    const judged: Array<[string, number[]]> = [];
    for (const [base, hidden] of lists) {
      const seen = hidden.filter((id) => adminIds.get(base)?.has(String(id)));
      if (seen.length > 0) judged.push([base, seen]);
    }
    t.observe(
      'lists judged',
      judged.map(([base]) => base),
    );
    if (judged.length === 0) t.unverifiable('the Admin saw the objects in none of the lists');
    const roles = ['normal user', 'read only', 'project manager'] as const;
    const seenBy = await Promise.all(
      roles.map(async (role) => {
        const user = await s.user(role, { label: `gen09-lists-${role.replace(/\s+/g, '-')}` });
        const ids = await Promise.all(judged.map(([base]) => idsOfList(user.client, base).catch((e: unknown) => e as Error)));
        return { user, ids, shown: await user.client.get(`/projects/${project}.json`) };
      }),
    );
    for (const [r, role] of roles.entries()) {
      const { user, shown } = seenBy[r]!;
      for (const [j, [base, hidden]] of judged.entries()) {
        const ids = seenBy[r]!.ids[j];
        if (ids instanceof Error) throw ids;
        const leaked = hidden.filter((id) => ids?.has(String(id)));
        if (leaked.length > 0)
          violation(
            await user.client.get(`${base}.json`, { headers: { 'X-Page-Size': String(PAGE) } }),
            `ids ${hidden.join(', ')} absent from ${base}.json for a new ${role}`,
            `ids ${leaked.join(', ')} listed`,
          );
      }
      // By id too: the project (the product's path; a 404 is a refusal as good as a 403).
      if (shown.response && shown.response.status >= 200 && shown.response.status < 300)
        violation(shown, `a refusal of project ${project} to a new ${role}`, `status ${shown.response.status}`);
    }
  },
);
