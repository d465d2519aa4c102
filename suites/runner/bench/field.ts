// How long a full run takes against an installation that answers in tens of milliseconds: the
// reference server behind a loopback proxy that holds every response for a fixed delay
// (default 20 ms, `--delay MS`), a full run with the control protocol through it. Prints wall
// time against the goal, the ratio to the ideal (requests × delay ÷ concurrency), the requests
// in flight over the run, the longest tests, and when each file ended. `--concurrency N` as for
// `pmv6 run` (default: the run's default); `--only IDS` runs part of the suites. A benchmark to
// read, not a test that can flake. `--write-chains` writes what the run measured of each file's
// chain of requests, and the files that ran alone, to suites/runner/chains.ts, which the
// runner's schedule reads (run-suites.ts STARTED_FIRST, gate.ts `chains`).
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { scrub } from '../../../core/redact.ts';
import { type FieldTarget, startFieldTarget, type UpstreamError } from '../../../targets/field.ts';
import { DEFAULT_CONCURRENCY } from '../../harness/config.ts';
import { type RunResult, runSuites } from '../run-suites.ts';
import { verdictOf } from '../verdict.ts';

const { values } = parseArgs({
  options: {
    delay: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: String(DEFAULT_CONCURRENCY) },
    only: { type: 'string' },
    populated: { type: 'boolean', default: false },
    here: { type: 'boolean', default: false },
    'write-chains': { type: 'boolean', default: false },
  },
});
const delay = Number(values.delay);
const concurrency = Number(values.concurrency);
/** `--here`: the installation in this process, sharing the run's event loop (as before it had a process of its own). */
const where = values.here ? ('here' as const) : ('process' as const);
if (!Number.isFinite(delay) || delay < 0 || delay > 1000) throw new Error('--delay: a number of milliseconds from 0 to 1000');

/** A full run at the default concurrency (issue 38): against a 20 ms installation, and against one 100 ms away. */
const GOAL_S = 20;
const GOAL_100_MS_S = 80;
/** The populated, busy installation at 20 ms (issues 25 and 38): its time, and its requests against the empty one's. */
const POPULATED_GOAL_S = 25;
const POPULATED_REQUESTS_RATIO = 1.1;

/** One full run against `target`, with the requests in flight sampled every 10 ms and when each file ended. */
async function runAgainst(target: FieldTarget) {
  target.mark();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const endedAt = new Map<string, number>();
  {
    const result = await runSuites(
      { ...target.config, concurrency, ...(values.only ? { selection: { only: values.only.split(',') } } : {}) },
      {
        onModuleDone: (file) => {
          endedAt.set(file, performance.now() - started);
        },
      },
    );
    const wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    const report = await target.report();
    const samples = report.inFlight;
    // The verdict is every clause that did not pass or record (fail, warn, inconclusive,
    // unverifiable…), not only the failures: a run cut short by a deadline of ours is no "same verdict".
    const failing = result.clauses
      .filter((c) => c.outcome !== 'pass' && c.outcome !== 'info' && c.outcome !== 'untested' && c.outcome !== 'disabled')
      .map((c) => `${c.clause.id}:${c.outcome}`);
    return {
      result,
      wallMs,
      samples,
      endedAt,
      failing,
      label: verdictOf(result).label,
      requests: result.requests ?? 0,
      actor: report.actor,
      idleClosed: report.idleClosed,
      peak: report.peak,
      server: report.server,
      upstreamErrors: report.upstreamErrors,
      busy: report.busy,
      front: report.front,
      cpuMs,
    };
  }
}

/** The proxy's error log, when it has entries: what failed between the proxy and the server, and whether the answer still went back. */
function printUpstreamErrors(name: string, errors: UpstreamError[]): void {
  for (const e of errors)
    console.log(
      `${name ? `${name}: ` : ''}proxy: ${e.code} on the connection to the server (${scrub(e.path.slice(0, 80))}), ${e.answered ? 'its answer passed on' : 'no answer: 502 of its own'}`,
    );
}

/** The schedule the gate measured: its sections, the longest chains; with --write-chains, chains.ts. */
function schedule(result: RunResult, wallMs: number): void {
  const m = result.schedule;
  if (m === undefined) return;
  const chains = Object.entries(m.chains).sort((a, b) => b[1] - a[1]);
  console.log(
    `exclusive sections: ${m.sections}, ${(m.sectionMs / 1000).toFixed(1)} s in all (${((m.sectionMs / Math.max(1, wallMs)) * 100).toFixed(0)}% of the run), ${m.backToBack} moved up to follow the one before, ${m.handedOver} taking its settings over; longest chains of requests one after another${delay > 0 ? ` (× ${delay} ms)` : ''}: ${chains
      .slice(0, 8)
      .map(([f, n]) => `${f.replace(/^suites\//, '')} ${n}${delay > 0 ? ` (${((n * delay) / 1000).toFixed(1)} s)` : ''}`)
      .join(', ')}`,
  );
  for (const [f, x] of Object.entries(m.sectionsByFile).sort((a, b) => b[1].ms - a[1].ms))
    console.log(
      `  sections of ${f.replace(/^suites\//, '')}: ${x.sections}, ${(x.ms / 1000).toFixed(1)} s, ${x.requests} requests${x.joined > 0 ? `, ${x.joined} calls joined` : ''}`,
    );
  if (!values['write-chains']) return;
  if (values.only) throw new Error('--write-chains: a run of every suite file only (not with --only)');
  const path = new URL('../chains.ts', import.meta.url);
  const lines = [
    `// Written by \`npm run bench:field -- --write-chains\` (suites/runner/bench/field.ts); measured, not kept by hand.`,
    `// Last written from a run at ${delay} ms a response, concurrency ${concurrency}, ${result.requests ?? 0} requests.`,
    '/** The files that ran alone (runsAlone): they run before the others start. */',
    `export const ALONE: readonly string[] = [${[...m.alone]
      .sort()
      .map((f) => `'${f}'`)
      .join(', ')}];`,
    '/** By suite file: its longest chain of requests one after another (suites/harness/gate.ts `measured`). */',
    'export const CHAINS: Readonly<Record<string, number>> = {',
    ...Object.entries(m.chains)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([f, n]) => `  '${f}': ${n},`),
    '};',
    '',
  ];
  writeFileSync(path, lines.join('\n'));
  console.log(`wrote ${chains.length} files' chains to suites/runner/chains.ts`);
}

if (values.populated) {
  const runs: Array<{ name: string; run: Awaited<ReturnType<typeof runAgainst>> }> = [];
  for (const [name, opts] of [
    ['empty, quiet', { data: false as const, busy: false }],
    ['populated, busy', { busy: true }],
  ] as const) {
    const target = await startFieldTarget({ seed: 1 }, { ...opts, delayMs: delay, runs: where });
    try {
      console.log(
        `${name}: ${target.label}, ${where === 'here' ? 'in this process' : 'its server in a process of its own, its proxy and other users in another'}`,
      );
      runs.push({ name, run: await runAgainst(target) });
    } finally {
      await target.close();
    }
  }
  const [empty, populated] = runs.map((r) => r.run) as [Awaited<ReturnType<typeof runAgainst>>, Awaited<ReturnType<typeof runAgainst>>];
  for (const { name, run } of runs) {
    console.log(
      `${name.padEnd(16)} wall ${(run.wallMs / 1000).toFixed(1).padStart(5)} s  run's CPU ${(run.cpuMs / 1000).toFixed(1).padStart(5)} s  requests ${String(run.requests).padStart(5)}  verdict ${run.label}${run.failing.length === 0 ? '' : ` (${run.failing.join(' ')})`}${run.result.harnessErrors.length ? `; harness errors ${run.result.harnessErrors.length}` : ''}; cleanup left ${run.result.cleanup?.leftovers.length ?? '?'}; idle connections closed by the server ${run.idleClosed}${run.actor ? `; other users sent ${run.actor.requests} requests (${run.actor.failed} not 2XX)` : ''}`,
    );
  }
  for (const { name, run } of runs) printUpstreamErrors(name, run.upstreamErrors);
  for (const { name, run } of runs)
    for (const t of run.result.tests.filter((t) => t.outcome !== 'pass' && t.outcome !== 'info' && t.outcome !== 'untested' && t.outcome !== 'disabled'))
      console.log(
        `  ${name}: ${t.outcome} ${t.clauses.join(',')} ${t.file.replace(/^suites\//, '')}: ${t.title.slice(0, 70)}: ${(t.failure?.message ?? '').split('\n')[0]?.slice(0, 200)} ${t.failure?.exchange ? `(${t.failure.exchange.request.method} ${t.failure.exchange.request.url.replace(/^https?:\/\/[^/]+/, '')})` : ''}`,
      );
  for (const { name, run } of runs)
    console.log(
      `${name}: the installation's process was busy ${(run.busy.utilization * 100).toFixed(0)}% of the run (CPU ${(run.busy.cpuMs / 1000).toFixed(1)} s)${run.front ? `, the proxy's and other users' ${(run.front.utilization * 100).toFixed(0)}% (CPU ${(run.front.cpuMs / 1000).toFixed(1)} s)` : ''}; its server took ${(run.server.ms / 1000).toFixed(1)} s in all to answer, requests overlapping (behind the delay); slowest paths: ${run.server.slowest.map((p) => `${p.path} ${p.n}× ${(p.ms / p.n).toFixed(1)} ms`).join(', ')}`,
    );
  const same = empty.label === populated.label && empty.failing.join(' ') === populated.failing.join(' ');
  const requestRatio = populated.requests / Math.max(1, empty.requests);
  console.log(
    `same verdict: ${same ? 'yes' : 'NO'}; populated time ${(populated.wallMs / 1000).toFixed(1)} s (goal ${POPULATED_GOAL_S} s or less), ratio to empty ${(populated.wallMs / Math.max(1, empty.wallMs)).toFixed(2)}; requests ratio ${requestRatio.toFixed(3)} (goal ${POPULATED_REQUESTS_RATIO.toFixed(2)} or less)`,
  );
  // Where the time goes, side by side: when each file ended (the critical path is the last
  // ones; files that run alone come after the others) and the longest tests of the populated run.
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const loads = loadavg().map((l) => l.toFixed(1));
  console.log(`load average now ${loads.join(' ')} (1, 5, 15 min); requests in flight by 2 s of the run, populated over empty:`);
  const buckets = (xs: number[]) => Array.from({ length: Math.ceil(xs.length / 200) }, (_, i) => mean(xs.slice(i * 200, (i + 1) * 200)));
  const [bp, be] = [buckets(populated.samples), buckets(empty.samples)];
  for (let i = 0; i < Math.max(bp.length, be.length); i += 10)
    console.log(
      `  ${String(i * 2).padStart(3)} s  ${Array.from({ length: 10 }, (_, j) => `${bp[i + j]?.toFixed(1) ?? '  - '}/${be[i + j]?.toFixed(1) ?? '  - '}`.padStart(9)).join(' ')}`,
    );
  console.log('suite files by when they ended in the populated run (s since the start; requests), empty beside it:');
  const files = [...populated.endedAt].sort((a, b) => a[1] - b[1]);
  for (const [file, at] of files.length > 18 ? [...files.slice(0, 3), ...files.slice(-15)] : files) {
    const e = empty.endedAt.get(file);
    console.log(
      `  ${`${(at / 1000).toFixed(1)}`.padStart(6)} s ${String(populated.result.requestsByFile?.[file] ?? 0).padStart(5)}   empty ${e === undefined ? '    ?' : `${(e / 1000).toFixed(1)}`.padStart(5)} s ${String(empty.result.requestsByFile?.[file] ?? 0).padStart(5)}  ${file.replace(/^suites\//, '')}`,
    );
  }
  console.log(`longest tests of the populated run (in ${delay} ms delays: the chain of requests they waited on), empty beside it:`);
  const emptyTest = new Map(empty.result.tests.map((t) => [`${t.file} ${t.title}`, t.durationMs]));
  for (const t of [...populated.result.tests].sort((a, b) => b.durationMs - a.durationMs).slice(0, 10)) {
    const e = emptyTest.get(`${t.file} ${t.title}`);
    console.log(
      `  ${`${(t.durationMs / 1000).toFixed(1)} s`.padStart(8)} ${String(delay > 0 ? Math.round(t.durationMs / delay) : '').padStart(5)}   empty ${e === undefined ? '?' : `${(e / 1000).toFixed(1)} s`}  ${t.file.replace(/^suites\//, '')}: ${t.title.slice(0, 70)}`,
    );
  }
  const byFile = (r: typeof empty) => new Map(Object.entries(r.result.requestsByFile ?? {}));
  const e = byFile(empty);
  const grown = [...byFile(populated)].map(([file, n]) => [file, n - (e.get(file) ?? 0)] as const).filter(([, d]) => d !== 0);
  if (grown.length > 0) {
    console.log('suite files whose requests differ (populated − empty):');
    for (const [file, d] of grown.sort((x, y) => Math.abs(y[1]) - Math.abs(x[1])).slice(0, 15)) console.log(`  ${String(d).padStart(6)}  ${file}`);
  }
  process.exit(0);
}

const target = await startFieldTarget({ seed: 1 }, { data: false, delayMs: delay, idleCloseMs: 60_000, runs: where });
const { result, wallMs, samples, endedAt, peak, upstreamErrors } = await runAgainst(target);
await target.close();

const requests = result.requests ?? 0;
const byFile = Object.entries(result.requestsByFile ?? {}).sort((a, b) => b[1] - a[1]);
const failing = result.clauses.filter((c) => c.outcome === 'fail' || c.outcome === 'warn').map((c) => c.clause.id);
const ideal = (requests * delay) / concurrency;
schedule(result, wallMs);
console.log(`delay ${delay} ms a response, concurrency ${concurrency}, peak requests in flight ${peak}`);
console.log(
  `wall ${(wallMs / 1000).toFixed(1)} s for ${requests} requests (goal at the default concurrency: ${GOAL_S} s or less at 20 ms, ${GOAL_100_MS_S} s or less at 100 ms); ideal (requests × delay ÷ concurrency) ${(ideal / 1000).toFixed(1)} s; ratio ${(wallMs / Math.max(1, ideal)).toFixed(2)}`,
);
console.log(
  `verdict: ${failing.length === 0 ? 'no clause failed or warned' : `failed or warned: ${failing.join(' ')}`}; cleanup left ${result.cleanup?.leftovers.length ?? '?'} objects`,
);
printUpstreamErrors('', upstreamErrors);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
console.log(`requests in flight: ${mean(samples).toFixed(1)} on average of ${concurrency} allowed; by 2 s of the run:`);
const perBucket = 200;
const buckets = Array.from({ length: Math.ceil(samples.length / perBucket) }, (_, i) => mean(samples.slice(i * perBucket, (i + 1) * perBucket)).toFixed(1));
for (let i = 0; i < buckets.length; i += 10) console.log(`  ${String(i * 2).padStart(3)} s  ${buckets.slice(i, i + 10).join('  ')}`);
// A test's time in delays is the longest chain of requests it waited on one after another (or at the gate).
console.log(`longest tests (their time in ${delay} ms delays: the chain of requests they waited on, at the gate too):`);
for (const t of [...result.tests].sort((a, b) => b.durationMs - a.durationMs).slice(0, 12)) {
  const chain = delay > 0 ? `${Math.round(t.durationMs / delay)}`.padStart(5) : '';
  console.log(`  ${`${(t.durationMs / 1000).toFixed(1)} s`.padStart(8)} ${chain}  ${t.file.replace(/^suites\//, '')}: ${t.title.slice(0, 80)}`);
}
console.log('suite files in the order they ended (time since the start, requests):');
const requestsOf = new Map(byFile);
for (const [file, at] of [...endedAt].sort((a, b) => a[1] - b[1]))
  if ((requestsOf.get(file) ?? 0) > 0) console.log(`  ${`${(at / 1000).toFixed(1)} s`.padStart(8)}  ${String(requestsOf.get(file)).padStart(5)}  ${file}`);
