import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { serve } from './serve-child.ts';
import { pmv6 as cli } from './spawn-cli.ts';

// Failures of the target itself, through the CLI: one line and exit 2 before the run, a hung
// request as a failed check (not a hung run), a target that dies during the run as exit 2.

const servers: Server[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A fake target: `answer` returns a reply, or undefined to never answer (the socket stays open). */
async function fake(answer: (path: string) => { status: number; type: string; body: string } | undefined): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const reply = answer(req.url ?? '/');
    if (!reply) return;
    res.writeHead(reply.status, { 'content-type': reply.type });
    res.end(reply.body);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const close = server.close.bind(server);
  server.close = ((cb?: (err?: Error) => void) => {
    for (const s of sockets) s.destroy();
    return close(cb);
  }) as typeof server.close;
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`)));
}

const ENV = { PMV6_USER: 'admin', PMV6_PASSWORD: 'secret-pw' };

describe('failures of the target', () => {
  test('a server that answers HTML: one line, exit 2, within 15 s', async () => {
    const target = await fake(() => ({ status: 200, type: 'text/html; charset=utf-8', body: '<!doctype html><title>Hello</title>' }));
    const r = await cli(['run', '--target', target], ENV);
    expect(r.code).toBe(2);
    expect(r.ms).toBeLessThan(15_000);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/no v6 API at .* answered 200, not JSON\); check the base URL/);
  });

  test('wrong credentials, API disabled and maintenance mode before the run: one line each, exit 2', async () => {
    const cases: Array<[number, string, RegExp]> = [
      [401, '{"error":true,"type":"Unauthorized","message":"The username or password is incorrect or missing."}', /rejected the credentials of user "admin"/],
      [403, '{"error":true,"type":"Forbidden","message":"API access is disabled"}', /API access is disabled on the target/],
      [503, '{"error":true,"type":"Service Unavailable","message":"This installation is in Maintenance Mode."}', /maintenance mode/],
    ];
    for (const [status, body, message] of cases) {
      const target = await fake(() => ({ status, type: 'application/json; charset=utf-8', body }));
      const r = await cli(['run', '--target', target], ENV);
      expect(r.code).toBe(2);
      expect(r.ms).toBeLessThan(15_000);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    }
  });

  test('a target that hangs on every request but version.json: inconclusive checks naming the timeout, never a violation, not a hung run', async () => {
    const target = await fake((path) =>
      path.endsWith('/version.json')
        ? { status: 200, type: 'application/json; charset=utf-8', body: '{"version":"1.0.0","version_date":"2026-01-01","api_version":"6"}' }
        : undefined,
    );
    const r = await cli(['run', '--target', target, '--timeout', '300', '--only', 'VER'], ENV);
    // About 15 s alone (most of it loading the suite files); bounded well below the hang it replaces.
    expect(r.ms).toBeLessThan(40_000);
    // It answers version.json between the deadlines: not a target that stopped answering. A
    // request with no response is the target failing, never the server's violation: inconclusive.
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/INCONCLUSIVE/);
    expect(r.stdout).toMatch(/the target gave no response: request timed out after 300 ms/);
    expect(r.stdout).not.toMatch(/NOT CONFORMANT/);
    // The sweep could read no list: the leftovers are unknown, never "0 left over".
    expect(r.stdout).toMatch(/cleanup: deleted 0 objects created by the run; at least 0 left over \(unknown: \d+ lists could not be read\)/);
  }, 50_000);

  test('a target that stops answering mid-run: the run ends within the bound it prints, exit 2, leftovers unknown', async () => {
    // Answers (version.json, empty lists) for its first 2 requests (the preflight), then nothing at all.
    let served = 0;
    let lastAnswer = 0;
    const target = await fake((path) => {
      if (++served > 2) return undefined;
      lastAnswer = Date.now();
      return path.endsWith('/version.json')
        ? { status: 200, type: 'application/json; charset=utf-8', body: '{"version":"1.0.0","version_date":"2026-01-01","api_version":"6"}' }
        : { status: 200, type: 'application/json; charset=utf-8', body: '[]' };
    });
    const r = await cli(['run', '--target', target, '--timeout', '300', '--only', 'VER'], ENV);
    const ended = Date.now();
    // The bound printed covers a run that stalls for any reason (30 s at least, issue 36); three
    // deadlines of 300 ms in a row end this one far sooner: within 3 × 300 ms + 9 s.
    expect(r.stdout).toMatch(/a target that stops answering ends the run within 39 s after its last answer/);
    // The deadlines' bound, plus the process's own exit and the test's polling.
    expect(ended - lastAnswer).toBeLessThan(10_000 + 3_000);
    expect(r.code).toBe(2);
    // Three waits in a row stop the run (the hang bound); a selection whose requests all went out
    // together in fewer waits ends on its own, every check inconclusive, and the CLI names the
    // failure. Either way one line, and the leftovers are unknown, never "0 left over".
    expect(r.stderr).toMatch(
      /pmv6 run: the target (stopped answering: 3 requests in a row got no answer within --timeout \(300 ms\): no verdict|failed during the run: request timed out after 300 ms)/,
    );
    expect(r.stderr + r.stdout).toMatch(/cleanup: deleted 0 objects created by the run; at least 0 left over \(unknown: \d+ lists could not be read\)/);
    expect(r.stderr + r.stdout).not.toMatch(/\n\s+at .*:\d+:\d+/);
  }, 60_000);

  test('a target that dies during the run: the run ends, cleanup is reported, exit 2 with one line why', async () => {
    const s = await serve();
    children.push(s.child);
    let killed = false;
    const r = await cli(
      ['run', '--target', s.base, '--control', `${s.base}/__control`, '--timeout', '2000'],
      { PMV6_USER: 'admin', PMV6_PASSWORD: s.password, PMV6_CONTROL_TOKEN: s.token },
      {
        timeoutMs: 45_000,
        onStdout: (all) => {
          if (!killed && /\.test\.ts\s/.test(all)) {
            killed = true;
            s.child.kill('SIGKILL');
          }
        },
      },
    );
    expect(killed).toBe(true);
    expect(r.ms).toBeLessThan(40_000);
    expect(r.stdout).toMatch(/cleanup: deleted \d+ objects? created by the run; (at least )?\d+ left over/);
    expect(r.stderr).toMatch(/the target failed during the run: cannot reach .*ECONNREFUSED/);
    expect(r.code).toBe(2);
  }, 50_000);
});
