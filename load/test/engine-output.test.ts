// What operators read from the native engine: thresholds per endpoint as k6 writes them (judged
// alike by the engine and by real k6), ramping stages the arrival rate follows, the live metrics
// in k6's JSON lines format (the same metric names and tags as real k6 writes), and printed
// results whose percentiles agree with max and whose per-second series adds up to the run.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../bin/cli/main.ts';
import { type SeededTarget, startSeededTarget } from '../../targets/seeded.ts';
import { type LoadResults, runLoad } from '../engine/engine.ts';
import { K6_THRESHOLDS_FAILED, REPO_ROOT, runK6 } from '../engine/k6.ts';
import { stagedIntegral } from '../engine/run-iterations.ts';
import { loadScenario, type Scenario } from '../engine/scenario.ts';
import { resultsText } from '../engine/text.ts';
import { bundledK6Scripts, CI, K6, k6Env, NO_K6, readSummary, thresholdsOf } from './k6-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'pmv6-engine-output-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// Decision (runtime, issue 38): page-sizes and large-pages run bundled (k6-support.ts: the same
// code without k6's Babel pass, about 4 s of CPU a start); k6-scripts.test.ts runs them as shipped.
// ramp.js runs as shipped here, its only run in real k6.
const bundled = bundledK6Scripts(join(dir, 'bundled'));

async function cli(...argv: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    return { code: await main(['load', ...argv]), stdout };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

function credentials(t: SeededTarget) {
  return { user: t.config.user, password: t.config.password };
}

/** k6's JSON lines: each line one object; the Point lines as metric → the sorted tag names seen. */
function pointTags(file: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    const o = JSON.parse(line) as { type: string; metric: string; data: { tags?: Record<string, string>; time?: string; value?: number } };
    if (o.type !== 'Point') continue;
    expect(typeof o.data.value).toBe('number');
    expect(Number.isNaN(Date.parse(o.data.time!))).toBe(false);
    let s = out.get(o.metric);
    if (s === undefined) out.set(o.metric, (s = new Set()));
    s.add(
      Object.keys(o.data.tags ?? {})
        .sort()
        .join(','),
    );
  }
  return out;
}

describe('a threshold on one endpoint, as k6 writes it', () => {
  // Every count waits 600 ms: page-sizes' `http_req_duration{name:passwords/count}: p(95)<500`
  // fails while its p(95)<1000 over every request holds.
  let slowCounts: SeededTarget;
  beforeAll(async () => {
    slowCounts = await startSeededTarget({
      passwords: 200,
      mutate: (s) =>
        s.app.addHook('onRequest', async (req) => {
          if (req.url.includes('/passwords/count.json')) await sleep(600);
        }),
    });
  });
  afterAll(() => slowCounts?.close());

  it('fails in the engine on the slow endpoint alone (exit 1)', async () => {
    const out = join(dir, 'slow-counts.json');
    const c = slowCounts.config;
    const { code, stdout } = await cli(
      ...['--scenario', 'page-sizes', '--target', c.target, '--user', c.user, `--password=${c.password}`, '--duration', '3s', '--out', out, '--quiet'],
    );
    const r = JSON.parse(readFileSync(out, 'utf8')) as LoadResults;
    const byKey = Object.fromEntries(r.thresholds.map((t) => [`${t.metric} ${t.expr}`, t]));
    expect(byKey['http_req_duration{name:passwords/count} p(95)<500']).toMatchObject({ ok: false });
    expect(byKey['http_req_duration{name:passwords/count} p(95)<500']!.actual).toBeGreaterThanOrEqual(600);
    expect(byKey['http_req_duration p(95)<1000']?.ok).toBe(true);
    expect(code).toBe(1);
    expect(stdout).toMatch(/FAIL http_req_duration\{name:passwords\/count\} p\(95\)<500 \(actual \d+(\.\d+)? ms\)/);
  }, 60_000);

  it.skipIf(!K6 && !CI)(
    `fails in real k6 on the same endpoint alone (exit 99)${K6 ? '' : ` (skipped: ${NO_K6})`}`,
    async () => {
      expect(K6, NO_K6).toBeDefined();
      const summary = join(dir, 'k6-slow-counts.json');
      const run = await runK6(K6!.path, bundled.script('page-sizes'), {
        env: k6Env(slowCounts, summary, { PMV6_DURATION: '3s' }),
        args: bundled.args,
        timeoutMs: 90_000,
      });
      expect(run.code, run.stderr.slice(-2000)).toBe(K6_THRESHOLDS_FAILED);
      const held = thresholdsOf(readSummary(summary));
      expect(held['http_req_duration{name:passwords/count} p(95)<500']).toBe(false);
      expect(held['http_req_duration p(95)<1000']).toBe(true);
    },
    120_000,
  );
});

describe('--threshold narrowed by tags', () => {
  it('is judged on its endpoint; one that selects none of the scenario’s requests is a usage error (exit 2)', async () => {
    const ok = await cli(
      '--scenario',
      'large-pages',
      '--duration',
      '1s',
      '--seed-passwords',
      '100',
      '--quiet',
      '--threshold',
      'http_req_duration{name:passwords/count,page_size:1000}:p(95)<0.001',
    );
    expect(ok.code).toBe(1);
    expect(ok.stdout).toMatch(/FAIL http_req_duration\{name:passwords\/count,page_size:1000\} p\(95\)<0.001 \(actual [\d.]+ ms\)/);
    expect(
      (await cli('--scenario', 'large-pages', '--duration', '1s', '--quiet', '--threshold', 'http_req_duration{name:passwords-list}:p(95)<500')).code,
    ).toBe(2);
  }, 60_000);
});

describe('ramping stages', () => {
  let target: SeededTarget;
  beforeAll(async () => {
    target = await startSeededTarget({ passwords: 0 });
  });
  afterAll(() => target?.close());

  it('the arrival rate follows the stages: up from 0 to 20/s, held, down to 0', async () => {
    // Due by the end of each second: 5, 20, 40, 60, 70 iterations (the integral of the rate).
    const base = loadScenario('ramp');
    const scenario: Scenario = {
      ...base,
      load: {
        executor: 'ramping-arrival-rate',
        startRate: 0,
        timeUnit: '1s',
        stages: [
          { duration: '2s', target: 20 },
          { duration: '2s', target: 20 },
          { duration: '1s', target: 0 },
        ],
        preAllocatedVUs: 5,
        maxVUs: 30,
      },
    };
    const stages = [
      { durationMs: 2000, target: 20 },
      { durationMs: 2000, target: 20 },
      { durationMs: 1000, target: 0 },
    ];
    expect([1000, 2000, 3000, 4000, 5000].map((t) => stagedIntegral(0, stages, t))).toEqual([5, 20, 40, 60, 70]);
    const r = await runLoad({ target: target.config.target, credentials: credentials(target), scenario });
    expect(r.model).toMatchObject({ executor: 'ramping-arrival-rate', startRate: 0 });
    expect(r.iterations.started + r.iterations.dropped).toBeGreaterThanOrEqual(68);
    expect(r.iterations.started + r.iterations.dropped).toBeLessThanOrEqual(70);
    // By the second: a timer tick may land a few ms late on a shared machine, so each count
    // moves by a few between neighbours; the sums over the rise and the plateau do not.
    const started = r.perSecond.map((s) => s.iterations);
    expect(started[0]! + started[1]!).toBeGreaterThanOrEqual(17);
    expect(started[0]! + started[1]!).toBeLessThanOrEqual(23);
    expect(started[0]!).toBeLessThan(started[1]!);
    expect(started[2]! + started[3]!).toBeGreaterThanOrEqual(36);
    expect(started[2]! + started[3]!).toBeLessThanOrEqual(44);
    expect(started[4]!).toBeLessThan(started[3]!);
  }, 60_000);

  it.skipIf(!K6 && !CI)(
    `the k6 script runs the same stages, cut at PMV6_DURATION${K6 ? '' : ` (skipped: ${NO_K6})`}`,
    async () => {
      expect(K6, NO_K6).toBeDefined();
      // ramp: 1/s rising by 0.2/s each second; cut at 4 s it ends at 2/s (a whole target): 6 iterations due.
      const summary = join(dir, 'k6-ramp.json');
      const run = await runK6(K6!.path, join(REPO_ROOT, 'load', 'k6', 'ramp.js'), { env: k6Env(target, summary, { PMV6_DURATION: '4s' }), timeoutMs: 90_000 });
      expect(run.code, run.stderr.slice(-2000)).toBe(0);
      const s = readSummary(summary);
      expect(s.metrics['iterations']?.values['count']).toBeGreaterThanOrEqual(4);
      expect(s.metrics['iterations']?.values['count']).toBeLessThanOrEqual(8);
      expect(Object.values(thresholdsOf(s)).every((ok) => ok)).toBe(true);
    },
    120_000,
  );

  it('ramping VUs: no more iterations at once than the stages allow, more as they rise', async () => {
    const slow = await startSeededTarget({
      passwords: 0,
      mutate: (s) =>
        s.app.addHook('onRequest', async (req) => {
          if (req.url.includes('/api/v6/passwords')) await sleep(50);
        }),
    });
    try {
      const base = loadScenario('ramp');
      const scenario: Scenario = {
        ...base,
        load: {
          executor: 'ramping-vus',
          startVUs: 1,
          stages: [
            { duration: '1s', target: 1 },
            { duration: '2s', target: 4 },
            { duration: '1s', target: 4 },
          ],
        },
      };
      const r = await runLoad({ target: slow.config.target, credentials: credentials(slow), scenario });
      expect(Math.max(...r.perSecond.map((s) => s.vus))).toBeLessThanOrEqual(4);
      // An iteration is two requests of 50 ms or more: one VU starts at most 10 a second.
      expect(r.perSecond[0]!.iterations).toBeLessThanOrEqual(10);
      expect(r.perSecond[3]!.iterations).toBeGreaterThan(r.perSecond[0]!.iterations);
    } finally {
      await slow.close();
    }
  }, 60_000);
});

describe('live metrics: k6 JSON lines', () => {
  let target: SeededTarget;
  beforeAll(async () => {
    target = await startSeededTarget({ passwords: 300 });
  });
  afterAll(() => target?.close());

  it('are written while the run goes (flushed within a second), one parseable object a line, a Point per request, with the run totals', async () => {
    const file = join(dir, 'live.jsonl');
    const running = runLoad({
      target: target.config.target,
      credentials: credentials(target),
      scenario: loadScenario('page-sizes'),
      durationMs: 2500,
      liveJson: file,
    });
    await sleep(1500);
    const during = statSync(file).size;
    const r = await running;
    expect(during).toBeGreaterThan(0);
    expect(statSync(file).size).toBeGreaterThan(during);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const objects = lines.map((l) => JSON.parse(l) as { type: string; metric: string; data: { value: number; tags: Record<string, string> } });
    const metricLines = objects.filter((o) => o.type === 'Metric').map((o) => o.metric);
    expect(metricLines).toContain('http_req_duration');
    const points = (m: string) => objects.filter((o) => o.type === 'Point' && o.metric === m);
    expect(points('http_reqs').length).toBe(r.requests.total);
    expect(points('http_req_failed').filter((p) => p.data.value === 1).length).toBe(r.requests.failed);
    expect(points('checks').length).toBe(r.checks.passes + r.checks.fails);
    expect(points('iterations').length).toBe(r.iterations.completed);
    const counts = points('http_reqs').filter((p) => p.data.tags['name'] === 'passwords/count' && p.data.tags['page_size'] === '5').length;
    expect(counts).toBe(r.endpoints['GET passwords/count [5]']?.count);
  }, 60_000);

  it.skipIf(!K6 && !CI)(
    `carry the metric names and tags real k6 writes${K6 ? '' : ` (skipped: ${NO_K6})`}`,
    async () => {
      expect(K6, NO_K6).toBeDefined();
      const engineFile = join(dir, 'engine.jsonl');
      const k6File = join(dir, 'k6.jsonl');
      await runLoad({
        target: target.config.target,
        credentials: credentials(target),
        scenario: loadScenario('large-pages'),
        durationMs: 1500,
        liveJson: engineFile,
      });
      const run = await runK6(K6!.path, bundled.script('large-pages'), {
        env: k6Env(target, join(dir, 'k6-live-summary.json'), { PMV6_DURATION: '2s' }),
        args: [...bundled.args, '--out', `json=${k6File}`],
        timeoutMs: 90_000,
      });
      expect(run.code, run.stderr.slice(-2000)).toBe(0);
      const ours = pointTags(engineFile);
      const theirs = pointTags(k6File);
      // k6 also writes its setup()'s request (the preflight, outside the scenario); the engine does not.
      for (const metric of ['http_reqs', 'http_req_duration', 'http_req_failed', 'checks', 'iterations', 'iteration_duration', 'data_received', 'vus']) {
        expect(theirs.has(metric), metric).toBe(true);
        expect(ours.get(metric)?.size, metric).toBeGreaterThan(0);
        for (const tags of ours.get(metric)!) expect([...theirs.get(metric)!], metric).toContain(tags);
      }
    },
    120_000,
  );
});

describe('printed results', () => {
  let target: SeededTarget;
  beforeAll(async () => {
    target = await startSeededTarget({ passwords: 2_000 });
  });
  afterAll(() => target?.close());

  it('percentiles never above max, columns with units, and a per-second series that includes the last second', async () => {
    const r = await runLoad({ target: target.config.target, credentials: credentials(target), scenario: loadScenario('page-sizes'), durationMs: 2500 });
    for (const e of [...Object.values(r.endpoints), { key: 'all', ...r.http_req_duration }]) {
      expect(e.p50, e.key).toBeLessThanOrEqual(e.p90);
      expect(e.p90, e.key).toBeLessThanOrEqual(e.p95);
      expect(e.p95, e.key).toBeLessThanOrEqual(e.p99);
      expect(e.p99, e.key).toBeLessThanOrEqual(e.max);
      expect(e.min, e.key).toBeLessThanOrEqual(e.p50);
    }
    // 2.5 s: two whole seconds and the last half, every request in one of them.
    expect(r.perSecond.map((s) => s.seconds).slice(0, 2)).toEqual([1, 1]);
    expect(r.perSecond.at(-1)!.seconds).toBeLessThan(1);
    expect(r.perSecond.reduce((n, s) => n + s.requests, 0)).toBe(r.requests.total);
    expect(r.perSecond.reduce((n, s) => n + s.iterations, 0)).toBe(r.iterations.started);
    const text = resultsText(r);
    expect(text).toMatch(/requests +p50 ms +p95 ms +p99 ms +max ms +req\/s/);
    expect(text).toMatch(/ok {3}http_req_duration p\(95\)<1000 \(actual [\d.]+ ms\)/);
    expect(text).toMatch(/ok {3}dropped_iterations rate<0\.1 \(actual [\d.]+\/s\)/);
  }, 60_000);
});
