/**
 * The relations' probe: traffic that reaches every relation of suites/relations/ in one state,
 * beside the other files, its reads for them with the target to itself. The relations themselves judge every answer of the run (through
 * the response oracle); this file makes sure each has answers to hold to each other, and asks
 * the oracle about them at the end.
 */
import type { ApiClient } from '../harness/client.ts';
import { inFlight } from '../harness/config.ts';
import { type EndpointData, fillPath, type IdKind, TABLE, useEndpoints } from '../harness/endpoints.ts';
import { deletePath } from '../harness/fixtures.ts';
import { exclusive } from '../harness/gate.ts';
import { inOrder, together } from '../harness/in-order.ts';
import { useSession } from '../harness/session.ts';
import { afterAll, beforeAll } from '../harness/suite-api.ts';
import { oracleTest } from '../oracle/probe.ts';

// Decision (issue 38: no serial tail): the file runs beside the others. Its relations compare
// answers read in one state, which a write of a file beside it would leave unjudged: its reads for
// them, and the deletes they read after, hold the target to themselves (the gate's exclusive
// section, README.md "What needs the section"); what they need made is made before it opens.

const s = useSession();
const calls = useEndpoints(s);

/** The lists walked at two page sizes: the file's own search lists hold only what it made. */
const WALKED = ['/passwords/search/{search}.json', '/projects/search/{search}.json', '/my_passwords/search/{search}.json'];
const WALK_SIZES = ['5', '1000'];
/** Where a deleted object of each kind must no longer appear. */
const GONE: Array<{ kind: IdKind; list: string; also?: string[]; favorite?: string }> = [
  // Made favorite before the delete: the favorites list must drop it too (one object for both).
  { kind: 'password', list: '/passwords/search/{search}.json', also: ['/passwords.json', '/passwords/favorite.json'], favorite: '/favorite_passwords' },
  { kind: 'project', list: '/projects/search/{search}.json', also: ['/projects/favorite.json'], favorite: '/favorite_projects' },
  { kind: 'my_password', list: '/my_passwords/search/{search}.json' },
  { kind: 'file', list: '/projects/{project}/files.json' },
  { kind: 'user', list: '/users.json' },
  { kind: 'group', list: '/groups.json' },
];

const reads = TABLE.filter((e) => e.method === 'GET' && !e.path.startsWith('/log'));
/**
 * Decision (issue 26's request budget): over HMAC, the reads that hold the run's objects (each
 * list and search with items, each kind's show, a count) and the version endpoints; each costs a
 * Basic look-up (basic-hmac) and a list its count (the oracle). Left out: the archived lists
 * and a list's other pages (the same query with one more condition), security and files of one
 * object, the file settings and download, `users/me` and a user's own lists, the generator
 * (answers differ by design). The relations still judge every HMAC read of the rest of the run.
 */
const HMAC_SKIPPED =
  /\/archived|\/page\/|\/security\.json$|\}\/files\.json$|^\/files\/(max_upload|uploads_folder|download)|^\/users\/(me|\{user\}\/)|^\/generate_password/;
const hmacReads = reads.filter((e) => !HMAC_SKIPPED.test(e.path));

/** What the HMAC user made for itself (the fixtures delete as the run's Admin): deleted after the file. */
const own: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const undo of own.splice(0)) await undo();
});

// The traffic goes out before the tests, which ask the oracle about it: a relation broken
// anywhere in it fails its clause's test below.
beforeAll(async () => {
  const d = await calls.data(reads);
  // Six items in each walked list: two pages at X-Page-Size 5, one at 1000.
  for (const path of WALKED) {
    const e = TABLE.find((x) => x.method === 'GET' && x.path === path);
    if (e) await calls.grow(e, 5);
  }
  const hmac = await s.adminHmac();
  // Decision (issue 38: the section holds the target, so it holds only what needs it): the writes
  // no relation reads around (the renames, the favorites, the HMAC user's own password, the objects
  // to delete) are made before it opens, and answered; so is check_latest by the roles it must be
  // refused to (roles-refused holds on every reply, in any state). The IT user's asks in the section
  // (roles-served judges a refusal only where nothing else may refuse the user: served just before,
  // with no write between).
  const [doomed, it] = await together([
    makeDoomed(d),
    usersByRole().then(async (users) => {
      await checkLatestByRole(users.filter((u) => u.role !== 'it'));
      return users.filter((u) => u.role === 'it');
    }),
    together([
      // The shared project and password renamed: their shows, lists and searches below must agree
      // on the new name (list-show-fields), whatever a search index or a list cache kept.
      d.ids.project !== undefined && s.admin.put(`/projects/${d.ids.project}.json`, { name: d.name('renamed-project') }),
      d.ids.password !== undefined && s.admin.put(`/passwords/${d.ids.password}.json`, { name: d.name('renamed-password') }),
      // A favorite of each kind, so the favorites lists have an item to show over both methods.
      d.ids.password !== undefined && s.admin.post(`/favorite_passwords/${d.ids.password}.json`),
      d.ids.project !== undefined && s.admin.post(`/favorite_projects/${d.ids.project}.json`),
      hmac && d.ids.password !== undefined && hmac.post(`/favorite_passwords/${d.ids.password}.json`),
      hmac && d.ids.project !== undefined && hmac.post(`/favorite_projects/${d.ids.project}.json`),
      hmac && hmacOwn(hmac),
    ]),
  ]);
  await exclusive(async () => {
    // Decision (issue 38: a section lasts as long as its chain): the deletes side by side, then
    // every read of the section side by side (at most --concurrency in flight), all in the state
    // the deletes left: a relation judges a read only with no write in flight or started since
    // the read it is held to, and a delete only with the reads sent after it was answered.
    const gone = await deleteAll(doomed);
    const hmacEach: Array<() => Promise<unknown>> = hmac ? hmacReads.map((e) => () => calls.callEach(hmac, d, {}, [e])) : [];
    // The longest chains first: the IT user's two asks, a walk (its count, then its pages), an
    // HMAC read (and its Basic look-up).
    await inOrder(
      [
        () => checkLatestByRole(it),
        ...walks(d),
        ...hmacEach,
        ...gone.map(
          ({ kind, id, lists }) =>
            () =>
              goneReads(d, kind, id, lists),
        ),
      ],
      inFlight(s.config),
      (read) => read(),
    );
  });
});

/**
 * Personal passwords and favorites belong to their user: the HMAC user gets a personal password,
 * so that its lists have an item to compare with the same lists over Basic.
 */
async function hmacOwn(hmac: ApiClient): Promise<void> {
  const name = s.fixtures.name('hmac-my-password');
  const mine = await hmac.post('/my_passwords.json', { name, username: 'pmv6' });
  const id = (mine.json as { id?: unknown } | undefined)?.id;
  // Written to only once read back showing the run's name (the ledger); deleted by its owner.
  if ((typeof id === 'number' || typeof id === 'string') && (await s.fixtures.track('my_password', id, name, { creation: mine, reader: hmac }))) {
    own.push(async () => {
      const del = await hmac.delete(`/my_passwords/${id}.json`);
      const status = del.response?.status ?? 0;
      if (status >= 200 && status < 300) s.fixtures.forget('my_password', id);
    });
  }
}

/** A user of each role but Admin (checkLatestByRole), made before the section that asks. */
async function usersByRole(): Promise<Array<{ role: string; client: ApiClient }>> {
  if (!s.control || s.config.readOnly) return [];
  const roles = ['it', 'project manager', 'normal user', 'read only'] as const;
  return Promise.all(roles.map(async (role) => ({ role, client: (await s.user(role, { label: `roles-${role.replace(/\s+/g, '-')}` })).hmacClient })));
}

/**
 * GET check_latest over HMAC by a user of each role but Admin: "only IT or Admin users may call
 * it" holds on every reply (roles-refused, roles-served); the version suite asks over Basic.
 */
async function checkLatestByRole(users: ReadonlyArray<{ role: string; client: ApiClient }>): Promise<void> {
  await Promise.all(
    users.map(async ({ role, client }) => {
      // An IT user served version.json just before: with no write between, nothing but its role decides check_latest.
      if (role === 'it') await client.get('/version.json');
      await client.get('/version/check_latest.json');
    }),
  );
}

/**
 * Each walked list at each page size: its count, then the pages the count gives side by side
 * (nothing writes while the section reads), then on along rel="next" one at a time up to page 4
 * (a walk that loops goes on past what the count says).
 */
function walks(d: EndpointData): Array<() => Promise<void>> {
  return WALKED.flatMap((path) =>
    WALK_SIZES.map((size) => async () => {
      const headers = { 'X-Page-Size': size };
      const base = fillPath(path, d).replace(/\.json$/, '');
      const page = (n: number) => s.admin.get(n === 1 ? `${base}.json` : `${base}/page/${n}.json`, { headers });
      const count = await s.admin.get(`${base}/count.json`, { headers });
      const items = (count.json as { num_items?: unknown } | undefined)?.num_items;
      const first = Math.min(4, Math.max(1, typeof items === 'number' ? Math.ceil(items / Number(size)) : 1));
      let last = (await Promise.all(Array.from({ length: first }, (_, i) => page(i + 1)))).at(-1);
      for (let n = first + 1; n <= 4; n++) {
        if (last?.response?.status !== 200 || !String(last.response.headers.link ?? '').includes('rel="next"')) break;
        last = await page(n);
      }
    }),
  );
}

/**
 * One fresh object of each kind (`GONE`), made for deleteAll, the password and the project made
 * favorite (the favorites lists must drop them once deleted): its id, or undefined.
 */
function makeDoomed(d: EndpointData): Promise<Array<number | undefined>> {
  return inOrder(GONE, inFlight(s.config), async ({ kind, favorite }) => {
    const id = await calls.make(kind, { ...d, ids: { ...d.ids } });
    if (favorite && id !== undefined) await s.admin.post(`${favorite}/${id}.json`);
    return id;
  });
}

/** The fresh objects deleted side by side: those whose delete succeeded, with where to look for them. */
async function deleteAll(doomed: ReadonlyArray<number | undefined>): Promise<Array<{ kind: IdKind; id: number; lists: string[] }>> {
  const deleted = await together(
    GONE.map(async ({ kind, list, also }, i) => {
      const id = doomed[i];
      if (id === undefined) return undefined;
      const del = await s.admin.delete(deletePath(kind, id), kind === 'password' ? { headers: { 'X-Unlock-Reason': 'pmv6 conformance run' } } : {});
      const status = del.response?.status ?? 0;
      if (status < 200 || status >= 300) return undefined;
      s.fixtures.forget(kind, id);
      return { kind, id, lists: [list, ...(also ?? [])] };
    }),
  );
  return deleted.filter((x) => x !== undefined);
}

/** A deleted object looked for: its show and its lists, side by side (none of them writes). */
async function goneReads(d: EndpointData, kind: IdKind, id: number, lists: readonly string[]): Promise<void> {
  await Promise.all([s.admin.get(`/${kind}s/${id}.json`), ...lists.map((path) => s.admin.get(fillPath(path, d), { headers: { 'X-Page-Size': '1000' } }))]);
}

oracleTest(
  [
    'GEN-03',
    'GEN-16',
    'SIZE-03',
    'SIZE-10',
    'PAG-08',
    'EP-03',
    'OPS-01',
    'OPS-02',
    'OPS-03',
    'OPS-04',
    'OPS-05',
    'OPS-06',
    'OPS-07',
    'RES-17',
    'VER-06',
    'VER-07',
  ],
  'the relations over the answers of this file (over HMAC and Basic, at two page sizes, after deletes, lists beside shows, by every role)',
);
