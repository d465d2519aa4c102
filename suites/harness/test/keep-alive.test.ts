// Issue 39: no request lost to a connection the target closes. A raw HTTP/1.1 server that acts
// like a front end: it closes idle connections after its own timeout (without a Keep-Alive
// header, as nginx does), and, when told, drops a request that arrives on a reused connection
// without answering it (the race of a request written as the front end closes).
import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { DEFAULT_IDLE_MS, forgetIdleLimits, idleLimitOf, safeIdleMs } from '../../../core/keep-alive.ts';
import { ApiClient } from '../client.ts';

interface Front {
  url: string;
  /** names of the projects created */
  created: string[];
  /** requests answered, by method and path */
  answered: string[];
  /** requests dropped unanswered */
  dropped: string[];
  connections: number;
  close(): Promise<void>;
}

/**
 * `idleMs`: closes a connection this long after its last answer. `drop(method, path, nth)`: the
 * first request it is true for (nth: the request's place on its connection, from 1) is dropped
 * with the connection, unanswered; `landed` decides whether a dropped POST still made its project.
 */
async function startFront(opts: { idleMs: number; drop?: (method: string, path: string, nth: number) => boolean; landed?: boolean }): Promise<Front> {
  const front: Front = { url: '', created: [], answered: [], dropped: [], connections: 0, close: async () => {} };
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    front.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffered = Buffer.alloc(0);
    let nth = 0;
    let idle: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => socket.end(), opts.idleMs);
    };
    arm();
    socket.on('data', (chunk: Buffer) => {
      clearTimeout(idle);
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffered.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const body = buffered.subarray(end + 4, end + 4 + length).toString('utf8');
        buffered = buffered.subarray(end + 4 + length);
        const [method = '', target = ''] = head.split(' ');
        const path = target.replace(/^.*\/api\/v6/, '');
        nth++;
        if (front.dropped.length === 0 && opts.drop?.(method, path, nth)) {
          front.dropped.push(`${method} ${path}`);
          if (method === 'POST' && opts.landed) front.created.push(JSON.parse(body).name);
          socket.destroy();
          return;
        }
        front.answered.push(`${method} ${path}`);
        let status = 200;
        let json: unknown = { ok: true };
        if (method === 'POST' && path === '/projects.json') {
          front.created.push(JSON.parse(body).name);
          status = 201;
          json = { id: front.created.length };
        } else if (path.startsWith('/projects/search/')) {
          const name = decodeURIComponent(path.split('/')[3] ?? '');
          json = front.created.map((n, i) => ({ id: i + 1, name: n })).filter((p) => p.name === name);
        }
        const text = JSON.stringify(json);
        socket.write(`HTTP/1.1 ${status} OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
        arm();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  front.url = `http://127.0.0.1:${port}`;
  front.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return front;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

function clientOf(front: Front): ApiClient {
  const c = new ApiClient({ target: front.url, auth: { kind: 'basic', user: 'admin', password: 'keep-alive-test' }, timeoutMs: 5_000 });
  open.push(c);
  return c;
}

describe('one idle limit per origin for the process', () => {
  test('forgetIdleLimits: an origin something was learned of starts again at the default (a new server on the port of a closed one)', () => {
    const origin = 'http://127.0.0.1:9';
    idleLimitOf(origin).header('timeout=1');
    expect(idleLimitOf(origin).ms).toBeLessThan(DEFAULT_IDLE_MS);
    forgetIdleLimits();
    expect(idleLimitOf(origin).ms).toBe(DEFAULT_IDLE_MS);
    expect(idleLimitOf(origin).source).toBe('default');
  });
});

describe('kept-alive connections (issue 39)', () => {
  test('the idle timeout of a front end that closes after 600 ms is learned from its first close: no request goes out on a connection idle beyond the limit', async () => {
    const front = await startFront({ idleMs: 600 });
    open.push(front);
    const client = clientOf(front);
    expect((await client.get('/version.json')).response?.status).toBe(200);
    // The front end closes the idle connection; the client sees it and learns.
    await sleep(800);
    expect(client.connections.idle.source).toBe('observed close');
    expect(client.connections.idle.ms).toBeLessThanOrEqual(safeIdleMs(800));
    expect(client.connections.idle.ms).toBeGreaterThanOrEqual(safeIdleMs(550));
    // From now on, a connection idle for longer than the limit is closed by the client first.
    for (let i = 0; i < 4; i++) {
      const ex = await client.get('/version.json');
      expect(ex.error).toBeUndefined();
      expect(ex.retried).toBeUndefined();
      await sleep(client.connections.idle.ms + 150);
    }
    expect(front.dropped).toEqual([]);
  }, 15_000);

  test('a Keep-Alive: timeout=N header sets the limit a margin below it', async () => {
    const { IdleLimit } = await import('../../../core/keep-alive.ts');
    const limit = new IdleLimit();
    limit.header('timeout=5, max=100');
    expect(limit.ms).toBe(3_750);
    limit.header('timeout=1');
    expect(limit.ms).toBe(750);
    limit.header('timeout=30');
    expect(limit.ms).toBe(750);
  });

  test('a GET lost on a reused connection (no byte of its answer) is sent once more, and the exchange says so', async () => {
    const front = await startFront({ idleMs: 10_000, drop: (m, _p, nth) => m === 'GET' && nth >= 2 });
    open.push(front);
    const client = clientOf(front);
    await client.get('/version.json');
    await client.get('/version.json');
    const ex = await client.get('/passwords.json');
    expect(ex.response?.status).toBe(200);
    expect(ex.retried).toMatch(/sent again on a new connection/);
    expect(front.dropped).toEqual(['GET /passwords.json']);
    expect(client.connections.retried).toBe(1);
  });

  test('the control client shares the limit its API client learned of the same front end', async () => {
    const front = await startFront({ idleMs: 600 });
    open.push(front);
    const api = clientOf(front);
    // as ControlClient makes it: its own client and pool, the same origin
    const control = new ApiClient({ target: `${front.url}/__control`, auth: { kind: 'none' }, timeoutMs: 5_000, channel: 'control' });
    open.push(control);
    expect((await api.get('/version.json')).response?.status).toBe(200);
    await sleep(800);
    expect(api.connections.idle.source).toBe('observed close');
    // Learned by the API client alone (the control client, speaking seldom, would keep 4 s).
    expect(control.connections.idle.source).toBe('observed close');
    expect(control.connections.idle.ms).toBe(api.connections.idle.ms);
    expect((await control.get('/settings')).response?.status).toBe(200);
  }, 15_000);

  test('a limit learned as 0 (a close seen 160 ms after an answer) means no reuse, not requests refused by undici', async () => {
    const front = await startFront({ idleMs: 10_000 });
    open.push(front);
    const client = clientOf(front);
    client.connections.idle.closedAfter(160);
    expect(client.connections.idle.ms).toBe(0);
    const ex = await client.get('/version.json');
    expect(ex.error).toBeUndefined();
    expect(ex.response?.status).toBe(200);
  });

  test('a create lost on a reused connection is sent again only after the lists show its name did not land: made once', async () => {
    const front = await startFront({ idleMs: 10_000, drop: (m, _p, nth) => m === 'POST' && nth >= 2 });
    open.push(front);
    const client = clientOf(front);
    await client.get('/version.json');
    await client.get('/version.json');
    const name = 'pmv6-run1-ab12-project-1';
    const ex = await client.post('/projects.json', { name });
    expect(ex.response?.status).toBe(201);
    expect(ex.retried).toMatch(/did not show its name/);
    expect(front.created).toEqual([name]);
    expect(front.answered).toContain(`GET /projects/search/${name}/page/1.json`);
  });

  test('a create that landed before its connection closed is not sent again: never made twice, the lost answer stays an error of ours', async () => {
    const front = await startFront({ idleMs: 10_000, drop: (m, _p, nth) => m === 'POST' && nth >= 2, landed: true });
    open.push(front);
    const client = clientOf(front);
    await client.get('/version.json');
    await client.get('/version.json');
    const name = 'pmv6-run1-ab12-project-2';
    const ex = await client.post('/projects.json', { name });
    expect(ex.response).toBeUndefined();
    expect(ex.error).toMatch(/UND_ERR_SOCKET|ECONNRESET|other side closed/);
    expect(ex.retried).toBeUndefined();
    expect(front.created).toEqual([name]);
  });

  test('a POST the harness cannot look for by name (not a creation of the run) is never sent twice', async () => {
    const front = await startFront({ idleMs: 10_000, drop: (m, _p, nth) => m === 'POST' && nth >= 2 });
    open.push(front);
    const client = clientOf(front);
    await client.get('/version.json');
    await client.get('/version.json');
    const ex = await client.post('/projects.json', { name: 'not-the-runs' });
    expect(ex.response).toBeUndefined();
    expect(front.dropped).toHaveLength(1);
    expect(front.created).toEqual([]);
  });
});
