// k6's teardown sweep (load/k6/lib/iterations.js sweep) in real k6 against a target that fails:
// a loopback proxy in front of the reference server refuses every delete of the load (503), so
// each iteration leaves its project and password, then fails the teardown's first searches
// (connections reset) and deletes (503 or reset) for a while, or to the end. What k6 prints as
// left is compared with what the server's database holds under the run's names. Without k6 this
// is skipped with the reason, and fails under CI=true (as k6-scripts.test.ts).

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../fixtures/reference-server/src/index.ts';
import { type SeededTarget, startSeededTarget } from '../../targets/seeded.ts';
import { runK6 } from '../engine/k6.ts';
import { bundledK6Scripts, CI, K6, k6Env, NO_K6 } from './k6-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'pmv6-k6-sweep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Fault = 'pass' | 'reset' | '503';
/** What the proxy does with the teardown's n-th search (1-based) and n-th delete. */
interface Plan {
  search: (n: number) => Fault;
  remove: (n: number) => Fault;
}

/** The proxy: every DELETE before the teardown's first search is a 503; then the plan decides. */
async function faultyProxy(upstream: string, plan: Plan) {
  const seen = { searches: 0, deletes: 0, failed: 0 };
  let teardown = false;
  const server = createServer((req, res) => {
    const search = req.method === 'GET' && /\/search\//.test(req.url ?? '');
    if (search) teardown = true;
    const fault: Fault = search ? plan.search(++seen.searches) : req.method !== 'DELETE' ? 'pass' : teardown ? plan.remove(++seen.deletes) : '503';
    if (fault !== 'pass') seen.failed++;
    if (fault === 'reset') {
      req.socket.destroy();
      return;
    }
    if (fault === '503') {
      req.resume();
      res.writeHead(503, { 'content-type': 'application/json; charset=utf-8' });
      res.end('{"error":true,"type":"Service Unavailable","message":"try later"}');
      return;
    }
    const up = request(`${upstream}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => req.socket.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Projects and passwords under a load run's names, straight from the database. */
function heldByRuns(server: ReferenceServer): number {
  const count = (table: string) =>
    (server.store.db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE name LIKE 'pmv6-load-%' AND name NOT LIKE 'pmv6-load-seed%'`).get() as { n: number }).n;
  return count('projects') + count('passwords');
}

const SWEEP = /pmv6: the iterations left (\d+) objects under the run's names; the sweep deleted (\d+); (.*?)(?:" source=console|$)/m;

async function sweepAgainst(name: string, plan: Plan) {
  let server: ReferenceServer | undefined;
  const target: SeededTarget = await startSeededTarget({ passwords: 0, mutate: (s) => (server = s) });
  const proxy = await faultyProxy(target.config.target, plan);
  try {
    const scripts = bundledK6Scripts(join(dir, name));
    const run = await runK6(K6!.path, scripts.script('mixed'), {
      env: k6Env({ ...target, config: { ...target.config, target: proxy.url } }, join(dir, `${name}.json`), { PMV6_DURATION: '2s' }),
      args: scripts.args,
      timeoutMs: 120_000,
    });
    const line = SWEEP.exec(run.stderr);
    return { run, line, held: heldByRuns(server!), seen: proxy.seen, context: `k6 exit ${run.code}\n${run.stderr.slice(-2500)}` };
  } finally {
    await proxy.close();
    await target.close();
  }
}

if (!K6) {
  describe("k6's teardown sweep on a failing target", () => {
    if (CI)
      it('needs a k6 binary under CI=true', () => {
        throw new Error(`CI=true but the k6 test cannot run: ${NO_K6}`);
      });
    else it.skip(`skipped: ${NO_K6}`, () => {});
  });
} else {
  describe(`k6's teardown sweep on a failing target (${K6.path}, issue 36)`, { timeout: 150_000 }, () => {
    it('searches reset and deletes refused for a while, then answered: the sweep retries, deletes everything, and says 0 left, as the database holds', async () => {
      const r = await sweepAgainst('recovers', {
        search: (n) => (n <= 3 ? 'reset' : 'pass'),
        remove: (n) => (n <= 4 ? (n % 2 ? '503' : 'reset') : 'pass'),
      });
      expect(r.line, r.context).not.toBeNull();
      const [, found, deleted, left] = r.line!;
      expect(Number(found), r.context).toBeGreaterThan(4);
      expect(deleted, r.context).toBe(found);
      expect(left, r.context).toBe('0 left on the target (searched again)');
      expect(r.held, r.context).toBe(0);
      expect(r.seen.failed, r.context).toBeGreaterThanOrEqual(7);
    });

    it('deletes refused to the end: the sweep says how many are left, the true count', async () => {
      const r = await sweepAgainst('deletes-down', { search: (n) => (n <= 2 ? 'reset' : 'pass'), remove: () => '503' });
      expect(r.line, r.context).not.toBeNull();
      const [, found, deleted, left] = r.line!;
      expect(deleted, r.context).toBe('0');
      expect(r.held, r.context).toBe(Number(found));
      expect(r.held, r.context).toBeGreaterThan(0);
      expect(left, r.context).toBe(`${r.held} left on the target (searched again)`);
    });

    it('the target down for the whole teardown: what is left is unknown (never 0), and the database does hold objects', async () => {
      const r = await sweepAgainst('down', { search: () => 'reset', remove: () => '503' });
      expect(r.line, r.context).not.toBeNull();
      const [, found, deleted, left] = r.line!;
      expect([found, deleted], r.context).toEqual(['0', '0']);
      expect(left, r.context).toMatch(/^what is left is unknown: GET (passwords|projects)\/search answered nothing \(4 tries\)/);
      expect(r.held, r.context).toBeGreaterThan(0);
    });
  });
}
