import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { type KitAccount, makeAccount } from '../kill-matrix.ts';
import { type ClientKit, createClientKit } from '../kit.ts';
import { parseLinks, TestClient } from '../test-client/client.ts';

const TOKEN = randomBytes(16).toString('hex');
let kit: ClientKit;
let base: string;
let account: KitAccount;
let client: TestClient;
let list: string;

const control = (method: string, path: string, body?: unknown, token = TOKEN) =>
  fetch(`${base}/__clients/${path}`, {
    method,
    headers: { authorization: `Bearer ${token}` },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(10_000),
  });
const scenario = async (body: unknown) => expect((await control('PUT', 'scenario', body)).status).toBe(200);

/** A client's own test, as its authors would write it: list everything and compare with the count. */
async function ownTest(c: TestClient): Promise<void> {
  const count = await c.count(list);
  const items = await c.listAll(list);
  if (items.length !== count.num_items) throw new Error(`listed ${items.length}, count says ${count.num_items}`);
}

beforeAll(async () => {
  kit = await createClientKit({ adminPassword: randomBytes(12).toString('base64url'), controlToken: TOKEN });
  base = await kit.listen({ port: 0 });
  account = await makeAccount(base, TOKEN);
  client = new TestClient({ base, auth: account.basic, userAgent: 'scenario-test' });
  const project = await client.create('projects', { name: 'pmv6-scenarios', parent_id: 0 });
  for (let i = 1; i <= 12; i++) await client.create('passwords', { name: `pmv6-scenario-${i}`, project_id: project });
  list = `projects/${project}/passwords`;
}, 60_000);

afterEach(async () => {
  await control('DELETE', 'scenario');
});

afterAll(async () => {
  await client.close();
  await kit.close();
});

describe('list scenarios', () => {
  test('normal: 12 items in pages of 5 are 3 pages, and the conforming client lists them all', async () => {
    expect(await client.count(list)).toEqual({ num_items: 12, num_pages: 3, num_items_per_page: 5 });
    expect(await client.listAll(list)).toHaveLength(12);
  });

  test('one-page: only rel="self", page 2 is too high, the count says one page', async () => {
    await scenario({ name: 'one-page' });
    const first = await client.request('GET', list, { pageSize: true });
    expect(Object.keys(parseLinks(first.headers.link) ?? {})).toEqual(['self']);
    expect(first.json).toHaveLength(5);
    const second = await client.request('GET', `${list}/page/2`, { pageSize: true });
    expect(second.status).toBe(404);
    expect(second.json).toEqual({ error: true, type: 'Not Found', message: 'The page number is too high' });
    expect(await client.count(list)).toEqual({ num_items: 5, num_pages: 1, num_items_per_page: 5 });
  });

  test('one-page: a client that demands rel="next" fails its own test; the conforming client passes it', async () => {
    await scenario({ name: 'one-page' });
    const demandsNext = new TestClient({ base, auth: account.basic, userAgent: 'demands-next', demandsNext: true });
    try {
      await expect(ownTest(client)).resolves.toBeUndefined();
      await expect(ownTest(demandsNext)).rejects.toThrow(/KeyError: 'next'/);
    } finally {
      await demandsNext.close();
    }
  });

  test('exact-fill: 12 items in pages of 5 become 10 in 2 full pages; page 2 has no next, page 3 is too high', async () => {
    await scenario({ name: 'exact-fill' });
    expect(await client.count(list)).toEqual({ num_items: 10, num_pages: 2, num_items_per_page: 5 });
    const second = await client.request('GET', `${list}/page/2`, { pageSize: true });
    expect(second.json).toHaveLength(5);
    expect(Object.keys(parseLinks(second.headers.link) ?? {}).sort()).toEqual(['first', 'last', 'prev', 'self']);
    expect(parseLinks(second.headers.link)?.last).toMatch(/\/page\/2\.json$/);
    expect((await client.request('GET', `${list}/page/3`, { pageSize: true })).status).toBe(404);
    await expect(ownTest(client)).resolves.toBeUndefined();
  });

  test('exact-fill works for HMAC clients too (the kit re-signs its own count)', async () => {
    await scenario({ name: 'exact-fill' });
    const hmac = new TestClient({ base, auth: account.hmac, userAgent: 'scenario-hmac' });
    try {
      expect(await hmac.listAll(list)).toHaveLength(10);
    } finally {
      await hmac.close();
    }
  });

  test("page-too-high: page 2 and above answer 404 with the spec's message, page 1 is served", async () => {
    await scenario({ name: 'page-too-high' });
    expect((await client.request('GET', list, { pageSize: true })).status).toBe(200);
    const r = await client.request('GET', `${list}/page/2`, { pageSize: true });
    expect([r.status, (r.json as { message: string }).message]).toEqual([404, 'The page number is too high']);
  });
});

describe('error scenarios', () => {
  test.each([
    ['maintenance', 503, 'Service Unavailable', 'This installation is in Maintenance Mode.'],
    ['api-off', 403, 'Forbidden', 'API access is disabled'],
    ['unauthorized', 401, 'Unauthorized', 'The username or password is incorrect or missing.'],
    ['unsupported-media-type', 415, 'Unsupported Media Type', 'Content-Type must be "application/json; charset=utf-8"'],
    ['server-error', 500, 'Internal Server Error', 'An unexpected error occurred on the server.'],
  ])('%s answers %i with the error object', async (name, status, type, message) => {
    await scenario({ name });
    const r = await client.request('GET', 'version');
    expect(r.status).toBe(status);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.json).toEqual({ error: true, type, message });
    if (name === 'unauthorized') expect(r.headers['www-authenticate']).toMatch(/^Basic /);
  });

  test('page-size-refused: a request with X-Page-Size answers 400, one without is served', async () => {
    await scenario({ name: 'page-size-refused' });
    expect((await client.request('GET', list, { pageSize: true })).status).toBe(400);
    expect((await client.request('GET', list)).status).toBe(200);
  });

  test('slow: the answer comes after delayMs', async () => {
    await scenario({ name: 'slow', delayMs: 400 });
    const started = performance.now();
    expect((await client.request('GET', 'version')).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
  });

  // Issue 37: the failures clients meet in the field, as they reach a client over HTTP.
  test.each([502, 503, 504])('proxy-%i: the status with an HTML page (text/html), as nginx sends it', async (status) => {
    await scenario({ name: `proxy-${status}` });
    const res = await client.request('GET', 'version');
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe('text/html');
    expect(res.json).toMatch(new RegExp(`<title>${status} [^<]+</title>`));
  });

  test('error-extra-fields: 400 with the error object, fields beyond it and a type that is no status description', async () => {
    await scenario({ name: 'error-extra-fields' });
    const res = await client.request('GET', 'version');
    expect(res.status).toBe(400);
    const body = res.json as Record<string, unknown>;
    expect(body).toMatchObject({ error: true, type: 'Rule Violation', message: expect.any(String) });
    expect(Object.keys(body).length).toBeGreaterThan(3);
  });

  test('connection-closed: the body is cut, the client gets an error, and the kit counts the request', async () => {
    await scenario({ name: 'connection-closed' });
    const before = kit.snapshot().clients.reduce((n, c) => n + c.requests, 0);
    await expect(client.request('GET', 'version')).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 100));
    expect(kit.snapshot().clients.reduce((n, c) => n + c.requests, 0)).toBe(before + 1);
  });

  test('times and path narrow a scenario: the next matching request only, under that path only', async () => {
    await scenario({ name: 'maintenance', path: '/passwords', times: 1 });
    expect((await client.request('GET', 'version')).status).toBe(200);
    expect((await client.request('GET', 'passwords')).status).toBe(503);
    expect((await client.request('GET', 'passwords')).status).toBe(200);
    expect(await (await control('GET', 'scenario')).json()).toMatchObject({ scenario: { name: 'normal' } });
  });

  test('the scenario requests of a conforming client raise no finding', async () => {
    const own = kit.snapshot().clients.filter((c) => c.userAgent === 'scenario-test');
    expect(own.flatMap((c) => Object.keys(c.findings))).toEqual([]);
    expect(own[0]!.requests).toBeGreaterThan(20);
  });
});

describe('control endpoints', () => {
  test('a wrong token is 401, a bad scenario 400 with the error object, an unknown endpoint 404', async () => {
    expect((await control('GET', 'scenario', undefined, 'wrong')).status).toBe(401);
    const bad = await control('PUT', 'scenario', { name: 'flood' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: true, type: 'Bad Request', message: expect.stringContaining('one-page') });
    expect((await control('PUT', 'scenario', '{')).status).toBe(400);
    expect((await control('PUT', 'scenario', { name: 'slow', delayMs: 60_000 })).status).toBe(400);
    expect((await control('PUT', 'scenario', { name: 'api-off', delayMs: 5 })).status).toBe(400);
    expect((await control('GET', 'nothing')).status).toBe(404);
  });

  test('GET scenario lists the scenarios; findings returns the snapshot; reset clears it', async () => {
    const s = (await (await control('GET', 'scenario')).json()) as { scenarios: Record<string, string> };
    expect(Object.keys(s.scenarios)).toContain('one-page');
    const snap = (await (await control('GET', 'findings')).json()) as { requests: number };
    expect(snap.requests).toBeGreaterThan(0);
    expect((await control('POST', 'reset')).status).toBe(204);
    expect(((await (await control('GET', 'findings')).json()) as { requests: number }).requests).toBe(0);
  });
});
