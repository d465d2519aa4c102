// Issue 39: no request lost to a connection the target closes. A raw HTTP/1.1 server that acts
// like a front end: it closes idle connections after its own timeout (without a Keep-Alive
// header, as nginx does), and, when told, drops a request that arrives on a reused connection
// without answering it (the race of a request written as the front end closes).
import { stat } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, test } from 'vitest';
import { DEFAULT_IDLE_MS, forgetIdleLimits, idleLimitOf, safeIdleMs } from '../../../core/keep-alive.ts';
import { ApiClient } from '../client.ts';
import { closeRunPools, openRunPools } from '../connections.ts';

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
async function startFront(opts: {
  idleMs: number;
  /** `idleMs`: how long the connection sat idle (by the front end's clock) before this request came */
  drop?: (method: string, path: string, nth: number, idleMs: number) => boolean;
  landed?: boolean;
  /** answer a request without an Authorization header 401, as an installation does */
  refuseAnonymous?: boolean;
  /** send `Keep-Alive: timeout=N` (seconds) with every answer */
  announce?: number;
}): Promise<Front> {
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
    let answeredAt = Date.now();
    const arm = () => {
      answeredAt = Date.now();
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
        if (front.dropped.length === 0 && opts.drop?.(method, path, nth, Date.now() - answeredAt)) {
          front.dropped.push(`${method} ${path}`);
          if (method === 'POST' && opts.landed) front.created.push(JSON.parse(body).name);
          socket.destroy();
          return;
        }
        front.answered.push(`${method} ${path}`);
        let status = 200;
        let json: unknown = { ok: true };
        if (opts.refuseAnonymous && !/\r\nauthorization:/i.test(head)) {
          status = 401;
          json = { error: true, type: 'Unauthorized', message: 'no credentials' };
        } else if (method === 'POST' && path === '/projects.json') {
          front.created.push(JSON.parse(body).name);
          status = 201;
          json = { id: front.created.length };
        } else if (path.startsWith('/projects/search/')) {
          const name = decodeURIComponent(path.split('/')[3] ?? '');
          json = front.created.map((n, i) => ({ id: i + 1, name: n })).filter((p) => p.name === name);
        }
        const text = JSON.stringify(json);
        const announced = opts.announce === undefined ? '' : `keep-alive: timeout=${opts.announce}\r\n`;
        socket.write(`HTTP/1.1 ${status} OK\r\ncontent-type: application/json\r\n${announced}content-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
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
    for (let waited = 0; api.connections.idle.source === 'default' && waited < 5_000; waited += 100) await sleep(100);
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

  test("a request that may not be sent twice goes on a connection idle at most 100 ms: lost neither when the front end's clock runs ahead of ours", async () => {
    // Our limit is 4 s; the front end (loaded: its close and our reading of its answer apart)
    // drops what comes on a connection idle 300 ms by its clock.
    const front = await startFront({ idleMs: 60_000, drop: (_m, _p, nth, idleMs) => nth >= 2 && idleMs > 300 });
    open.push(front);
    const client = clientOf(front);
    expect((await client.post('/passwords/1/lock.json', {})).response?.status).toBe(200);
    await sleep(400);
    const ex = await client.post('/passwords/1/lock.json', {});
    expect(ex.error).toBeUndefined();
    expect(ex.response?.status).toBe(200);
    expect(front.dropped).toEqual([]);
  });

  test('a 401 probe with the body of a creation (no lists to read it back with) goes on a connection idle at most 100 ms: not lost', async () => {
    // The front end's clock ahead of ours: it drops what comes on a connection idle 300 ms by it.
    const front = await startFront({ idleMs: 60_000, refuseAnonymous: true, drop: (_m, _p, nth, idleMs) => nth >= 2 && idleMs > 300 });
    open.push(front);
    const anonymous = clientOf(front).withAuth({ kind: 'none' });
    const body = { name: 'pmv6-run1-ab12-ep-project-1', parent_id: 0 };
    expect((await anonymous.post('/projects.json', body)).response?.status).toBe(401);
    await sleep(400);
    const ex = await anonymous.post('/projects.json', body);
    expect(ex.error).toBeUndefined();
    expect(ex.response?.status).toBe(401);
    expect(front.dropped).toEqual([]);
  });

  test('a target that announces a long idle timeout (Keep-Alive: timeout=30, as the reference server) keeps a POST on the connection it has; one that announces 5 s does not', async () => {
    /** The connections a GET, then two POSTs 300 ms apart, take on a front end announcing `seconds`. */
    const connectionsAt = async (seconds: number) => {
      const front = await startFront({ idleMs: seconds * 1000, announce: seconds });
      open.push(front);
      const client = clientOf(front);
      // A first answer announces the timeout (the careful pool is made anew then).
      expect((await client.get('/version.json')).response?.status).toBe(200);
      for (const pause of [0, 300]) {
        await sleep(pause);
        expect((await client.post('/passwords/1/lock.json', {})).response?.status).toBe(200);
      }
      return front.connections;
    };
    expect(await connectionsAt(30)).toBe(2);
    // Apache's default announces 5 s: the margin is not many times a loaded machine's lag.
    expect(await connectionsAt(5)).toBe(3);
  });

  test('a close seen sooner than the announced timeout puts the careful pool back at 100 ms', async () => {
    // Announces 30 s, closes after 600 ms.
    const front = await startFront({ idleMs: 600, announce: 30 });
    open.push(front);
    const client = clientOf(front);
    expect((await client.get('/version.json')).response?.status).toBe(200);
    await sleep(900);
    expect(client.connections.idle.source).toBe('observed close');
    expect((await client.post('/passwords/1/lock.json', {})).response?.status).toBe(200);
    await sleep(300);
    expect((await client.post('/passwords/1/lock.json', {})).response?.status).toBe(200);
    expect(front.connections).toBe(3);
    expect(front.dropped).toEqual([]);
  });

  test('a request given a connection idle past the limit by a late timer (a busy event loop) is not written on it: it goes on a new one', async () => {
    // undici closes idle connections by a timer; a loop busy past the limit runs it after the
    // next request was given the connection. The front end closes at 250 ms idle by its clock.
    const front = await startFront({ idleMs: 60_000, drop: (_m, _p, nth, idleMs) => nth >= 2 && idleMs > 250 });
    open.push(front);
    const client = clientOf(front);
    expect((await client.post('/passwords/1/lock.json', {})).response?.status).toBe(200);
    // Busy in an I/O callback (the poll phase): the request is given its connection before the
    // loop reaches the timers.
    await new Promise((resolve) => stat('.', resolve));
    const busyUntil = performance.now() + 300;
    while (performance.now() < busyUntil);
    const ex = await client.post('/passwords/1/lock.json', {});
    expect(ex.error).toBeUndefined();
    expect(ex.response?.status).toBe(200);
    expect(front.dropped).toEqual([]);
    expect(client.connections.stale).toBe(1);
    expect(front.connections).toBe(2);
  });

  test('a create lost on a reused connection is sent again only after the lists show its name did not land: made once', async () => {
    const front = await startFront({ idleMs: 10_000, drop: (m, p, nth) => m === 'POST' && p === '/projects.json' && nth >= 2 });
    open.push(front);
    const client = clientOf(front);
    // The connection a create goes on (a request not idempotent: the careful pool) carried one before.
    await client.post('/passwords/1/lock.json', {});
    await client.post('/passwords/1/lock.json', {});
    const name = 'pmv6-run1-ab12-project-1';
    const ex = await client.post('/projects.json', { name });
    expect(ex.response?.status).toBe(201);
    expect(ex.retried).toMatch(/did not show its name/);
    expect(front.created).toEqual([name]);
    expect(front.answered).toContain(`GET /projects/search/${name}/page/1.json`);
  });

  test('a create with a long body (sent in pieces) lost on a reused connection is sent again whole: a fresh stream, made once', async () => {
    const front = await startFront({ idleMs: 10_000, drop: (m, p, nth) => m === 'POST' && p === '/projects.json' && nth >= 2 });
    open.push(front);
    const client = clientOf(front);
    await client.post('/passwords/1/lock.json', {});
    await client.post('/passwords/1/lock.json', {});
    const name = 'pmv6-run1-ab12-project-2';
    const ex = await client.post('/projects.json', { name, notes: 'n'.repeat(200_000) });
    expect(ex.response?.status).toBe(201);
    expect(ex.retried).toMatch(/did not show its name/);
    expect(front.dropped).toEqual(['POST /projects.json']);
    expect(front.created).toEqual([name]);
  });

  test('a create that landed before its connection closed is not sent again: never made twice, the lost answer stays an error of ours', async () => {
    const front = await startFront({ idleMs: 10_000, drop: (m, p, nth) => m === 'POST' && p === '/projects.json' && nth >= 2, landed: true });
    open.push(front);
    const client = clientOf(front);
    // The connection a create goes on (a request not idempotent: the careful pool) carried one before.
    await client.post('/passwords/1/lock.json', {});
    await client.post('/passwords/1/lock.json', {});
    const name = 'pmv6-run1-ab12-project-2';
    const ex = await client.post('/projects.json', { name });
    expect(ex.response).toBeUndefined();
    expect(ex.error).toMatch(/UND_ERR_SOCKET|ECONNRESET|other side closed/);
    expect(ex.retried).toBeUndefined();
    expect(front.created).toEqual([name]);
  });

  test('a POST the harness cannot look for by name (not a creation of the run) is never sent twice', async () => {
    const front = await startFront({ idleMs: 10_000, drop: (m, p) => m === 'POST' && p === '/projects.json' });
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

describe("a run's connection pools (issue 38)", () => {
  test("during a run the root clients of one origin share one pool: a file's new clients reuse the connections of those before; outside a run each has its own", async () => {
    const front = await startFront({ idleMs: 5_000 });
    open.push(front);
    const firstClient: number[] = [];
    openRunPools();
    try {
      for (let i = 0; i < 3; i++) {
        const client = clientOf(front);
        for (let j = 0; j < 3; j++) expect((await client.get('/version.json')).response?.status).toBe(200);
        // A file's session closes its clients: the run's pool stays open.
        await client.close();
        firstClient.push(front.connections);
      }
    } finally {
      await closeRunPools();
    }
    expect(firstClient[2]).toBe(firstClient[0]);
    const before = front.connections;
    for (let i = 0; i < 2; i++) {
      const client = clientOf(front);
      expect((await client.get('/version.json')).response?.status).toBe(200);
    }
    expect(front.connections).toBe(before + 2);
  });
});
