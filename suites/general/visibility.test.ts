import type { Exchange } from '../../core/exchange.ts';
import { expectResponse, expectStatus, precondition, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import type { ApiClient } from '../harness/client.ts';
import { inFlight } from '../harness/config.ts';
import { activeGate, exclusive } from '../harness/gate.ts';
import { ahead, together } from '../harness/in-order.ts';
import { type Count, itemIds, sameItems } from '../harness/pages.ts';
import { useSession } from '../harness/session.ts';
import { holdsBetweenCounts } from '../oracle/lists.ts';
import { WHOLE_PAGES } from '../resources/resource-helpers.ts';

// Decision: beside other files. Their writes and other users' move the Admin's lists while they
// are read: a count is held to its pages, and a password to the Admin's list, only when it holds
// again on a second read with the target to itself (the gate's exclusive section: no write of the
// run in flight) between two equal counts and two equal readings of the list (other users).
const s = useSession();
const PAGE = 1000;

/** How many times a list is read again while its count moves (other users write to it) before its count is not judged. */
const TRIES = 3;
const headers = { 'X-Page-Size': String(PAGE) };

interface Listed {
  /** The ids on the pages read. */
  ids: Set<string>;
  /** Whether every page was read. */
  whole: boolean;
}

/** The ids of the list's pages (pages of PAGE): every page of a list up to WHOLE_PAGES pages, else the first and the last (`listIds`). */
async function pagesOf(client: ApiClient, base: string, first: Exchange, count: Partial<Count> | undefined): Promise<Listed> {
  const ids = new Set(itemIds(first));
  const pages = count?.num_pages ?? 1;
  const rest = pages > WHOLE_PAGES ? [pages] : Array.from({ length: Math.max(0, pages - 1) }, (_, i) => i + 2);
  // The pages side by side: reads change nothing, and a list that moves meanwhile is read again (idsOfList).
  for (const ex of await together(rest.map((page) => client.get(`${base}/page/${page}.json`, { headers })))) for (const id of itemIds(ex)) ids.add(id);
  return { ids, whole: pages <= WHOLE_PAGES };
}

const countOf = async (client: ApiClient, base: string) => {
  const ex = await client.get(`${base}/count.json`, { headers });
  return { ex, count: ex.response?.status === 200 ? (ex.json as Partial<Count>) : undefined };
};

clauseTest('GEN-08', 'show the Admin a password that a Project manager created, in the list and by id', async (t) => {
  const pm = await s.user('project manager', { label: 'gen08-project-manager' });
  const project = await s.fixtures.createProject(pm.client);
  const password = await s.fixtures.createPassword(project, {}, pm.client);
  expectStatus(await s.admin.get(`/passwords/${password}.json`), 200);
  const [first, { count }] = await together([s.admin.get('/passwords.json', { headers }), countOf(s.admin, '/passwords')]);
  const { ids, whole } = await pagesOf(s.admin, '/passwords', first, count);
  if (ids.has(String(password))) return;
  if (!whole)
    t.unverifiable(`password ${password} is on neither the first nor the last of the Admin's ${count?.num_pages} pages of passwords (the order is not shown)`);
  // Pages read one after another of a list others write to: an item can move from a page not yet
  // read to one already read. The finding stands when a second read misses it too, between two
  // equal counts, with the target to itself (files beside this one create and delete).
  const stands = await exclusive(() =>
    holdsBetweenCounts(
      async () => (await countOf(s.admin, '/passwords')).count?.num_items,
      async () => {
        const [again, { count }] = await together([s.admin.get('/passwords.json', { headers }), countOf(s.admin, '/passwords')]);
        const listed = await pagesOf(s.admin, '/passwords', again, count);
        return listed.whole && !listed.ids.has(String(password));
      },
    ),
  );
  if (!stands) {
    t.observe("the Admin's list", `password ${password} missing from one read, found or not judged on a second (the list moved)`);
    return;
  }
  violation(first, `password ${password} (created by a Project manager) in the Admin's list`, 'absent from every page');
});

clauseTest('GEN-09', 'hide from a new Normal user, Read only user and Project manager a password they were given no access to', async () => {
  const project = await s.fixtures.createProject();
  const password = await s.fixtures.createPassword(project);
  const roles = ['normal user', 'read only', 'project manager'] as const;
  // The three users are made and read side by side (reads change nothing); judged in this order.
  const seen = await Promise.all(
    roles.map(async (role) => {
      const user = await s.user(role, { label: `gen09-${role.replace(/\s+/g, '-')}` });
      const [first, { count }, shown] = await together([
        user.client.get('/passwords.json', { headers }),
        countOf(user.client, '/passwords'),
        user.client.get(`/passwords/${password}.json`),
      ]);
      const listed = (await pagesOf(user.client, '/passwords', first, count)).ids.has(String(password));
      return { user, listed, shown };
    }),
  );
  for (const [r, role] of roles.entries()) {
    const { user, listed, shown } = seen[r]!;
    if (listed) violation(await user.client.get('/passwords.json'), `password ${password} absent from the list of a new ${role}`, 'listed');
    expectResponse(shown, `a refusal of password ${password} to a new ${role}`);
    if (shown.response.status >= 200 && shown.response.status < 300) {
      violation(shown, `a refusal of password ${password} to a new ${role}`, `status ${shown.response.status}`);
    }
  }
});

/**
 * The ids a paginated list shows the client (pages of 1000; `pagesOf`), or undefined when the
 * list is refused. The list's count.json for the same user must agree with what the list shows
 * (SIZE-10): a count of everything for a user who sees less breaks §4 rule 8 as much as a leak
 * breaks §1. Decision: other users of the installation may write to the list while it is read
 * (the Admin's lists), so the count is held to the pages only by the rule of `holdsBetweenCounts`
 * (between two equal counts, a second reading shows the same items); a list that moved is read
 * again, at most TRIES times, and then its count is not judged (`moving`).
 */
async function idsOfList(client: ApiClient, base: string, moving: Set<string>, attempt = 1): Promise<Listed | undefined> {
  for (; ; attempt++) {
    // The count and the first page side by side: a list that moves between them is read again below.
    const [before, first] = await together([countOf(client, base), client.get(`${base}.json`, { headers })]);
    if (first.response?.status !== 200 || !Array.isArray(first.json)) return undefined;
    const listed = await pagesOf(client, base, first, before.count);
    const n = before.count?.num_items;
    if (!listed.whole || typeof n !== 'number' || n === listed.ids.size) return listed;
    // Files beside this one write to the Admin's lists (a create and a delete leave the count as
    // it was): the list is read again with the target to itself, where only other users of the
    // installation can move it.
    if (!activeGate()?.holding() && activeGate() !== undefined) return exclusive(() => idsOfList(client, base, moving, attempt + 1));
    // Other users may create and delete between two counts that agree: the finding stands by
    // the rule of `holdsBetweenCounts` (suites/oracle/lists.ts), the second reading compared
    // with the first (the same items, `sameItems`).
    const again = await holdsBetweenCounts(
      async () => (await countOf(client, base)).count?.num_items,
      {
        read: async () => pagesOf(client, base, await client.get(`${base}.json`, { headers }), before.count),
        finding: (l) => (l.whole && l.ids.size !== n ? l : undefined),
        same: (a, b) => sameItems([...a.ids], [...b.ids]),
        first: listed,
      },
      { expected: n },
    );
    if (again.finding) violation(before.ex, `num_items ${listed.ids.size}: the items ${base}.json shows this user`, `num_items ${n}`);
    if (attempt >= TRIES) {
      moving.add(base);
      return listed;
    }
  }
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
    // Archiving is the product's path (a precondition here): any success will do, 204 or content.
    for (const path of [`/passwords/${archivedPassword}/archive.json`, `/projects/${archivedProject}/archive.json`]) {
      const ex = await s.admin.put(path);
      const status = ex.response?.status;
      if (status === undefined || status < 200 || status > 299) precondition(`PUT ${path} (the product's path to archive) answered ${status ?? ex.error}`);
    }
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
    // The Admin's lists read side by side, judged in order.
    const moving = new Set<string>();
    const adminIds = new Map<string, Listed | undefined>();
    for await (const [[base], ids] of ahead(lists, inFlight(s.config), ([base]) => idsOfList(s.admin, base, moving))) adminIds.set(base, ids);
    // Each id is held hidden in every list (a listed id is a leak wherever it is listed); the
    // lists where the Admin was seen to list it are the ones where its absence shows something.
    const seenByAdmin = lists.filter(([base, hidden]) => hidden.some((id) => adminIds.get(base)?.ids.has(String(id)))).map(([base]) => base);
    t.observe('lists where the Admin saw the objects', seenByAdmin);
    if (seenByAdmin.length === 0) t.unverifiable('the Admin saw the objects in none of the lists');
    const judged = lists.filter(([base]) => adminIds.get(base) !== undefined);
    const roles = ['normal user', 'read only', 'project manager'] as const;
    const seenBy = await Promise.all(
      roles.map(async (role) => {
        const user = await s.user(role, { label: `gen09-lists-${role.replace(/\s+/g, '-')}` });
        const ids = await Promise.all(judged.map(([base]) => idsOfList(user.client, base, moving).catch((e: unknown) => e as Error)));
        return { user, ids, shown: await user.client.get(`/projects/${project}.json`) };
      }),
    );
    if (moving.size > 0) t.observe(`counts not judged: the list moved while read ${TRIES} times (other users write to it)`, [...moving]);
    for (const [r, role] of roles.entries()) {
      const { user, shown } = seenBy[r]!;
      for (const [j, [base, hidden]] of judged.entries()) {
        const ids = seenBy[r]!.ids[j];
        if (ids instanceof Error) throw ids;
        const leaked = hidden.filter((id) => ids?.ids.has(String(id)));
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
