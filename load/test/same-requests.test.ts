// Both engines run the same iterations (load/k6/lib/iterations.js): for each scenario, the native
// engine and real k6 each run the same number of iterations with one VU against a fresh,
// identically seeded reference server, every body checked; the server's log of what it received
// (method, path, page size, authentication, content type, body, status) and the checks each
// engine recorded must be the same.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSeededTarget } from '../../targets/seeded.ts';
import { runLoad } from '../engine/engine.ts';
import { REPO_ROOT, runK6 } from '../engine/k6.ts';
import { loadScenario } from '../engine/scenario.ts';
import { CI, checksByName, K6, k6Env, NO_K6, readSummary, recordRequests } from './k6-support.ts';

const PASSWORDS = 1_234;
/** Iterations per scenario: every page size once, and page-sizes' first size a second time (its second stretch of the list). */
const ITERATIONS: Record<string, number> = { 'large-pages': 2, hmac: 2, mixed: 3, 'page-sizes': 6 };

const dir = mkdtempSync(join(tmpdir(), 'pmv6-same-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function engineRun(name: string): Promise<{ log: string[]; checks: Record<string, { passes: number; fails: number }> }> {
  const log: string[] = [];
  const target = await startSeededTarget({ passwords: PASSWORDS, mutate: (s) => recordRequests(s, log) });
  try {
    log.length = 0;
    const r = await runLoad({
      target: target.config.target,
      credentials: target.config,
      scenario: loadScenario(name),
      vus: 1,
      iterations: ITERATIONS[name]!,
      durationMs: 60_000,
      bodySampleEvery: 1,
    });
    expect(r.iterations.completed).toBe(ITERATIONS[name]);
    return { log, checks: r.checks.byName };
  } finally {
    await target.close();
  }
}

async function k6Run(name: string): Promise<{ log: string[]; checks: Record<string, { passes: number; fails: number }> }> {
  const log: string[] = [];
  const target = await startSeededTarget({ passwords: PASSWORDS, mutate: (s) => recordRequests(s, log) });
  try {
    log.length = 0;
    const summaryFile = join(dir, `${name}.json`);
    const run = await runK6(K6!.path, join(REPO_ROOT, 'load', 'k6', `${name}.js`), {
      env: k6Env(target, summaryFile, { PMV6_BODY_SAMPLE: '1' }),
      args: ['--vus', '1', '--iterations', String(ITERATIONS[name])],
      timeoutMs: 90_000,
    });
    expect(run.code, run.stderr.slice(-3000)).toBe(0);
    return { log, checks: checksByName(readSummary(summaryFile)) };
  } finally {
    await target.close();
  }
}

if (!K6) {
  describe('the native engine and k6 send the same requests and apply the same checks', () => {
    if (CI) {
      it('needs a k6 binary under CI=true', () => {
        throw new Error(`CI=true but the comparison with k6 cannot run: ${NO_K6}`);
      });
    } else it.skip(`skipped: ${NO_K6}`, () => {});
  });
} else {
  describe('the native engine and k6 send the same requests and apply the same checks', () => {
    it.each(Object.keys(ITERATIONS))(
      '%s',
      async (name) => {
        const engine = await engineRun(name);
        const k6 = await k6Run(name);
        expect(engine.log.length).toBeGreaterThan(ITERATIONS[name]!);
        expect(engine.log.every((line) => line.endsWith('→ 200') || line.endsWith('→ 201') || line.endsWith('→ 204'))).toBe(true);
        expect(k6.log).toEqual(engine.log);
        expect(k6.checks).toEqual(engine.checks);
        expect(Object.values(engine.checks).every((c) => c.fails === 0)).toBe(true);
      },
      120_000,
    );
  });
}
