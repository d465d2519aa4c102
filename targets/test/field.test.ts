import { createServer, Socket } from 'node:net';
import { Client, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { basicAuthorization } from '../../core/signers.ts';
import { startFieldTarget, startSlowProxy } from '../field.ts';

const get = async (url: string, authorization: string) => {
  const r = await request(url, { headers: { authorization, 'content-type': 'application/json; charset=utf-8' }, signal: AbortSignal.timeout(10_000) });
  return { status: r.statusCode, body: await r.body.text() };
};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the field installation in processes of its own', () => {
  it('answers through its slow proxy, reports what it saw, and is gone after close', async () => {
    const target = await startFieldTarget(
      { seed: 1 },
      { data: { passwords: 30, projects: 2, users: 3, logEntries: 10 }, delayMs: 30, busy: { actors: 1, pauseMs: 5 } },
    );
    try {
      const auth = basicAuthorization(target.config.user, target.config.password);
      target.mark();
      const started = performance.now();
      // The seeded passwords (`field-p<project>-<n>`), not the other users' (`field-actor-…`).
      const count = await get(`${target.config.target}/index.php/api/v6/passwords/search/field-p/count.json`, auth);
      expect(performance.now() - started).toBeGreaterThanOrEqual(25);
      expect(count.status).toBe(200);
      expect(JSON.parse(count.body).num_items).toBe(30);
      const report = await target.report();
      expect(report.requests).toBeGreaterThanOrEqual(1);
      expect(report.peak).toBeGreaterThanOrEqual(1);
      expect(target.seeded).toEqual({ passwords: 30, projects: 2, users: 3, logEntries: 10 });
      // The other users at work from the front's process, straight to the server (the proxy counts the run's requests only).
      const deadline = Date.now() + 10_000;
      while (((await target.report()).actor?.requests ?? 0) < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const later = await target.report();
      expect(later.actor?.requests).toBeGreaterThanOrEqual(3);
      expect(later.requests).toBe(report.requests);
      expect(later.front?.cpuMs).toBeGreaterThan(0);
      expect(later.busy.cpuMs).toBeGreaterThan(0);
    } finally {
      await target.close();
    }
    await expect(get(`${target.config.target}/index.php/api/v6/version.json`, 'x')).rejects.toThrow();
  });

  it('reads the next request of a connection after a reply that came before the body had been read (a 413)', async () => {
    const target = await startFieldTarget({ seed: 1 }, { data: false, delayMs: 5 });
    // One connection, as a client's keep-alive pool reuses it.
    const client = new Client(target.config.target, { pipelining: 1, keepAliveTimeout: 30_000 });
    try {
      const auth = basicAuthorization(target.config.user, target.config.password);
      const big = await client.request({
        method: 'POST',
        path: '/index.php/api/v6/passwords.json',
        headers: { authorization: auth, 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ name: 'x'.repeat(4 * 1024 * 1024), project_id: 1 }),
        signal: AbortSignal.timeout(10_000),
      });
      expect(big.statusCode).toBe(413);
      await big.body.text();
      const next = await client.request({
        method: 'GET',
        path: '/index.php/api/v6/version.json',
        headers: { authorization: auth, 'content-type': 'application/json; charset=utf-8' },
        signal: AbortSignal.timeout(5_000),
      });
      expect(next.statusCode).toBe(200);
      await next.body.text();
    } finally {
      await client.close();
      await target.close();
    }
  });

  it('passes on an early answer to a large upload when the rest of the upload then fails (a reset after a 413)', async () => {
    // An upstream that answers 413 from the head alone and resets the connection with the body
    // unread. The client's next piece of the body reaches the proxy in the same turn as the 413
    // and the reset, ahead of them: the proxy's write to the upstream fails before it has read
    // the answer, every time.
    let upstreamSocket: Socket | undefined;
    let headArrived!: () => void;
    const head = new Promise<void>((resolve) => {
      headArrived = resolve;
    });
    const upstream = createServer((socket) => {
      upstreamSocket = socket;
      let seen = '';
      socket.on('data', (d: Buffer) => {
        seen += d.toString('latin1');
        if (seen.includes('\r\n\r\n')) headArrived();
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const port = (upstream.address() as { port: number }).port;
    const proxy = await startSlowProxy(`http://127.0.0.1:${port}`, { delayMs: 5, idleCloseMs: 5_000 });
    const client = new Socket();
    try {
      const length = 2 * 1024 * 1024;
      const proxyPort = Number(new URL(proxy.url).port);
      await new Promise<void>((resolve) => client.connect(proxyPort, '127.0.0.1', resolve));
      let answer = '';
      client.on('data', (d: Buffer) => {
        answer += d.toString('latin1');
      });
      client.on('error', () => {});
      client.write(
        `POST /index.php/api/v6/passwords.json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${length}\r\n\r\n`,
      );
      client.write('x'.repeat(1024));
      await head;
      await new Promise((r) => setTimeout(r, 50));
      const body = '{"error":true,"type":"Payload Too Large","message":"The request body is larger than 1048576 bytes"}';
      // In one turn: more of the body to the proxy, then the upstream's answer and its reset.
      client.write('x'.repeat(64 * 1024));
      upstreamSocket!.write(`HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      upstreamSocket!.resetAndDestroy();
      const deadline = Date.now() + 5_000;
      while (!answer.includes(body) && !answer.startsWith('HTTP/1.1 502') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
      expect(answer.endsWith(body)).toBe(true);
      // nginx's "writev() failed (104: Connection reset by peer) while sending request to upstream"
      expect(proxy.upstreamErrors()).toEqual([
        expect.objectContaining({ path: '/index.php/api/v6/passwords.json', answered: true, code: expect.stringMatching(/^(ECONNRESET|EPIPE)$/) }),
      ]);
    } finally {
      client.destroy();
      await proxy.close();
      await new Promise<void>((resolve) => upstream.close(() => resolve()));
    }
  });

  it('stops its installation when the process that started it goes away', async () => {
    const { spawn } = await import('node:child_process');
    // A parent that starts a field installation, prints its child's pid and URL, and is killed.
    const script = `
      import { startFieldTarget } from ${JSON.stringify(new URL('../field.ts', import.meta.url).href)};
      const t = await startFieldTarget({}, { data: false, delayMs: 0 });
      console.log(JSON.stringify({ url: t.config.target }));
      setInterval(() => {}, 1000);
    `;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error('the parent did not start its installation within 30 s')), 30_000);
      parent.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) {
          clearTimeout(timer);
          resolve(out.split('\n')[0]!);
        }
      });
    });
    const { url } = JSON.parse(line) as { url: string };
    expect((await get(`${url}/index.php/api/v6/version.json`, 'x')).status).toBe(401);
    // Its processes: the installation's server, and the proxy with the other users.
    const { execFileSync } = await import('node:child_process');
    const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(parent.pid)], { encoding: 'utf8' })
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((pid) => pid > 0);
    expect(children).toHaveLength(2);
    const exited = new Promise((resolve) => parent.on('exit', resolve));
    parent.kill('SIGKILL');
    await exited;
    const deadline = Date.now() + 10_000;
    let closed = false;
    while (!closed && Date.now() < deadline) {
      closed = await get(`${url}/index.php/api/v6/version.json`, 'x').then(
        () => false,
        () => true,
      );
      if (!closed) await new Promise((r) => setTimeout(r, 200));
    }
    expect(closed).toBe(true);
    expect(alive(parent.pid!)).toBe(false);
    while (children.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(children.filter(alive)).toEqual([]);
  });
});
