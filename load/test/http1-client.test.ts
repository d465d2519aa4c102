// The engine's HTTP/1.1 client against servers written byte by byte: framing (Content-Length,
// chunked, until close, heads and bodies split anywhere), the deadline of a whole request, the
// cap on a response's bytes, and a kept-alive connection the server has closed.
import { spawn } from 'node:child_process';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TargetError } from '../../core/errors.ts';
import { selfSignedCertificate } from '../../targets/tls.ts';
import { runLoad } from '../engine/engine.ts';
import { Http1Pool, RequestTimeout, ResponseTooLarge } from '../engine/http1.ts';
import { loadScenario } from '../engine/scenario.ts';

const servers: Server[] = [];
const pools: Http1Pool[] = [];
afterEach(async () => {
  for (const p of pools.splice(0)) p.close();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A server that answers each request (head read up to CRLFCRLF, body ignored) with `answer`. */
async function rawServer(answer: (socket: Socket, request: string, n: number) => void): Promise<string> {
  let n = 0;
  const server = createServer((socket) => {
    let pending = '';
    socket.on('data', (d) => {
      pending += d.toString('latin1');
      let end: number;
      while ((end = pending.indexOf('\r\n\r\n')) >= 0) {
        const head = pending.slice(0, end);
        pending = pending.slice(end + 4);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        pending = pending.slice(length);
        answer(socket, head, n++);
      }
    });
    socket.on('error', () => undefined);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function pool(origin: string, o: { timeoutMs?: number; maxResponseBytes?: number } = {}): Http1Pool {
  const p = new Http1Pool({ origin, connections: 2, timeoutMs: o.timeoutMs ?? 5_000, maxResponseBytes: o.maxResponseBytes ?? 1 << 20 });
  pools.push(p);
  return p;
}

/** Writes `bytes` (one char per byte) in pieces of `step` bytes, one per event-loop turn. */
function dribble(socket: Socket, bytes: string, step: number): void {
  let at = 0;
  const next = () => {
    if (at >= bytes.length || socket.destroyed) return;
    socket.write(Buffer.from(bytes.slice(at, at + step), 'latin1'));
    at += step;
    setImmediate(next);
  };
  next();
}

const BODY = JSON.stringify(Array.from({ length: 50 }, (_, i) => ({ id: i, name: `é ${i}` })));

describe('the engine HTTP/1.1 client', () => {
  it('reads Content-Length and chunked bodies and joins Link headers, whatever the read boundaries', async () => {
    const origin = await rawServer((socket, _req, n) => {
      const body = Buffer.from(BODY);
      const response =
        n % 2 === 0
          ? `HTTP/1.1 200 OK\r\nLink: <a>; rel="self"\r\nContent-Length: ${body.length}\r\nlink: <b>; rel="next"\r\n\r\n${body.toString('latin1')}`
          : `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nLink: <a>; rel="self"\r\n\r\n` +
            `7;ext=1\r\n${body.subarray(0, 7).toString('latin1')}\r\n${(body.length - 7).toString(16)}\r\n${body.subarray(7).toString('latin1')}\r\n0\r\nX-Trailer: 1\r\n\r\n`;
      dribble(socket, response, n < 2 ? 3 : 1000);
    });
    const p = pool(origin);
    for (let i = 0; i < 4; i++) {
      const r = await p.request('GET', `${origin}/x`, '', '', true);
      expect(r.status).toBe(200);
      expect(r.body).toBe(BODY);
      expect(r.link).toBe(i % 2 === 0 ? '<a>; rel="self", <b>; rel="next"' : '<a>; rel="self"');
    }
    const unread = await p.request('GET', `${origin}/x`, '', '', false);
    expect(unread.body).toBeUndefined();
    expect(unread.size).toBeGreaterThan(BODY.length);
  });

  it('reads a body delimited by the end of the connection, and skips 100 Continue', async () => {
    const origin = await rawServer((socket) => {
      socket.end(`HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nConnection: close\r\n\r\n${BODY}`);
    });
    const r = await pool(origin).request('GET', `${origin}/x`, '', '', true);
    expect(r.status).toBe(200);
    expect(r.body).toBe(BODY);
  });

  it('ends a request whose body keeps trickling in at its whole-request deadline', async () => {
    const origin = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n');
      const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write('x')), 20);
      socket.on('close', () => clearInterval(timer));
    });
    const t0 = performance.now();
    const e = await pool(origin, { timeoutMs: 300 })
      .request('GET', `${origin}/slow`, '', '', false)
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RequestTimeout);
    expect((e as Error).message).toBe(`no complete response to GET ${origin}/slow within 300 ms`);
    expect(performance.now() - t0).toBeLessThan(2_000);
  });

  it('stops reading a response beyond the byte cap, announced or streamed, with a one-line error naming the URL and the cap', async () => {
    const origin = await rawServer((socket, request) => {
      if (request.includes('/announced')) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 50000000\r\n\r\n');
      else {
        socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
        const chunk = `4000\r\n${'y'.repeat(0x4000)}\r\n`;
        const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write(chunk)), 1);
        socket.on('close', () => clearInterval(timer));
      }
    });
    const p = pool(origin, { maxResponseBytes: 100_000 });
    const announced = await p.request('GET', `${origin}/announced`, '', '', false).catch((x: unknown) => x);
    expect(announced).toBeInstanceOf(ResponseTooLarge);
    expect((announced as Error).message).toBe(`the response to GET ${origin}/announced announced 50000000 bytes, above the cap of 100000 bytes`);
    const streamed = await p.request('GET', `${origin}/streamed`, '', '', true).catch((x: unknown) => x);
    expect(streamed).toBeInstanceOf(ResponseTooLarge);
    expect((streamed as Error).message).toBe(`the response to GET ${origin}/streamed exceeded the cap of 100000 bytes`);
  });

  it('sends a GET again on a new connection when the server had closed the kept-alive one', async () => {
    const origin = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      setImmediate(() => socket.destroy());
    });
    const p = pool(origin);
    expect((await p.request('GET', `${origin}/a`, '', '', true)).body).toBe('ok');
    await new Promise((r) => setTimeout(r, 50));
    expect((await p.request('GET', `${origin}/b`, '', '', true)).body).toBe('ok');
  });

  const certificate = selfSignedCertificate();
  it.skipIf(!certificate)('speaks https: trusts the given CA, refuses an unknown certificate, accepts any with insecure', async () => {
    const server = createHttpsServer({ key: certificate!.key, cert: certificate!.cert }, (_req, res) => {
      res.writeHead(200, { link: '<x>; rel="self"' }).end(BODY);
    });
    servers.push(server as unknown as Server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const trusted = new Http1Pool({ origin, connections: 1, timeoutMs: 5_000, maxResponseBytes: 1 << 20, ca: certificate!.cert });
    const strict = new Http1Pool({ origin, connections: 1, timeoutMs: 5_000, maxResponseBytes: 1 << 20 });
    const insecure = new Http1Pool({ origin, connections: 1, timeoutMs: 5_000, maxResponseBytes: 1 << 20, insecure: true });
    pools.push(trusted, strict, insecure);
    for (let i = 0; i < 2; i++) expect((await trusted.request('GET', `${origin}/x`, '', '', true)).body).toBe(BODY);
    await expect(strict.request('GET', `${origin}/x`, '', '', true)).rejects.toThrow(/self[- ]signed|certificate/i);
    expect((await insecure.request('GET', `${origin}/x`, '', '', false)).status).toBe(200);
  });

  it('sends each request with its own method, path and header lines, also when the same URL comes again with others', async () => {
    const heads: string[] = [];
    const origin = await rawServer((socket, request) => {
      heads.push(request);
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
    });
    const p = pool(origin);
    const a = 'x-page-size: 20\r\n';
    const b = 'x-page-size: 1000\r\n';
    await p.request('GET', `${origin}/x?q=1`, a, '', false);
    await p.request('GET', `${origin}/x?q=1`, b, '', false);
    await p.request('GET', `${origin}/x?q=1`, a, '', false);
    await p.request('DELETE', `${origin}/x?q=1`, a, '', false);
    await p.request('POST', `${origin}/x?q=1`, a, '{"é":1}', false);
    await p.request('GET', origin, '', '', false);
    const host = new URL(origin).host;
    expect(heads).toEqual([
      `GET /x?q=1 HTTP/1.1\r\nhost: ${host}\r\n${a}`.trimEnd(),
      `GET /x?q=1 HTTP/1.1\r\nhost: ${host}\r\n${b}`.trimEnd(),
      `GET /x?q=1 HTTP/1.1\r\nhost: ${host}\r\n${a}`.trimEnd(),
      `DELETE /x?q=1 HTTP/1.1\r\nhost: ${host}\r\n${a}`.trimEnd(),
      `POST /x?q=1 HTTP/1.1\r\nhost: ${host}\r\n${a}content-length: 8`,
      `GET / HTTP/1.1\r\nhost: ${host}`,
    ]);
  });

  it('refuses a URL outside the target', async () => {
    const origin = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'));
    await expect(pool(origin).request('GET', 'http://example.com/x', '', '', false)).rejects.toThrow(/outside the target/);
  });
});

describe('pmv6 load on a hostile server', () => {
  it('a response beyond the cap ends the run as a target error naming the URL and the cap', async () => {
    const origin = await rawServer((socket, request) => {
      if (request.includes('version.json')) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\n{"api_version":6}');
      else socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 9000000\r\n\r\n`);
    });
    const run = runLoad({
      target: origin,
      credentials: { user: 'u', password: 'p' },
      scenario: loadScenario('large-pages'),
      vus: 1,
      durationMs: 10_000,
      maxResponseBytes: 1_000_000,
    });
    await expect(run).rejects.toThrow(TargetError);
    await expect(run).rejects.toThrow(
      `the response to GET ${origin}/index.php/api/v6/passwords/count.json announced 9000000 bytes, above the cap of 1000000 bytes`,
    );
  });

  it('a finished run leaves no timer behind: the process ends when the run does, not a request deadline later', async () => {
    const origin = await rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}'));
    const engine = new URL('../engine/engine.ts', import.meta.url).href;
    const scenario = new URL('../engine/scenario.ts', import.meta.url).href;
    const script =
      `const { runLoad } = await import(${JSON.stringify(engine)}); const { loadScenario } = await import(${JSON.stringify(scenario)});` +
      `await runLoad({ target: ${JSON.stringify(origin)}, credentials: { user: 'u', password: 'p' }, scenario: loadScenario('large-pages'),` +
      ` vus: 1, durationMs: 300, timeoutMs: 8000 });` +
      `process.stdout.write('finished\\n');`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    let finishedAt = 0;
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('finished')) finishedAt = performance.now();
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearTimeout(killer);
    expect(code).toBe(0);
    expect(finishedAt).toBeGreaterThan(0);
    expect(performance.now() - finishedAt, 'the process outlived the run by a request deadline').toBeLessThan(4_000);
  }, 40_000);

  it('a server that never finishes a response costs each request its deadline, and the run still ends', async () => {
    const origin = await rawServer((socket, request) => {
      if (request.includes('version.json')) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}');
      else socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{');
    });
    const t0 = performance.now();
    const r = await runLoad({
      target: origin,
      credentials: { user: 'u', password: 'p' },
      scenario: loadScenario('large-pages'),
      vus: 2,
      durationMs: 600,
      timeoutMs: 200,
    });
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect(r.requests.failed).toBe(r.requests.total);
    expect(r.transportErrors['RequestTimeout']).toBeGreaterThan(0);
    expect(r.pass).toBe(false);
  });
});
