import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hmacSign } from '../../../core/signers.ts';
import { ApiClient, OffTargetError } from '../client.ts';
import { type Stub, sendJson, startStub } from './stub-server.ts';

let stub: Stub;
let client: ApiClient;

beforeAll(async () => {
  stub = await startStub((req, res) => {
    if (req.url.includes('/slow')) return; // never answers
    if (req.url.includes('/drip')) {
      // a byte every 100 ms: no gap reaches the timeout, the whole body never ends in time
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(' ')), 100);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (req.url.includes('/big')) {
      const announce = req.url.includes('announced');
      res.writeHead(200, { 'content-type': 'application/json', ...(announce ? { 'content-length': String(10 * 1024 * 1024) } : {}) });
      const block = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const more = () => {
        while (!res.destroyed && sent < 10 * 1024 * 1024) {
          sent += block.length;
          if (!res.write(block)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
      return;
    }
    if (req.url.includes('/latin1')) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      return;
    }
    if (req.url.includes('/text')) {
      res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] });
      res.end('not json ✓');
      return;
    }
    if (req.method === 'DELETE') return sendJson(res, 204, undefined);
    sendJson(res, req.method === 'POST' ? 201 : 200, { id: 12 }, { link: '<http://x/2.json>; rel="next"' });
  });
  client = new ApiClient({ target: `${stub.url}/`, auth: { kind: 'basic', user: 'admin', password: 'pw' }, timeoutMs: 500 });
});

afterAll(async () => {
  await client.close();
  await stub.close();
});

function last() {
  const r = stub.received.at(-1);
  if (!r) throw new Error('no request received');
  return r;
}

describe('requests on the wire', () => {
  test('GET: path under /index.php/api/v6, default Content-Type, Basic auth, no body', async () => {
    const ex = await client.get('/passwords.json');
    const r = last();
    expect(r.method).toBe('GET');
    expect(r.url).toBe('/index.php/api/v6/passwords.json');
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.headers['authorization']).toBe(`Basic ${Buffer.from('admin:pw').toString('base64')}`);
    expect(r.body.length).toBe(0);
    expect(ex.request).toEqual({
      method: 'GET',
      url: `${stub.url}/index.php/api/v6/passwords.json`,
      headers: { 'Content-Type': 'application/json; charset=utf-8', Authorization: r.headers['authorization'] },
    });
    expect(ex.response?.status).toBe(200);
    expect(ex.response?.headers['link']).toBe('<http://x/2.json>; rel="next"');
    expect(ex.json).toEqual({ id: 12 });
    expect(ex.error).toBeUndefined();
    expect(ex.durationMs).toBeGreaterThanOrEqual(0);
  });

  test('POST json: exactly JSON.stringify bytes, UTF-8', async () => {
    const ex = await client.post('/projects.json', { name: 'pmv6-ü-✓', parent_id: 0 });
    expect(last().body.toString('utf8')).toBe('{"name":"pmv6-ü-✓","parent_id":0}');
    expect(last().headers['content-length']).toBe(String(Buffer.byteLength('{"name":"pmv6-ü-✓","parent_id":0}')));
    expect(ex.request.body).toBe('{"name":"pmv6-ü-✓","parent_id":0}');
    expect(ex.response?.status).toBe(201);
  });

  test('a long body goes out in pieces: the same bytes, its Content-Length, its HMAC, the text kept once as request.body', async () => {
    const name = 'é😀x'.repeat(30_000);
    const hmac = new ApiClient({ target: stub.url, auth: { kind: 'hmac', publicKey: 'pub', privateKey: 'priv', timestamp: 1 }, timeoutMs: 2_000 });
    try {
      const ex = await hmac.post('/passwords.json', { name });
      const sent = JSON.stringify({ name });
      expect(last().body.equals(Buffer.from(sent, 'utf8'))).toBe(true);
      expect(last().headers['content-length']).toBe(String(Buffer.byteLength(sent, 'utf8')));
      expect(last().headers['transfer-encoding']).toBeUndefined();
      expect(last().headers['x-request-hash']).toBe(
        hmacSign({ privateKey: 'priv', uri: 'api/v6/passwords.json', timestamp: 1, body: Buffer.from(sent, 'utf8') }),
      );
      expect(ex.request.body).toBe(sent);
      expect(ex.request.headers['content-length']).toBeUndefined();
      expect(ex.response?.status).toBe(201);
    } finally {
      await hmac.close();
    }
  });

  test('rawBody string and Buffer are sent byte for byte', async () => {
    await client.request({ method: 'PUT', path: '/passwords/1.json', rawBody: '{ "name" :\n "x" }' });
    expect(last().body.toString('utf8')).toBe('{ "name" :\n "x" }');
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    await client.request({ method: 'POST', path: '/passwords.json', rawBody: bytes });
    expect(last().body.equals(bytes)).toBe(true);
  });

  test('contentType null omits the header; a custom one replaces it; headers override case-insensitively', async () => {
    await client.post('/projects.json', { name: 'x' }, { contentType: null });
    expect(last().headers['content-type']).toBeUndefined();
    await client.post('/projects.json', { name: 'x' }, { contentType: 'text/plain' });
    expect(last().headers['content-type']).toBe('text/plain');
    const ex = await client.get('/passwords.json', { headers: { 'content-type': 'application/xml', 'X-Page-Size': '5' } });
    expect(last().headers['content-type']).toBe('application/xml');
    expect(last().headers['x-page-size']).toBe('5');
    expect(Object.keys(ex.request.headers).filter((k) => k.toLowerCase() === 'content-type')).toEqual(['content-type']);
  });

  test('auth none and raw', async () => {
    await client.get('/version.json', { auth: { kind: 'none' } });
    expect(last().headers['authorization']).toBeUndefined();
    await client.withAuth({ kind: 'raw', headers: { Authorization: 'Basic Zm9v' } }).get('/version.json');
    expect(last().headers['authorization']).toBe('Basic Zm9v');
  });

  test('url override is used as is (a Link target), path and query untouched', async () => {
    await client.request({ method: 'GET', path: '', url: `${stub.url}/index.php/api/v6/passwords/search/a%20b+c.json?x=1&y=%2F` });
    expect(last().url).toBe('/index.php/api/v6/passwords/search/a%20b+c.json?x=1&y=%2F');
  });

  test('DELETE 204: empty body, no json', async () => {
    const ex = await client.delete('/passwords/1.json');
    expect(ex.response).toMatchObject({ status: 204, body: '', validUtf8: true });
    expect(ex.json).toBeUndefined();
  });
});

describe('HMAC', () => {
  const keys = { publicKey: 'pub-0123456789', privateKey: 'priv-abcdef' };

  test('signs the path after index.php/ including the query, timestamp and exact body', async () => {
    const hmac = client.withAuth({ kind: 'hmac', ...keys, timestamp: 1732560000 });
    const body = '{"name":"x",  "project_id": 1}';
    await hmac.request({ method: 'POST', path: '/passwords.json?lang=en&q=a%20b', rawBody: body });
    const r = last();
    expect(r.headers['x-public-key']).toBe(keys.publicKey);
    expect(r.headers['x-request-timestamp']).toBe('1732560000');
    expect(r.headers['x-request-hash']).toBe(
      hmacSign({ privateKey: keys.privateKey, uri: 'api/v6/passwords.json?lang=en&q=a%20b', timestamp: 1732560000, body }),
    );
    expect(r.headers['authorization']).toBeUndefined();
  });

  test('the uri is taken from the URL sent, also for absolute URLs; timestamp defaults to now', async () => {
    const hmac = client.withAuth({ kind: 'hmac', ...keys });
    const before = Math.floor(Date.now() / 1000);
    await hmac.request({ method: 'GET', path: '', url: `${stub.url}/index.php/api/v6/passwords/page/2.json` });
    const ts = Number(last().headers['x-request-timestamp']);
    expect(ts).toBeGreaterThanOrEqual(before);
    expect(ts).toBeLessThanOrEqual(before + 2);
    expect(last().headers['x-request-hash']).toBe(hmacSign({ privateKey: keys.privateKey, uri: 'api/v6/passwords/page/2.json', timestamp: ts, body: '' }));
  });

  test('mutate: a changed part is hashed; a changed hash is sent; a changed timestamp is sent', async () => {
    let seen: unknown;
    const hmac = client.withAuth({
      kind: 'hmac',
      ...keys,
      timestamp: 100,
      mutate: (parts) => {
        seen = parts;
        return { uri: `/${parts.uri}` };
      },
    });
    await hmac.get('/version.json');
    expect(seen).toEqual({
      uri: 'api/v6/version.json',
      timestamp: '100',
      body: '',
      hash: hmacSign({ privateKey: keys.privateKey, uri: 'api/v6/version.json', timestamp: 100, body: '' }),
    });
    expect(last().headers['x-request-hash']).toBe(hmacSign({ privateKey: keys.privateKey, uri: '/api/v6/version.json', timestamp: 100, body: '' }));
    expect(last().url).toBe('/index.php/api/v6/version.json');

    await client.get('/version.json', { auth: { kind: 'hmac', ...keys, timestamp: 100, mutate: () => ({ hash: 'f'.repeat(64) }) } });
    expect(last().headers['x-request-hash']).toBe('f'.repeat(64));

    await client.get('/version.json', { auth: { kind: 'hmac', ...keys, timestamp: 100, mutate: () => ({ timestamp: '101' }) } });
    expect(last().headers['x-request-timestamp']).toBe('101');
    expect(last().headers['x-request-hash']).toBe(hmacSign({ privateKey: keys.privateKey, uri: 'api/v6/version.json', timestamp: 101, body: '' }));
  });
});

describe('responses', () => {
  test('non-JSON text: no json, all header lines kept', async () => {
    const ex = await client.get('/text');
    expect(ex.response?.body).toBe('not json ✓');
    expect(ex.response?.validUtf8).toBe(true);
    expect(ex.response?.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(ex.json).toBeUndefined();
  });

  test('invalid UTF-8 is flagged', async () => {
    const ex = await client.get('/latin1');
    expect(ex.response?.validUtf8).toBe(false);
    expect(ex.response?.body).toBe('caf\uFFFD');
  });
});

describe('transport errors return an exchange, never throw', () => {
  test('a hung request times out after timeoutMs', async () => {
    const ex = await client.get('/slow');
    expect(ex.response).toBeUndefined();
    expect(ex.error).toMatch(/^request timed out after 500 ms/);
    expect(ex.durationMs).toBeGreaterThanOrEqual(450);
  });

  test('a per-request timeout', async () => {
    const ex = await client.get('/slow', { timeoutMs: 100 });
    expect(ex.error).toMatch(/^request timed out after 100 ms/);
  });

  test('the deadline covers the whole body: a body dripping a byte every 100 ms ends at timeoutMs', async () => {
    const started = Date.now();
    const ex = await client.get('/drip');
    expect(ex.response).toBeUndefined();
    expect(ex.error).toMatch(
      /^request timed out after 500 ms: no complete response \(headers and body\) to GET http:\/\/127\.0\.0\.1:\d+\/index\.php\/api\/v6\/drip \(--timeout\)$/,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  test.each([
    ['announced by Content-Length', '/big/announced'],
    ['streamed without a length', '/big/streamed'],
  ])('a body beyond maxResponseBytes (%s) is abandoned with one line naming the URL and the cap', async (_name, path) => {
    const capped = new ApiClient({ target: stub.url, auth: { kind: 'none' }, timeoutMs: 5_000, maxResponseBytes: 1024 * 1024 });
    const ex = await capped.get(path);
    await capped.close();
    expect(ex.response).toBeUndefined();
    expect(ex.error).toBe(
      `the response to GET ${stub.url}/index.php/api/v6${path} exceeded the cap of 1048576 bytes (--max-response-bytes); the rest was not read`,
    );
  });

  test('a body at the cap is read whole', async () => {
    const capped = new ApiClient({ target: stub.url, auth: { kind: 'none' }, timeoutMs: 5_000, maxResponseBytes: 10 * 1024 * 1024 });
    const ex = await capped.get('/big/announced');
    await capped.close();
    // Read whole (its length is the whole body's), then slimmed once the listeners judged it.
    expect(ex.slimmed).toBe(10 * 1024 * 1024);
    expect(ex.response?.body).toMatch(/…\[cut: \d+ bytes\]$/);
  });

  test('connection refused', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const dead = new ApiClient({ target: `http://127.0.0.1:${port}`, auth: { kind: 'none' }, timeoutMs: 1000 });
    const ex = await dead.get('/version.json');
    await dead.close();
    expect(ex.response).toBeUndefined();
    expect(ex.error).toMatch(/ECONNREFUSED/);
    expect(ex.request.url).toBe(`http://127.0.0.1:${port}/index.php/api/v6/version.json`);
  });

  test('an unusable method becomes an error too; an unusable URL is never sent', async () => {
    await expect(client.request({ method: 'GET', path: '', url: 'not a url' })).rejects.toBeInstanceOf(OffTargetError);
    expect((await client.request({ method: 'GE T', path: '/version.json' })).error).toBeDefined();
  });
});

test('derived clients share the pool; closing one leaves the root usable', async () => {
  const derived = client.withAuth({ kind: 'none' });
  await derived.close();
  const ex = await client.get('/version.json');
  expect(ex.response?.status).toBe(200);
});
