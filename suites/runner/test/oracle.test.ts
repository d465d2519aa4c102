import { describe, expect, test } from 'vitest';
import type { Exchange } from '../../../core/exchange.ts';
import type { ApiClient, ApiRequest, Auth } from '../../harness/client.ts';
import type { RunConfig } from '../../harness/config.ts';
import { inScope, type Observed, requestStarting, type WriteMark, writeMark } from '../../harness/traffic.ts';
import { describesStatus, Oracle, saysCredentialsWrong } from '../../oracle/oracle.ts';

const TARGET = 'https://pm.test';
const API = `${TARGET}/index.php/api/v6`;
const config: RunConfig = { target: TARGET, user: 'admin', password: 'pw', runId: 'abc', seed: 1, readOnly: false, timeoutMs: 1000 };
const basic: Auth = { kind: 'basic', user: 'admin', password: 'pw' };

/** The pages `judge` hands the oracle, by URL: what reading one of them again answers. */
const served = new Map<string, Exchange>();

/**
 * A client whose count.json look-ups answer `n` items, whose page reads (by URL, the oracle's
 * confirmation) answer as the page did, and which records what it was asked.
 */
function fakeClient(n: number | 'throw', asked: string[] = []): ApiClient {
  const client = {
    withAuth: () => client,
    async request(req: ApiRequest): Promise<Exchange> {
      if (n === 'throw') throw new Error('boom');
      const page = req.url === undefined ? undefined : served.get(req.url);
      asked.push(req.url === undefined ? req.path : req.url.slice(API.length));
      if (page) return page;
      const size = Number(req.headers?.['X-Page-Size'] ?? 20);
      const json = { num_items: n, num_pages: Math.max(1, Math.ceil(n / size)), num_items_per_page: size };
      return {
        request: { method: 'GET', url: `${API}${req.path}`, headers: req.headers ?? {} },
        response: { status: 200, headers: {}, body: JSON.stringify(json) },
        json,
        durationMs: 0,
      };
    },
  };
  return client as unknown as ApiClient;
}

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

const items = (k: number) => Array.from({ length: k }, (_, i) => ({ id: i + 1 }));
const link = (entries: Array<[string, string]>) => ({ link: entries.map(([rel, url]) => `<${url}>; rel="${rel}"`).join(', ') });

async function judge(
  exchanges: Exchange[],
  client = fakeClient(0),
  auth: Auth = basic,
  mark: () => WriteMark = writeMark,
): Promise<{ clauses: string[]; errors: string[] }> {
  const oracle = new Oracle(config);
  for (const ex of exchanges) served.set(ex.request.url, ex);
  for (const ex of exchanges) await oracle.observe({ exchange: ex, channel: 'api', auth, client, quiet: false, mark: mark() } satisfies Observed);
  const { findings, errors } = oracle.drain('');
  return { clauses: findings.map((f) => f.clause).sort(), errors };
}

describe('the response oracle', () => {
  test('passes a conforming error object and a conforming last page', async () => {
    const ex401 = exchange('GET', '/passwords.json', 401, {
      error: true,
      type: 'Unauthorized',
      message: 'Username or password is not correct or was not sent',
    });
    const last = exchange(
      'GET',
      '/projects/page/3.json',
      200,
      items(2),
      link([
        ['self', `${API}/projects/page/3.json`],
        ['first', `${API}/projects/page/1.json`],
        ['prev', `${API}/projects/page/2.json`],
        ['last', `${API}/projects/page/3.json`],
      ]),
      { 'X-Page-Size': '5' },
    );
    expect(await judge([ex401, last])).toEqual({ clauses: [], errors: [] });
  });

  test('fails a 4XX without the error object, and words only at SHOULD', async () => {
    const bare = exchange('DELETE', '/projects/9.json', 404, { message: 'gone' });
    const worded = exchange('POST', '/projects.json', 415, { error: true, type: 'Unsupported content type', message: 'Send JSON' });
    expect((await judge([bare])).clauses).toEqual(['RES-14', 'RES-15']);
    expect((await judge([worded])).clauses).toEqual([]);
    const odd = exchange('GET', '/passwords/1.json', 404, { error: true, type: 'Oops', message: 'x' });
    expect((await judge([odd])).clauses).toEqual(['RES-18']);
    // Faithful descriptions in a server's own words (fixtures/variants/ error-type-faithful-descriptions).
    const denied = exchange('GET', '/passwords/1.json', 403, { error: true, type: 'Access denied', message: 'x' });
    const absent = exchange('GET', '/passwords/1.json', 404, { error: true, type: 'Resource does not exist', message: 'x' });
    expect((await judge([denied, absent])).clauses).toEqual([]);
    const generic = exchange('GET', '/passwords/1.json', 403, { error: true, type: 'error', message: 'x' });
    expect((await judge([generic])).clauses).toEqual(['RES-18']);
  });

  test('holds a Basic 401 to type "Unauthorized" and a message; an HMAC 401 only to the error object', async () => {
    const wrongType = exchange('PUT', '/projects/1.json', 401, { error: true, type: 'Forbidden', message: 'Access denied' });
    expect((await judge([wrongType])).clauses).toEqual(['AUTH-12', 'AUTH-14', 'RES-18']);
    const hmac: Auth = { kind: 'hmac', publicKey: 'p', privateKey: 'k' };
    expect(
      (await judge([exchange('GET', '/passwords.json', 401, { error: true, type: 'Unauthorized request', message: 'bad hash' })], fakeClient(0), hmac)).clauses,
    ).toEqual([]);
  });

  /** Page 2 of passwords (the last of two at X-Page-Size 5) holding `n` items, with a rel="next" it must not have. */
  const lastOfTwoWithNext = (n: number) =>
    exchange(
      'GET',
      '/passwords/page/2.json',
      200,
      items(n),
      link([
        ['self', `${API}/passwords/page/2.json`],
        ['next', `${API}/passwords/page/3.json`],
        ['first', `${API}/passwords/page/1.json`],
        ['prev', `${API}/passwords/page/1.json`],
        ['last', `${API}/passwords/page/2.json`],
      ]),
      { 'X-Page-Size': '5' },
    );

  test('finds next on a partial last page and a missing next on a full first page (settled by the count)', async () => {
    const partial = lastOfTwoWithNext(3);
    expect((await judge([partial])).clauses).toContain('PAG-04');
    const asked: string[] = [];
    const full = exchange('GET', '/groups.json', 200, items(5), link([['self', `${API}/groups.json`]]), { 'X-Page-Size': '5' });
    expect((await judge([full], fakeClient(12, asked))).clauses).toEqual(['PAG-07']);
    // The look-up, then the confirmation before the finding is reported: the count, the page again, the count.
    expect(asked).toEqual(['/groups/count.json', '/groups/count.json', '/groups.json', '/groups/count.json']);
  });

  test('reports what a count decided only when a fresh count still says the same (other users move lists the run does not write)', async () => {
    const full = exchange('GET', '/groups.json', 200, items(5), link([['self', `${API}/groups.json`]]), { 'X-Page-Size': '5' });
    // 12 items when the page was judged, 5 when the finding would be reported: the list moved, nothing is reported.
    let n = 12;
    const asked: string[] = [];
    const counting = fakeClient(12, asked);
    const moving = {
      withAuth: () => moving,
      request: async (req: ApiRequest) => {
        const ex = await fakeClient(n, asked).request(req);
        n = 5;
        return ex;
      },
    } as unknown as ApiClient;
    expect((await judge([full], moving)).clauses).toEqual([]);
    expect(asked).toEqual(['/groups/count.json', '/groups/count.json']);
    // A 404 on a page the count says exists, the same way.
    const missing = exchange('GET', '/groups/page/2.json', 404, { error: true, type: 'Not Found', message: 'Not found' }, {}, { 'X-Page-Size': '5' });
    n = 12;
    expect((await judge([missing], moving)).clauses).toEqual([]);
    expect((await judge([missing], counting)).clauses).toEqual(['EP-13']);
  });

  test('reports what a count decided only when the page, read again while the count holds, answers as it did (a list that moved and back)', async () => {
    const full = exchange('GET', '/groups.json', 200, items(5), link([['self', `${API}/groups.json`]]), { 'X-Page-Size': '5' });
    const asked: string[] = [];
    const counting = fakeClient(12, asked);
    // The count says 12 before and after, but the page read again carries next and last: it was served while the list held 5.
    const now = exchange(
      'GET',
      '/groups.json',
      200,
      items(5),
      link([
        ['self', `${API}/groups.json`],
        ['next', `${API}/groups/page/2.json`],
        ['last', `${API}/groups/page/3.json`],
      ]),
      { 'X-Page-Size': '5' },
    );
    const moved = {
      withAuth: () => moved,
      request: (req: ApiRequest) => (req.url === undefined ? counting.request(req) : Promise.resolve(now)),
    } as unknown as ApiClient;
    expect((await judge([full], moved)).clauses).toEqual([]);
    expect(asked).toEqual(['/groups/count.json', '/groups/count.json']);
  });

  test("judges a page's position only when no write overlapped the page and its count (files side by side)", async () => {
    const full = () =>
      exchange(
        'GET',
        '/groups.json',
        200,
        items(5),
        link([
          ['self', `${API}/groups.json`],
          ['prev', `${API}/groups.json`],
        ]),
        { 'X-Page-Size': '5' },
      );
    expect((await judge([full()], fakeClient(12))).clauses).toEqual(['PAG-03', 'PAG-07']);
    // A write was in flight when the page was asked for: the position is left alone, the first page's prev is not.
    const asked: string[] = [];
    expect((await judge([full()], fakeClient(12, asked), basic, () => ({ ...writeMark(), inFlight: 1 }))).clauses).toEqual(['PAG-03']);
    expect(asked).toEqual([]);
    // A write started (and ended) after the page was asked for, before its count came back.
    const writing = fakeClient(12);
    const racing = {
      ...writing,
      withAuth: () => racing,
      request: (req: ApiRequest) => {
        requestStarting('POST')();
        return writing.request(req);
      },
    } as unknown as ApiClient;
    expect((await judge([full()], racing)).clauses).toEqual(['PAG-03']);
    // With no write since, the count read before is used again and the page judged.
    const again: string[] = [];
    expect((await judge([full(), full()], fakeClient(12, again))).clauses).toEqual(['PAG-03', 'PAG-07']);
    // One look-up, then each finding's confirmation (the second page is judged by the first's confirmed count).
    const confirmation = ['/groups/count.json', '/groups.json', '/groups/count.json'];
    expect(again).toEqual(['/groups/count.json', ...confirmation, ...confirmation]);
  });

  test('takes a count the run read itself as the look-up it would make (same credentials; the same page size where the count must say it)', async () => {
    const count = (n: number, size: string) =>
      exchange(
        'GET',
        '/groups/count.json',
        200,
        { num_items: n, num_pages: Math.ceil(n / Number(size)), num_items_per_page: Number(size) },
        {},
        { 'X-Page-Size': size },
      );
    const full = exchange('GET', '/groups.json', 200, items(5), link([['self', `${API}/groups.json`]]), { 'X-Page-Size': '5' });
    const asked: string[] = [];
    // The run read the count with X-Page-Size 5: the full page is judged against it, no look-up.
    expect((await judge([count(12, '5'), full], fakeClient(12, asked))).clauses).toEqual(['PAG-07']);
    // Only the finding's confirmation.
    const confirmation = ['/groups/count.json', '/groups.json', '/groups/count.json'];
    expect(asked).toEqual(confirmation);
    asked.length = 0;
    // Another page size's count says how many items the list has, all a page of known size is
    // judged by (§4: num_items does not depend on X-Page-Size): no look-up either.
    expect((await judge([count(12, '7'), full], fakeClient(12, asked))).clauses).toEqual(['PAG-07']);
    expect(asked).toEqual(confirmation);
    asked.length = 0;
    // A page whose size only its count can say (no X-Page-Size) needs a count read without one.
    const unsized = exchange('GET', '/groups.json', 200, items(20), link([['self', `${API}/groups.json`]]));
    expect((await judge([count(25, '5'), unsized], fakeClient(25, asked))).clauses).toEqual(['PAG-07']);
    expect(asked).toEqual(['/groups/count.json', '/groups/count.json', '/groups.json', '/groups/count.json']);
  });

  test("waits for the run's own count read on its way rather than asking again: the page answered first (read side by side)", async () => {
    const count = exchange('GET', '/groups/count.json', 200, { num_items: 5, num_pages: 1, num_items_per_page: 5 }, {}, { 'X-Page-Size': '5' });
    // A full first page that is also the last: only its count can say so.
    const full = exchange('GET', '/groups.json', 200, items(5), link([['self', `${API}/groups.json`]]), { 'X-Page-Size': '5' });
    const judgeWith = async (announce: boolean) => {
      const oracle = new Oracle(config);
      const asked: string[] = [];
      const client = fakeClient(5, asked);
      let heard!: () => void;
      if (announce) oracle.sending({ exchange: count, auth: basic, channel: 'api', heard: new Promise<void>((resolve) => (heard = resolve)) });
      const observe = (ex: Exchange) => oracle.observe({ exchange: ex, channel: 'api', auth: basic, client, quiet: false, mark: writeMark() });
      const page = observe(full);
      if (announce) {
        await observe(count);
        heard();
      }
      await page;
      return { asked, clauses: oracle.drain('').findings.map((f) => f.clause) };
    };
    expect(await judgeWith(true)).toEqual({ asked: [], clauses: [] });
    // Nothing on its way: the look-up.
    expect(await judgeWith(false)).toEqual({ asked: ['/groups/count.json'], clauses: [] });
  });

  test("pages of one list judged side by side share one look-up of its count: the second waits for the first's", async () => {
    const asked: string[] = [];
    const inner = fakeClient(10, asked);
    // The look-up takes a while: the second page is judged while the first's is on its way.
    const client = {
      withAuth: () => client,
      request: async (req: ApiRequest) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return inner.request(req);
      },
    } as unknown as ApiClient;
    const lookUp = (oracle: Oracle, n: number) => {
      const ex = exchange('GET', `/groups/page/${n}.json`, 200, items(5), {}, { 'X-Page-Size': '5' });
      const o: Observed = { exchange: ex, channel: 'api', auth: basic, client, quiet: false, mark: writeMark() };
      const addr = { base: '/groups', kind: 'page', template: '/groups', source: 'spec' };
      return (oracle as unknown as { countOf(o: Observed, addr: unknown, header: string, fresh: boolean, itemsOnly: boolean): Promise<unknown> }).countOf(
        o,
        addr,
        '5',
        false,
        true,
      );
    };
    const oracle = new Oracle(config);
    const [one, two] = await Promise.all([lookUp(oracle, 1), lookUp(oracle, 2)]);
    expect(asked).toEqual(['/groups/count.json']);
    expect(two).toEqual(one);
    // A look-up that overlapped a write is not shared: the next page asks again.
    const write = requestStarting('POST');
    write();
    await lookUp(oracle, 1);
    expect(asked).toEqual(['/groups/count.json', '/groups/count.json']);
  });

  test('keeps findings by the suite file whose traffic broke the clause', async () => {
    const oracle = new Oracle(config);
    const bad = exchange('GET', '/passwords.json', 400, { message: 'no error field' });
    const observed = { exchange: bad, channel: 'api', auth: basic, client: fakeClient(0), quiet: false, mark: writeMark() } as const;
    await inScope({ file: 'a.test.ts', sent: 0 }, async () => {
      await oracle.observe(observed);
      expect(oracle.pending(['RES-14'])?.clause).toBe('RES-14');
    });
    await inScope({ file: 'b.test.ts', sent: 0 }, async () => expect(oracle.pending(['RES-14'])).toBeUndefined());
    expect(oracle.drain('b.test.ts').findings).toEqual([]);
    expect(oracle.drain('a.test.ts').findings.map((f) => f.clause)).toContain('RES-14');
    expect(oracle.drain('a.test.ts').findings).toEqual([]);
  });

  test('finds next on an exactly filled last page', async () => {
    const exact = lastOfTwoWithNext(5);
    expect((await judge([exact], fakeClient(10))).clauses).toEqual(['PAG-04']);
  });

  test('resolves Link targets against the request URL and wants .json', async () => {
    const relative = exchange('GET', '/passwords.json', 200, items(3), link([['self', 'passwords/page/1.json']]), { 'X-Page-Size': '5' });
    expect((await judge([relative])).clauses).toEqual([]);
    const noJson = exchange('GET', '/passwords.json', 200, items(3), link([['self', `${API}/passwords/page/1`]]), { 'X-Page-Size': '5' });
    expect((await judge([noJson])).clauses).toEqual(['GEN-06']);
    const wrongPage = exchange(
      'GET',
      '/passwords/page/2.json',
      200,
      items(3),
      link([
        ['self', '3.json'],
        ['first', '1.json'],
        ['prev', '/index.php/api/v6/passwords/page/1.json'],
        ['last', '2.json'],
      ]),
      { 'X-Page-Size': '5' },
    );
    expect((await judge([wrongPage])).clauses).toEqual(['PAG-08']);
    const otherList = exchange('GET', '/passwords/search/abc.json', 200, items(3), link([['self', `${API}/passwords/page/1.json`]]), { 'X-Page-Size': '5' });
    expect((await judge([otherList])).clauses).toEqual(['PAG-08']);
    const query = exchange(
      'GET',
      '/passwords/page/2.json',
      200,
      items(3),
      link([
        ['self', `${API}/passwords.json?page=2`],
        ['first', `${API}/passwords.json?page=1`],
        ['prev', `${API}/passwords.json?page=1`],
        ['last', `${API}/passwords.json?page=2`],
      ]),
      { 'X-Page-Size': '5' },
    );
    expect((await judge([query])).clauses).toEqual([]);
  });

  test('fails PAG-08 for a Link target on another origin or outside the base path, once a page, with the exchange', async () => {
    const asked: string[] = [];
    const foreign = exchange('GET', '/passwords.json', 200, items(3), link([['self', 'https://elsewhere.test/index.php/api/v6/passwords/page/1.json']]), {
      'X-Page-Size': '5',
    });
    const oracle = new Oracle(config);
    await oracle.observe({ exchange: foreign, channel: 'api', auth: basic, client: fakeClient(3, asked), quiet: false, mark: writeMark() });
    const [finding, ...rest] = oracle.drain('').findings;
    expect(rest).toEqual([]);
    expect(finding?.clause).toBe('PAG-08');
    expect(finding?.count).toBe(1);
    expect(finding?.failures[0]?.actual).toMatch(/^<https:\/\/elsewhere\.test\/.*outside the target, never followed/);
    expect(finding?.failures[0]?.exchange?.response?.headers['link']).toContain('elsewhere.test');
    expect(asked.every((p) => !p.includes('elsewhere'))).toBe(true);
    const based = new Oracle({ ...config, target: `${TARGET}/pm` });
    const outsideBase = exchange('GET', `${TARGET}/pm/index.php/api/v6/passwords.json`, 200, items(3), link([['self', '/index.php/api/v6/passwords.json']]), {
      'X-Page-Size': '5',
    });
    await based.observe({ exchange: outsideBase, channel: 'api', auth: basic, client: fakeClient(3), quiet: false, mark: writeMark() });
    expect(based.drain('').findings.map((f) => f.clause)).toEqual(['PAG-08']);
  });

  test('judges JSON nested too deep as GEN-03 alone, and a 14 KB Link header with a bounded finding', async () => {
    const deep: Exchange = {
      ...exchange('GET', '/passwords.json', 200, undefined, link([['self', `${API}/passwords.json`]]), { 'X-Page-Size': '5' }),
      jsonTooDeep: true,
    };
    deep.response!.body = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect((await judge([deep])).clauses).toEqual(['GEN-03']);
    const long = exchange(
      'GET',
      '/passwords.json',
      200,
      items(3),
      { link: `<${API}/passwords.json>${';'.repeat(1_500)}x; rel="self"` },
      { 'X-Page-Size': '5' },
    );
    const oracle = new Oracle(config);
    await oracle.observe({ exchange: long, channel: 'api', auth: basic, client: fakeClient(3), quiet: false, mark: writeMark() });
    const findings = oracle.drain('').findings;
    expect(findings.map((f) => f.clause)).toContain('PAG-02');
    expect(JSON.stringify(findings).length).toBeLessThan(40_000);
  });

  test('wants 404 and its message above the last page', async () => {
    const empty = exchange('GET', '/projects/page/9.json', 200, [], link([['self', `${API}/projects/page/9.json`]]), { 'X-Page-Size': '5' });
    expect((await judge([empty])).clauses).toEqual(['PAG-11']);
    const worded = exchange('GET', '/projects/page/9.json', 404, { error: true, type: 'Not Found', message: 'No such page' }, {}, { 'X-Page-Size': '5' });
    expect((await judge([worded], fakeClient(12))).clauses).toEqual(['PAG-11']);
  });

  test('judges settings-dependent rules only with settings learned from the control protocol', async () => {
    const oracle = new Oracle(config);
    const control = exchange('PUT', `${TARGET}/__control/settings`, 200, {
      api_enabled: true,
      maintenance_mode: true,
      auth_methods: 'basic+hmac',
      api_users: 'all',
      hmac_key_expiry_days: null,
      num_items_lists: 20,
    });
    await oracle.observe({
      exchange: control,
      channel: 'control',
      auth: basic,
      client: fakeClient(0),
      quiet: false,
      mark: { started: 0, inFlight: 0 },
    });
    await oracle.observe({
      exchange: exchange('GET', '/version.json', 200, { version: '1' }),
      channel: 'api',
      auth: basic,
      client: fakeClient(0),
      quiet: false,
      mark: { started: 0, inFlight: 0 },
    });
    expect(oracle.drain('').findings.map((f) => f.clause)).toEqual(['ERR-04']);
    expect((await judge([exchange('GET', '/version.json', 503, { error: true, type: 'Service Unavailable', message: 'down' })])).clauses).toEqual(['STAT-01']);
  });

  test('counts an out-of-range X-Page-Size honoured in count.json under SIZE-11', async () => {
    const honoured = exchange('GET', '/projects/count.json', 200, { num_items: 12, num_pages: 1, num_items_per_page: 2000 }, {}, { 'X-Page-Size': '2000' });
    expect((await judge([honoured])).clauses).toEqual(['SIZE-11']);
  });

  test('reports its own crash as an oracle error, never as a finding', async () => {
    const full = exchange('GET', '/groups.json', 200, items(5), link([['self', `${API}/groups.json`]]), { 'X-Page-Size': '5' });
    const { clauses, errors } = await judge([full], fakeClient('throw'));
    expect(clauses).toEqual([]);
    expect(errors.join()).toContain('boom');
  });

  test('ignores other origins; holds other methods to the kinds of response and the error object only', async () => {
    const other = exchange('GET', 'https://elsewhere.test/index.php/api/v6/passwords.json', 500, undefined);
    const patch = exchange('PATCH', '/passwords.json', 405, { error: true, type: 'Method Not Allowed', message: 'no' });
    const head = exchange('HEAD', '/passwords.json', 405, undefined);
    expect((await judge([other, patch, head])).clauses).toEqual([]);
    expect((await judge([exchange('PATCH', '/passwords.json', 501, { error: true })])).clauses).toEqual(['STAT-01']);
    expect((await judge([exchange('PATCH', '/passwords.json', 405, undefined)])).clauses).toEqual(['STAT-06']);
  });

  test('wording helpers', () => {
    expect(describesStatus('NotFound', 404)).toBe(true);
    expect(describesStatus('404', 404)).toBe(true);
    expect(describesStatus('Oops', 404)).toBe(false);
    expect(describesStatus('Unsupported content type', 415)).toBe(true);
    expect(describesStatus('Not allowed', 404)).toBe(false);
    expect(saysCredentialsWrong('Invalid credentials')).toBe(true);
    expect(saysCredentialsWrong('Nope')).toBe(false);
  });
});
