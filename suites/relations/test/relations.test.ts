import { describe, expect, test } from 'vitest';
import type { Exchange } from '../../../core/exchange.ts';
import type { ApiClient, ApiRequest, Auth } from '../../harness/client.ts';
import type { RunConfig } from '../../harness/config.ts';
import type { Settings } from '../../harness/control.ts';
import { type Observed, requestStarting, type WriteMark, writeMark } from '../../harness/traffic.ts';
import { disagreement, isJsonMediaType, itemKind, itemsDiffer, RELATIONS, Relations } from '../relations.ts';

const TARGET = 'https://pm.test/base';
const API = `${TARGET}/index.php/api/v6`;
const config: RunConfig = {
  target: TARGET,
  user: 'admin',
  password: 'pw',
  hmac: { publicKey: 'pub', privateKey: 'priv' },
  runId: 'abc',
  seed: 1,
  readOnly: false,
  timeoutMs: 1000,
};
const basic: Auth = { kind: 'basic', user: 'admin', password: 'pw' };
const hmac: Auth = { kind: 'hmac', publicKey: 'pub', privateKey: 'priv' };
const BOTH: Settings = {
  api_enabled: true,
  maintenance_mode: false,
  auth_methods: 'basic+hmac',
  api_users: 'all',
  hmac_key_expiry_days: null,
  num_items_lists: 20,
} as Settings;

function exchange(
  method: string,
  path: string,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  requestHeaders: Record<string, string> = {},
): Exchange {
  const text = body === undefined ? '' : JSON.stringify(body);
  return {
    request: { method, url: path.startsWith('http') ? path : `${API}${path}`, headers: requestHeaders },
    response: { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers }, body: text, validUtf8: true },
    ...(body === undefined ? {} : { json: body }),
    durationMs: 0,
  };
}

/**
 * A client whose look-ups answer `answer(req, auth)` (auth: the one `withAuth` gave, undefined for
 * the observed request's own), and which records what it was asked. A list's count.json answers
 * `count` items unless `answer` handles it.
 */
function fakeClient(
  answer: (req: ApiRequest, auth?: Auth) => Exchange | undefined = (req) => exchange('GET', req.url ?? req.path, 200, []),
  asked: ApiRequest[] = [],
  count = 3,
): ApiClient {
  const make = (auth?: Auth): ApiClient => {
    const client = {
      withAuth: (a: Auth) => make(a),
      async request(req: ApiRequest): Promise<Exchange> {
        asked.push(req);
        return answer(req, auth) ?? exchange('GET', req.url ?? req.path, 200, { num_items: count, num_pages: 1, num_items_per_page: 20 });
      },
    };
    return client as unknown as ApiClient;
  };
  return make();
}

/** A list as a server holds it: count.json and its pages at each page size (the walks' re-reads). */
function listClient(ids: number[], asked: ApiRequest[] = []): ApiClient {
  return fakeClient((req) => {
    const url = req.url ?? req.path;
    if (url.endsWith('/count.json')) return exchange('GET', url, 200, { num_items: ids.length, num_pages: 1, num_items_per_page: 5 });
    const per = Number(req.headers?.['X-Page-Size'] ?? 20);
    const n = Number(/\/page\/(\d+)\.json$/.exec(url)?.[1] ?? 1);
    const slice = ids.slice((n - 1) * per, n * per);
    return exchange('GET', url, 200, items(...slice), link('self', ...(n * per < ids.length ? ['next'] : [])));
  }, asked);
}

const items = (...ids: number[]) => ids.map((id) => ({ id, name: `n${id}` }));
const link = (...rels: string[]) => ({ link: rels.map((r) => `<${API}/x.json>; rel="${r}"`).join(', ') });

async function judge(
  steps: Array<{ ex: Exchange; auth?: Auth; mark?: WriteMark; quiet?: boolean }>,
  client = fakeClient(),
  settings: Settings | undefined = BOTH,
): Promise<string[]> {
  const relations = new Relations(config, () => settings);
  const found: string[] = [];
  for (const s of steps) {
    const path = new URL(s.ex.request.url).pathname.replace(/^.*\/index\.php\/api\/v6/, '');
    const o: Observed = { exchange: s.ex, channel: 'api', auth: s.auth ?? basic, client, quiet: s.quiet ?? false, mark: s.mark ?? writeMark() };
    await relations.observe(o, path, (clause) => found.push(clause));
  }
  return found;
}

describe('helpers', () => {
  test('itemKind reads the kind of item a list holds from its template', () => {
    expect(itemKind('/projects/{project}/passwords.json')).toBe('password');
    expect(itemKind('/projects/search/{search}.json')).toBe('project');
    expect(itemKind('/passwords/favorite.json')).toBe('password');
    expect(itemKind('/favorite_projects.json')).toBe('project');
    expect(itemKind('/my_passwords/search/{search}.json')).toBe('my_password');
    expect(itemKind('/log.json')).toBeUndefined();
  });

  test('a JSON media type is application/json or a +json type', () => {
    expect(isJsonMediaType('application/json; charset=utf-8')).toBe(true);
    expect(isJsonMediaType('application/problem+json')).toBe(true);
    expect(isJsonMediaType('text/html; charset=utf-8')).toBe(false);
    expect(isJsonMediaType('text/plain')).toBe(false);
  });

  test('lists agree as sets of ids, string or integer alike, in any order', () => {
    expect(disagreement([{ id: 1 }, { id: 2 }], [{ id: '2' }, { id: '1' }])).toBeUndefined();
    expect(disagreement([{ id: 1 }, { id: 2 }], [{ id: 1 }])).toMatch(/2/);
    expect(itemsDiffer(['1', '2', '2'], ['1', '2', '3'])).toMatch(/2.*first.*3.*second/);
  });

  test('objects agree on the fields both hold, less those a read may change', () => {
    expect(disagreement({ id: 1, name: 'a', extra: 1 }, { id: 1, name: 'a' })).toBeUndefined();
    expect(disagreement({ id: 1, name: 'a', last_viewed_on: 'x', num_views: 1 }, { id: 1, name: 'a', last_viewed_on: 'y', num_views: 2 })).toBeUndefined();
    expect(disagreement({ id: 1, name: 'a' }, { id: 1, name: 'b' })).toMatch(/name/);
  });
});

describe('framing-bom, framing-media-type', () => {
  test('a body that began with a byte order mark fails GEN-03', async () => {
    const ex = exchange('GET', '/version.json', 200, { version: '1' });
    ex.response!.bom = true;
    expect(await judge([{ ex }])).toEqual([RELATIONS['framing-bom']]);
  });

  test('a JSON body labelled text/html fails GEN-03, error bodies included; a JSON label or none does not', async () => {
    const html = exchange('GET', '/nope.json', 404, { error: true, type: 'Not Found', message: 'x' }, { 'content-type': 'text/html; charset=utf-8' });
    expect(await judge([{ ex: html }])).toEqual(['GEN-03']);
    const problem = exchange('GET', '/nope.json', 404, { error: true }, { 'content-type': 'application/problem+json' });
    const none = exchange('GET', '/nope.json', 404, { error: true });
    delete none.response!.headers['content-type'];
    const empty = exchange('DELETE', '/passwords/1.json', 204, undefined, { 'content-type': 'text/html' });
    expect(await judge([{ ex: problem }, { ex: none }, { ex: empty }])).toEqual([]);
  });
});

describe('basic-hmac', () => {
  const hmacPage = (json: unknown, status = 200) => exchange('GET', '/passwords.json', status, json, {}, { 'X-Page-Size': '5' });

  /** Over Basic `basic`, over HMAC (the observed client's own re-read) `hmacAgain`; counts answered by the fake. */
  const byAuth = (basicAnswer: (url: string) => Exchange, hmacAgain: (url: string) => Exchange) => (req: ApiRequest, auth?: Auth) =>
    (req.url ?? '').endsWith('/count.json') ? undefined : auth?.kind === 'basic' ? basicAnswer(req.url!) : hmacAgain(req.url!);

  test('an HMAC answer that differs from the same request over Basic fails GEN-16; the look-up keeps X-Page-Size', async () => {
    const asked: ApiRequest[] = [];
    const client = fakeClient(
      byAuth(
        (url) => exchange('GET', url, 200, items(1, 2, 3)),
        (url) => exchange('GET', url, 200, items(1, 2)),
      ),
      asked,
    );
    expect(await judge([{ ex: hmacPage(items(1, 2)), auth: hmac }], client)).toEqual(['GEN-16']);
    // The Basic look-up; then, to tell a busy list from a fault, the count, both again, both a
    // second time (the same answers), the count.
    expect(asked.map((r) => r.url?.replace(API, ''))).toEqual([
      '/passwords.json',
      '/passwords/count.json',
      '/passwords.json',
      '/passwords.json',
      '/passwords.json',
      '/passwords.json',
      '/passwords/count.json',
    ]);
    for (const r of asked) expect(r.headers).toEqual({ 'X-Page-Size': '5' });
    for (const r of asked) expect(r.quiet).toBe(true);
  });

  test("a difference that another user's write explains (the re-reads agree) is no finding", async () => {
    const client = fakeClient(
      byAuth(
        (url) => exchange('GET', url, 200, items(1, 2, 3)),
        (url) => exchange('GET', url, 200, items(1, 2, 3)),
      ),
    );
    expect(await judge([{ ex: hmacPage(items(1, 2)), auth: hmac }], client)).toEqual([]);
    // …nor one whose list moved again between the counts around the re-reads.
    let n = 0;
    const moving = fakeClient((req, auth) =>
      (req.url ?? '').endsWith('/count.json')
        ? exchange('GET', req.url!, 200, { num_items: ++n, num_pages: 1, num_items_per_page: 5 })
        : byAuth(
            (url) => exchange('GET', url, 200, items(1, 2, 3)),
            (url) => exchange('GET', url, 200, items(1, 2)),
          )(req, auth),
    );
    expect(await judge([{ ex: hmacPage(items(1, 2)), auth: hmac }], moving)).toEqual([]);
    // …nor one whose list moved and came back between two equal counts: the second reading differs.
    let reads = 0;
    const back = fakeClient(
      byAuth(
        (url) => exchange('GET', url, 200, items(1, 2, 3)),
        (url) => exchange('GET', url, 200, ++reads === 2 ? items(1, 2) : items(1, 2, 4)),
      ),
    );
    expect(await judge([{ ex: hmacPage(items(1, 2)), auth: hmac }], back)).toEqual([]);
  });

  test('a status that differs fails GEN-16; the same answer, in another order, passes', async () => {
    const client404 = fakeClient(
      byAuth(
        (url) => exchange('GET', url, 404, { error: true }),
        (url) => exchange('GET', url, 200, items(1)),
      ),
    );
    expect(await judge([{ ex: hmacPage(items(1)), auth: hmac }], client404)).toEqual(['GEN-16']);
    const same = fakeClient((req) => exchange('GET', req.url!, 200, items(2, 1)));
    expect(await judge([{ ex: hmacPage(items(1, 2)), auth: hmac }], same)).toEqual([]);
  });

  test('looks up once per key, URL and page size; never for unknown keys, deliberate requests, the log or the generator', async () => {
    const asked: ApiRequest[] = [];
    const client = fakeClient((req) => exchange('GET', req.url!, 200, items(1)), asked);
    const unknown: Auth = { kind: 'hmac', publicKey: 'other', privateKey: 'k' };
    const old: Auth = { ...hmac, timestamp: 1 };
    await judge(
      [
        { ex: hmacPage(items(1)), auth: hmac },
        { ex: hmacPage(items(1)), auth: hmac },
        { ex: hmacPage(items(1)), auth: unknown },
        { ex: hmacPage(items(1)), auth: old },
        { ex: exchange('GET', '/log.json', 200, items(1)), auth: hmac },
        { ex: exchange('GET', '/generate_password.json', 200, { password: 'x' }), auth: hmac },
        { ex: exchange('GET', '/passwords.json', 200, items(1), {}, { 'X-Pmv6-Probe': '1' }), auth: hmac },
        { ex: hmacPage(items(1)), auth: hmac, quiet: true },
      ],
      client,
    );
    expect(asked).toHaveLength(1);
  });

  test('learns the Basic credentials of keys the control protocol hands out', async () => {
    const asked: ApiRequest[] = [];
    const relations = new Relations(config, () => BOTH);
    const created: Exchange = {
      request: { method: 'POST', url: `${TARGET}/__control/users`, headers: {}, body: JSON.stringify({ username: 'bob', password: 'secret', role: 'it' }) },
      response: { status: 201, headers: {}, body: '' },
      json: { id: 7, username: 'bob', public_key: 'bobpub', private_key: 'bobpriv' },
      durationMs: 0,
    };
    relations.learn(created);
    const rekeyed: Exchange = {
      ...created,
      request: { ...created.request, url: `${TARGET}/__control/users/7/api_keys`, body: '{}' },
      json: { public_key: 'bobpub2', private_key: 'x' },
    };
    relations.learn(rekeyed);
    const client = fakeClient((req) => exchange('GET', req.url!, 200, items(1)), asked);
    let withAuth: Auth | undefined;
    (client as unknown as { withAuth: (a: Auth) => ApiClient }).withAuth = (a) => {
      withAuth = a;
      return client;
    };
    const o: Observed = {
      exchange: hmacPage(items(1)),
      channel: 'api',
      auth: { kind: 'hmac', publicKey: 'bobpub2', privateKey: 'x' },
      client,
      quiet: false,
      mark: writeMark(),
    };
    await relations.observe(o, '/passwords.json', () => {});
    expect(withAuth).toEqual({ kind: 'basic', user: 'bob', password: 'secret' });
  });

  test('judges nothing where a write overlapped, or while only one method is enabled', async () => {
    const client = fakeClient((req) => exchange('GET', req.url!, 200, items(9)));
    const mark = writeMark();
    const end = requestStarting('POST');
    end();
    expect(await judge([{ ex: hmacPage(items(1)), auth: hmac, mark }], client)).toEqual([]);
    expect(await judge([{ ex: hmacPage(items(1)), auth: hmac }], client, { ...BOTH, auth_methods: 'hmac' })).toEqual([]);
  });
});

describe('walks-agree, walk-count', () => {
  const page = (n: number, ids: number[], size: string, rels: string[]) =>
    exchange('GET', n === 1 ? '/projects/search/x.json' : `/projects/search/x/page/${n}.json`, 200, items(...ids), link(...rels), { 'X-Page-Size': size });

  test('two whole walks at different page sizes with different items fail SIZE-03, when walking again shows it too', async () => {
    const mark = writeMark();
    const steps = [
      { ex: page(1, [1, 2, 3, 4, 5], '5', ['self', 'next', 'last']), mark },
      { ex: page(2, [5], '5', ['self', 'prev', 'first', 'last']), mark },
      { ex: page(1, [1, 2, 3, 4, 5, 6], '1000', ['self']), mark },
    ];
    // The server repeats item 5 at size 5 whenever asked: a fault.
    const repeating = fakeClient((req) => {
      const url = req.url ?? req.path;
      if (url.endsWith('/count.json')) return undefined;
      const per = req.headers?.['X-Page-Size'];
      if (per === '1000') return exchange('GET', url, 200, items(1, 2, 3, 4, 5, 6), link('self'));
      return /\/page\/2\.json$/.test(url)
        ? exchange('GET', url, 200, items(5), link('self'))
        : exchange('GET', url, 200, items(1, 2, 3, 4, 5), link('self', 'next'));
    });
    expect(await judge(steps, repeating)).toEqual([RELATIONS['walks-agree']]);
    // Walked again, both sizes agree: another user's write came between the first walks.
    expect(await judge(steps, listClient([1, 2, 3, 4, 5, 6]))).toEqual([]);
  });

  test('the same items at both sizes pass; a count that disagrees with a whole walk fails SIZE-10', async () => {
    const mark = writeMark();
    const agree = await judge([
      { ex: page(1, [1, 2, 3, 4, 5], '5', ['self', 'next', 'last']), mark },
      { ex: page(2, [6], '5', ['self', 'prev', 'first', 'last']), mark },
      { ex: page(1, [6, 5, 4, 3, 2, 1], '1000', ['self']), mark },
    ]);
    expect(agree).toEqual([]);
    const count = exchange('GET', '/projects/search/x/count.json', 200, { num_items: 7, num_pages: 2, num_items_per_page: 5 }, {}, { 'X-Page-Size': '5' });
    const steps = [
      { ex: count, mark },
      { ex: page(1, [1, 2, 3, 4, 5, 6], '1000', ['self']), mark },
    ];
    // count.json says one more than its list holds, whenever asked: a fault.
    const countsOneMore = fakeClient((req) => {
      const url = req.url ?? req.path;
      if (url.endsWith('/count.json')) return exchange('GET', url, 200, { num_items: 7, num_pages: 1, num_items_per_page: 1000 });
      return exchange('GET', url, 200, items(1, 2, 3, 4, 5, 6), link('self'));
    });
    expect(await judge(steps, countsOneMore)).toEqual([RELATIONS['walk-count']]);
    // Walked again between two counts, walk and count agree: the list moved under the first reads.
    expect(await judge(steps, listClient([1, 2, 3, 4, 5, 6]))).toEqual([]);
  });

  test('walks read across a write, ending on a full page, or of the log are not compared', async () => {
    const before = writeMark();
    requestStarting('PUT')();
    const after = writeMark();
    expect(
      await judge([
        { ex: page(1, [1, 2, 3, 4, 5], '5', ['self', 'next', 'last']), mark: before },
        { ex: page(2, [5], '5', ['self', 'prev', 'first', 'last']), mark: before },
        { ex: page(1, [1, 2, 3, 4, 5, 6], '1000', ['self']), mark: after },
      ]),
    ).toEqual([]);
    const mark = writeMark();
    expect(
      await judge([
        { ex: page(1, [1, 2, 3, 4, 5], '5', ['self']), mark },
        { ex: page(1, [1, 2, 3, 4], '1000', ['self']), mark },
      ]),
    ).toEqual([]);
    const log = (ids: number[], size: string) => exchange('GET', '/log.json', 200, items(...ids), link('self'), { 'X-Page-Size': size });
    expect(
      await judge([
        { ex: log([1, 2], '5'), mark },
        { ex: log([1, 2, 3], '1000'), mark },
      ]),
    ).toEqual([]);
  });
});

describe('gone-after-delete', () => {
  const sent = (at: number): WriteMark => ({ ...writeMark(), at });

  test('a show or a list that still holds an object deleted before it was sent fails its clause', async () => {
    const relations = new Relations(
      config,
      () => BOTH,
      () => 100,
    );
    const found: string[] = [];
    const observe = async (ex: Exchange, mark: WriteMark) => {
      const path = new URL(ex.request.url).pathname.replace(/^.*\/index\.php\/api\/v6/, '');
      await relations.observe({ exchange: ex, channel: 'api', auth: basic, client: fakeClient(), quiet: false, mark }, path, (c) => found.push(c));
    };
    await observe(exchange('DELETE', '/passwords/3.json', 204, undefined), sent(50));
    await observe(exchange('DELETE', '/groups/4.json', 204, undefined), sent(50));
    await observe(exchange('GET', '/passwords/3.json', 200, { id: 3, name: 'n3' }), sent(150));
    await observe(exchange('GET', '/passwords.json', 200, items(1, 3)), sent(150));
    await observe(exchange('GET', '/passwords/favorite.json', 200, items(3)), sent(150));
    await observe(exchange('GET', '/groups.json', 200, items(4)), sent(150));
    expect(found).toEqual(['OPS-02', RELATIONS['gone-after-delete'], 'OPS-05', 'OPS-07']);
  });

  test('reads sent before the delete was answered, and ids handed out again, pass', async () => {
    const relations = new Relations(
      config,
      () => BOTH,
      () => 100,
    );
    const found: string[] = [];
    const observe = async (ex: Exchange, mark: WriteMark) => {
      const path = new URL(ex.request.url).pathname.replace(/^.*\/index\.php\/api\/v6/, '');
      await relations.observe({ exchange: ex, channel: 'api', auth: basic, client: fakeClient(), quiet: false, mark }, path, (c) => found.push(c));
    };
    await observe(exchange('DELETE', '/projects/5.json', 204, undefined), sent(50));
    await observe(exchange('GET', '/projects.json', 200, items(5)), sent(90));
    const again = exchange('POST', '/projects.json', 201, { id: 5 });
    again.request.body = JSON.stringify({ name: 'new' });
    await observe(again, sent(150));
    await observe(exchange('GET', '/projects/5.json', 200, { id: 5, name: 'new' }), sent(160));
    expect(found).toEqual([]);
  });

  test('a show under a deleted id with another name is a new object under a reused id', async () => {
    const relations = new Relations(
      config,
      () => BOTH,
      () => 100,
    );
    const found: string[] = [];
    const created = exchange('POST', '/projects.json', 201, { id: 8 });
    created.request.body = JSON.stringify({ name: 'old' });
    for (const [ex, at] of [
      [created, 10],
      [exchange('DELETE', '/projects/8.json', 204, undefined), 50],
      [exchange('GET', '/projects/8.json', 200, { id: 8, name: 'someone else' }), 150],
    ] as const) {
      const path = new URL(ex.request.url).pathname.replace(/^.*\/index\.php\/api\/v6/, '');
      await relations.observe({ exchange: ex, channel: 'api', auth: basic, client: fakeClient(), quiet: false, mark: sent(at) }, path, (c) => found.push(c));
    }
    expect(found).toEqual([]);
  });
});

describe('listed-is-shown, list-show-fields', () => {
  const created = (path: string, id: number, name: string) => {
    const ex = exchange('POST', path, 201, { id });
    ex.request.body = JSON.stringify({ name });
    return ex;
  };

  test('a listed password of the run whose show, read in the same state, answers 404 fails EP-03; in a search, its §1 row', async () => {
    const mark = writeMark();
    const found = await judge([
      { ex: created('/passwords.json', 7, 'mine') },
      { ex: exchange('GET', '/passwords.json', 200, [{ id: 7, name: 'mine' }]), mark },
      { ex: exchange('GET', '/passwords/7.json', 404, { error: true, type: 'Not Found', message: 'x' }), mark },
    ]);
    expect(found).toContain(RELATIONS['listed-is-shown']);
    const search = await judge([
      { ex: created('/projects.json', 8, 'mine') },
      { ex: exchange('GET', '/projects/8.json', 404, { error: true, type: 'Not Found', message: 'x' }), mark: writeMark() },
    ]);
    expect(search).toEqual([]);
  });

  test('a field with two values in a list item and the show of a run object, in one state, is RES-17; volatile fields, notes and other states are not', async () => {
    const setup = created('/projects.json', 9, 'new');
    const mark = writeMark();
    const found = await judge([
      { ex: setup },
      { ex: exchange('GET', '/projects/search/x.json', 200, [{ id: 9, name: 'old', favorite: true }]), mark },
      { ex: exchange('GET', '/projects/9.json', 200, { id: 9, name: 'new', favorite: true }), mark },
    ]);
    expect(found).toEqual([RELATIONS['list-show-fields']]);
    const alike = await judge([
      { ex: created('/projects.json', 9, 'new') },
      { ex: exchange('GET', '/projects/9.json', 200, { id: '9', name: 'new', notes: 'long text', updated_on: 'b' }), mark },
      { ex: exchange('GET', '/projects/search/x.json', 200, [{ id: 9, name: 'new', notes: 'long…', updated_on: 'a', project: { id: 1 } }]), mark },
    ]);
    expect(alike).toEqual([]);
    const before = writeMark();
    requestStarting('PUT')();
    const moved = await judge([
      { ex: created('/projects.json', 9, 'new') },
      { ex: exchange('GET', '/projects/search/x.json', 200, [{ id: 9, name: 'old' }]), mark: before },
      { ex: exchange('GET', '/projects/9.json', 200, { id: 9, name: 'new' }), mark: writeMark() },
    ]);
    expect(moved).toEqual([]);
  });

  test('objects the run did not make are not compared', async () => {
    const mark = writeMark();
    expect(
      await judge([
        { ex: exchange('GET', '/projects.json', 200, [{ id: 3, name: 'a' }]), mark },
        { ex: exchange('GET', '/projects/3.json', 200, { id: 3, name: 'b' }), mark },
      ]),
    ).toEqual([]);
  });
});

describe('roles-refused, roles-served', () => {
  const made = (username: string, role: string, publicKey: string, id: number): Exchange => ({
    request: {
      method: 'POST',
      url: `${TARGET}/__control/users`,
      headers: {},
      body: JSON.stringify({ username, password: 'pw', role, api_only: false, active: true }),
    },
    response: { status: 201, headers: {}, body: '' },
    json: { id, username, public_key: publicKey, private_key: 'k' },
    durationMs: 0,
  });

  async function asUsers(steps: Array<{ ex: Exchange; auth: Auth; mark?: WriteMark }>, settings: Settings | 'unknown' = BOTH): Promise<string[]> {
    const relations = new Relations(config, () => (settings === 'unknown' ? undefined : settings));
    relations.learn(made('ro', 'read only', 'ro-key', 1));
    relations.learn(made('itu', 'it', 'it-key', 2));
    const found: string[] = [];
    for (const s of steps) {
      const path = new URL(s.ex.request.url).pathname.replace(/^.*\/index\.php\/api\/v6/, '');
      // The Basic look-up of basic-hmac answers as the HMAC request was answered.
      const client = fakeClient(() => s.ex);
      const o: Observed = { exchange: s.ex, channel: 'api', auth: s.auth, client, quiet: false, mark: s.mark ?? writeMark() };
      await relations.observe(o, path, (clause) => found.push(clause));
    }
    return found;
  }
  const latest = (status: number) =>
    exchange('GET', '/version/check_latest.json', status, status === 200 ? { version: '1', latest_version: '' } : { error: true });

  test('check_latest served to a Read only user, by either method, fails VER-06', async () => {
    expect(await asUsers([{ ex: latest(200), auth: { kind: 'hmac', publicKey: 'ro-key', privateKey: 'k' } }])).toEqual(['VER-06']);
    expect(await asUsers([{ ex: latest(200), auth: { kind: 'basic', user: 'ro', password: 'pw' } }])).toEqual(['VER-06']);
    expect(await asUsers([{ ex: latest(403), auth: { kind: 'basic', user: 'ro', password: 'pw' } }])).toEqual([]);
  });

  test('check_latest refused to an IT user fails VER-07 only where nothing else may refuse them', async () => {
    const it: Auth = { kind: 'hmac', publicKey: 'it-key', privateKey: 'k' };
    expect(await asUsers([{ ex: latest(403), auth: it }])).toEqual(['VER-07']);
    expect(await asUsers([{ ex: latest(403), auth: it }], { ...BOTH, api_users: 'api_only' })).toEqual([]);
    expect(await asUsers([{ ex: latest(403), auth: it }], 'unknown')).toEqual([]);
    const mark = writeMark();
    expect(
      await asUsers(
        [
          { ex: exchange('GET', '/version.json', 200, { version: '1' }), auth: it, mark },
          { ex: latest(403), auth: it, mark },
        ],
        'unknown',
      ),
    ).toEqual(['VER-07']);
    expect(await asUsers([{ ex: latest(401), auth: it }])).toEqual([]);
  });
});
