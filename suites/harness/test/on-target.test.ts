import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { type Exchange, keptExchange, nestsDeeperThan } from '../../../core/exchange.ts';
import { parseLinkHeader } from '../../../core/link.ts';
import { onTarget } from '../../../load/k6/lib/iterations.js';
import { expectStatus, NoResponseError, UnverifiableError } from '../assert.ts';
import { ApiClient, isUnder, OffTargetError } from '../client.ts';
import { linkTarget } from '../pages.ts';
import { type Stub, sendJson, startStub } from './stub-server.ts';

const API = 'http://127.0.0.1:8080/pm/index.php/api/v6';
const started: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  for (const s of started.splice(0)) await s.close();
});

async function stub(handler: Parameters<typeof startStub>[0]): Promise<Stub> {
  const s = await startStub(handler);
  started.push(s);
  return s;
}

/** A raw HTTP/1.1 server: `answer(n, socket)` gets the number of the request on its connection. */
async function raw(answer: (n: number, socket: Socket) => void): Promise<{ url: string; ports: number[] }> {
  const ports: number[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    let n = 0;
    socket.on('data', (chunk) => {
      if (!chunk.includes('\r\n\r\n')) return;
      ports.push(socket.remotePort ?? 0);
      answer(++n, socket);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  started.push({
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, ports };
}

/** The pool marks a connection free a moment after its body is read; then the next request reuses it. */
const settle = () => new Promise((r) => setTimeout(r, 50));

const OK = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n';

describe('credentials go only to the target', () => {
  test.each([
    [`${API}/passwords/page/2.json`, true],
    [`${API}`, true],
    ['HTTP://127.0.0.1:8080/pm/index.php/api/v6/passwords.json', true],
    ['http://127.0.0.1:8081/pm/index.php/api/v6/passwords.json', false],
    ['https://127.0.0.1:8080/pm/index.php/api/v6/passwords.json', false],
    ['http://elsewhere.test/pm/index.php/api/v6/passwords.json', false],
    ['http://127.0.0.1:8080/index.php/api/v6/passwords.json', false],
    ['http://127.0.0.1:8080/pm/index.php/api/v6x/passwords.json', false],
    [`${API}/../../../other/passwords.json`, false],
    [`${API}/%2e%2e/%2E%2E/x.json`, false],
    [`${API}/..\\..\\x.json`, false],
    ['http://user:pw@127.0.0.1:8080/pm/index.php/api/v6/passwords.json', false],
    ['not a url', false],
  ])('%s under the API root: %s (client and load engines alike)', (url, under) => {
    expect(isUnder(url, API)).toBe(under);
    if (!url.startsWith('HTTP:')) expect(onTarget(url, API)).toBe(under && url !== API);
  });

  test('a Link URL on another origin is never requested: the client refuses it before sending', async () => {
    const other = await stub((_req, res) => sendJson(res, 200, []));
    const target = await stub((_req, res) => sendJson(res, 200, [{ id: 1 }], { link: `<${other.url}/index.php/api/v6/passwords/page/2.json>; rel="next"` }));
    const client = new ApiClient({ target: target.url, auth: { kind: 'basic', user: 'admin', password: 'pw' }, timeoutMs: 2_000 });
    try {
      const page = await client.get('/passwords.json');
      const next = parseLinkHeader(page.response?.headers['link'] as string).entries[0]!.url;
      expect(() => linkTarget(page, next)).toThrow(UnverifiableError);
      await expect(client.request({ method: 'GET', path: '', url: next })).rejects.toBeInstanceOf(OffTargetError);
      expect(other.received).toEqual([]);
      // Relative references stay on the target and are followed.
      expect(linkTarget(page, 'passwords/page/2.json')).toBe(`${target.url}/index.php/api/v6/passwords/page/2.json`);
    } finally {
      await client.close();
    }
  });
});

describe('only the server can violate a clause', () => {
  test('a connection the server closed while idle: the GET is sent once more and answered', async () => {
    // The second request on a connection meets a socket the server closes without answering.
    const server = await raw((n, socket) => (n === 1 ? socket.write(`${OK}\r\n[]`) : socket.destroy()));
    const client = new ApiClient({ target: server.url, auth: { kind: 'none' }, timeoutMs: 2_000 });
    try {
      expect((await client.get('/a.json')).response?.status).toBe(200);
      await settle();
      const again = await client.get('/b.json');
      expect(again.error).toBeUndefined();
      expect(again.response?.status).toBe(200);
      expect(server.ports.length).toBe(3);
      expect(server.ports[2]).not.toBe(server.ports[1]);
    } finally {
      await client.close();
    }
  });

  test('Keep-Alive: timeout=1 is honoured: the next request opens a new connection', async () => {
    const hinted = await raw((_n, socket) => socket.write(`${OK}keep-alive: timeout=1\r\n\r\n[]`));
    const plain = await raw((_n, socket) => socket.write(`${OK}\r\n[]`));
    const a = new ApiClient({ target: hinted.url, auth: { kind: 'none' }, timeoutMs: 2_000 });
    const b = new ApiClient({ target: plain.url, auth: { kind: 'none' }, timeoutMs: 2_000 });
    try {
      for (const c of [a, b]) {
        await c.get('/one.json');
        await settle();
        await c.get('/two.json');
      }
      expect(hinted.ports[0]).not.toBe(hinted.ports[1]);
      expect(plain.ports[0]).toBe(plain.ports[1]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('a request on a client the harness closed is cancelled, not the target failing and never a violation', async () => {
    const target = await stub((_req, res) => sendJson(res, 200, []));
    const client = new ApiClient({ target: target.url, auth: { kind: 'none' }, timeoutMs: 2_000 });
    await client.close();
    const ex = await client.get('/passwords.json');
    expect(ex.error).toMatch(/UND_ERR_(CLOSED|DESTROYED)/);
    expect(ex.cancelled).toBe(true);
    expect(() => expectStatus(ex, 200)).toThrow(/^harness: the request was cancelled by pmv6/);
  });

  test('a connection refused persists: the target failing with its cause, not a violation', async () => {
    const server = await raw((_n, socket) => socket.destroy());
    const client = new ApiClient({ target: server.url, auth: { kind: 'none' }, timeoutMs: 2_000 });
    try {
      const ex = await client.get('/passwords.json');
      expect(ex.cancelled).toBeUndefined();
      let thrown: unknown;
      try {
        expectStatus(ex, 200);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(NoResponseError);
      expect((thrown as Error).message).toMatch(/^the target gave no response: UND_ERR_SOCKET/);
      // Decision (issue 39): a request is sent again only when it was lost on a reused connection;
      // a new connection closed before any byte is the target failing, asked once.
      expect(server.ports.length).toBe(1);
    } finally {
      await client.close();
    }
  });
});

describe('bounded whatever the reply', () => {
  test('1 MB body, a 14 KB Link header with 1,500 empty parameters, JSON 100,000 deep', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const long = `<http://x/index.php/api/v6/passwords.json>${'; x=""'.repeat(1_500)}; rel="self"`;
    const target = await stub((req, res) => {
      if (req.url.includes('deep')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(deep);
      } else sendJson(res, 200, { pad: 'p'.repeat(1024 * 1024) }, { link: long });
    });
    const client = new ApiClient({ target: target.url, auth: { kind: 'none' }, timeoutMs: 5_000 });
    try {
      const big = await client.get('/passwords.json');
      // Checks see the whole reply …
      // Read and parsed whole, then slimmed once judged: the structure stays, the long string is cut.
      expect(big.slimmed).toBeGreaterThan(1024 * 1024);
      expect(big.response!.body.length).toBeLessThan(5000);
      expect((big.json as { pad: string }).pad).toMatch(/^p{4096}…\[cut: \d+ bytes\]$/);
      // … what is kept is cut.
      const kept = keptExchange(big);
      expect(JSON.stringify(kept).length).toBeLessThan(12_000);
      expect(kept.response?.headers['link']).toMatch(/…\[cut: \d+ bytes\]$/);
      expect(parseLinkHeader(long).errors.join('\n').length).toBeLessThan(4_000);
      const d: Exchange = await client.get('/deep.json');
      expect(d.jsonTooDeep).toBe(true);
      expect(d.json).toBeUndefined();
      expect(nestsDeeperThan('{"a":"[[[[[[[[[["}', 3)).toBe(false);
      // At the limit, past it, and many brackets that do not nest (the count alone cannot say).
      expect(nestsDeeperThan('[[[{}]]]', 4)).toBe(false);
      expect(nestsDeeperThan('[[[{}]]]', 3)).toBe(true);
      expect(nestsDeeperThan('[{"a":[1]},{"b":[2]},{"c":[3]}]', 3)).toBe(false);
      expect(nestsDeeperThan(`${'['.repeat(300)}${']'.repeat(300)}`)).toBe(true);
      expect(nestsDeeperThan(`[${'[],'.repeat(300)}[]]`)).toBe(false);
    } finally {
      await client.close();
    }
  });
});

describe('the load iterations follow no Link outside the API', () => {
  test('walk stops at a rel="next" on another origin: a failed check, nothing sent there', async () => {
    const sent: string[] = [];
    const checks: Record<string, boolean> = {};
    const api = 'http://127.0.0.1:8080/index.php/api/v6';
    const io = {
      api,
      runTag: 't',
      sampleBody: () => false,
      check: (name: string, ok: boolean) => {
        checks[name] = (checks[name] ?? true) && ok;
        return ok;
      },
      send: async (_method: string, url: string) => {
        sent.push(url);
        if (url.endsWith('count.json')) return { status: 200, link: undefined, body: JSON.stringify({ num_items: 10, num_pages: 2, num_items_per_page: 5 }) };
        return {
          status: 200,
          link: `<${api}/passwords.json>; rel="self", <http://elsewhere.test/index.php/api/v6/passwords/page/2.json>; rel="next"`,
          body: undefined,
        };
      },
    };
    const { walk } = await import('../../../load/k6/lib/iterations.js');
    await walk(io as never, { pageSizes: [5] } as never, 0);
    expect(sent.some((u) => u.includes('elsewhere'))).toBe(false);
    expect(checks['walk: rel="next" stays on the target']).toBe(false);
  });
});
