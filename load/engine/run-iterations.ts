// The iterations of a load run: the executor starts them (constant or ramping VUs; a constant or
// ramping arrival rate that drops an iteration when every VU is busy) until the duration, the
// iteration bound or the request bound; then the run waits for the iterations in flight. Once a
// second the progress line and a row of the per-second series; the run's last, shorter stretch
// is a row too. k6's executors of the same names are the model.
import { performance } from 'node:perf_hooks';
import type { Io, Scenario } from '../k6/lib/iterations.js';
import type { RunMetrics } from './metrics.ts';
import { round3 } from './stats.ts';
import { Stopped, type Transport } from './transport.ts';

/** A k6 stage in ms: the rate (per second) or the VUs move linearly to `target` over `durationMs`. */
export interface RunStage {
  durationMs: number;
  target: number;
}

/** The executor a run uses, from the scenario or the command line (--vus, --rate); rates per second. */
export type RunModel =
  | { executor: 'constant-arrival-rate'; rate: number; maxVUs: number }
  | { executor: 'constant-vus'; vus: number }
  | { executor: 'ramping-arrival-rate'; startRate: number; stages: RunStage[]; maxVUs: number }
  | { executor: 'ramping-vus'; startVUs: number; stages: RunStage[] };

export interface IterationCounts {
  started: number;
  completed: number;
  dropped: number;
  interrupted: number;
}

export interface IterationsRun extends IterationCounts {
  startedAt: Date;
  durationS: number;
  /** a writing run's sweep at its end: objects of the run found under its names, and deleted */
  swept?: { found: number; deleted: number; left: number | null; why?: string };
}

export interface IterationLimits {
  durationMs: number;
  /** start at most this many iterations */
  maxIterations: number;
  maxRequests: number;
  /** how long the iterations in flight may take to finish after the end (a request's deadline) */
  timeoutMs: number;
}

type Iteration = (io: Io, scenario: Scenario, n: number) => Promise<void>;

/** The most iterations a model runs at once: the pool's size. */
export function modelConcurrency(model: RunModel): number {
  if (model.executor === 'constant-vus') return model.vus;
  if (model.executor === 'ramping-vus') return Math.max(1, model.startVUs, ...model.stages.map((s) => Math.ceil(s.target)));
  return model.maxVUs;
}

/** The staged value at `t` ms: linear within each stage, the last target after the last stage. */
export function stagedValue(start: number, stages: RunStage[], t: number): number {
  let from = start;
  let at = 0;
  for (const s of stages) {
    if (t < at + s.durationMs) return from + ((s.target - from) * (t - at)) / s.durationMs;
    at += s.durationMs;
    from = s.target;
  }
  return from;
}

/** The integral of a staged rate (per second) from 0 to `t` ms: how many iterations are due by then. */
export function stagedIntegral(start: number, stages: RunStage[], t: number): number {
  let from = start;
  let at = 0;
  let sum = 0;
  for (const s of stages) {
    const span = Math.min(s.durationMs, Math.max(0, t - at));
    if (span <= 0) return sum;
    const to = from + ((s.target - from) * span) / s.durationMs;
    sum += ((from + to) / 2) * (span / 1000);
    at += s.durationMs;
    from = s.target;
  }
  return sum + from * (Math.max(0, t - at) / 1000);
}

export async function runIterations(
  iterate: Iteration,
  scenario: Scenario,
  model: RunModel,
  limits: IterationLimits,
  transport: Transport,
  metrics: RunMetrics,
  progress: ((line: string) => void) | undefined,
): Promise<IterationsRun> {
  const counts: IterationCounts = { started: 0, completed: 0, dropped: 0, interrupted: 0 };
  const startedAt = new Date();
  let inFlight = 0;
  const running = new Set<Promise<void>>();
  const t0 = performance.now();
  const end = t0 + limits.durationMs;
  const concurrency = modelConcurrency(model);
  const more = () => !transport.stopped && performance.now() < end && metrics.requests < limits.maxRequests && counts.started < limits.maxIterations;

  function launch(): Promise<void> {
    const n = counts.started++;
    inFlight++;
    const began = performance.now();
    const p = iterate(transport.io, scenario, n)
      .then(() => {
        counts.completed++;
        metrics.live?.iteration(performance.now() - began);
      })
      .catch((e: unknown) => {
        if (!(e instanceof Stopped)) metrics.check('iteration: no exception', false);
        counts.interrupted++;
      })
      .finally(() => {
        inFlight--;
        running.delete(p);
      });
    running.add(p);
    return p;
  }

  function drop(): void {
    counts.dropped++;
    metrics.live?.dropped();
  }

  let closedAt = t0;
  let startedBefore = 0;
  function closeSecond(seconds: number): void {
    const s = metrics.closeSecond(counts.started - startedBefore, inFlight, seconds);
    startedBefore = counts.started;
    metrics.live?.vus(inFlight, concurrency);
    const { passes, fails } = metrics.checkTotals();
    const total = passes + fails;
    progress?.(
      `${String(s.second).padStart(4)}s  ${s.seconds < 1 ? `${s.requests} req in ${s.seconds.toFixed(2)} s` : `${s.requests} req/s`}  p95 ${s.p95.toFixed(1)} ms  ` +
        `iterations ${counts.completed}/${counts.started} dropped ${counts.dropped}  failed ${metrics.failed}/${metrics.requests}  ` +
        `checks ${total === 0 ? '-' : `${((100 * passes) / total).toFixed(2)}%`}  in flight ${inFlight}`,
    );
  }
  const ticker = setInterval(() => {
    closedAt = performance.now();
    closeSecond(1);
  }, 1000);

  try {
    if (model.executor === 'constant-vus' || model.executor === 'ramping-vus') {
      const vusAt =
        model.executor === 'constant-vus' ? () => model.vus : () => Math.floor(stagedValue(model.startVUs, model.stages, performance.now() - t0) + 1e-9);
      // VU i runs while the stages give at least i + 1 VUs; its iteration in progress ends first (k6's graceful ramp-down).
      const loops = Array.from({ length: concurrency }, async (_, i) => {
        while (more()) {
          if (i < vusAt()) await launch();
          else await sleep(Math.max(1, Math.min(20, end - performance.now())));
        }
      });
      await settledWithin(Promise.all(loops), limits.durationMs);
    } else {
      // Iteration k is due once the integral of the rate reaches k (the first at the start when the rate starts above 0).
      const due =
        model.executor === 'constant-arrival-rate'
          ? (t: number) => Math.floor((t * model.rate) / 1000 + 1e-9) + 1
          : (t: number) => Math.floor(stagedIntegral(model.startRate, model.stages, t) + 1e-9) + (model.startRate > 0 ? 1 : 0);
      const interval = model.executor === 'constant-arrival-rate' ? 1000 / model.rate : 10;
      let launched = 0;
      while (more()) {
        const now = performance.now();
        const target = due(now - t0);
        for (; launched < target && counts.started < limits.maxIterations; launched++) {
          if (inFlight >= model.maxVUs) drop();
          else launch();
        }
        const next = model.executor === 'constant-arrival-rate' ? t0 + launched * interval - performance.now() : interval;
        await sleep(Math.max(1, Math.min(interval, end - now, next)));
      }
    }
    if (counts.started >= limits.maxIterations) await settledWithin(Promise.allSettled([...running]), Math.max(0, end - performance.now()));
    transport.stop();
    await settledWithin(Promise.allSettled([...running]), limits.timeoutMs + 1000);
  } finally {
    clearInterval(ticker);
    transport.stop();
  }
  // The run's remainder since the last full second, so the series adds up to the run.
  const tail = performance.now() - closedAt;
  if (tail >= 1 || metrics.pendingRequests() > 0) closeSecond(Math.min(1, tail / 1000));
  return { ...counts, startedAt, durationS: round3((performance.now() - t0) / 1000) };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits for `work` at most `ms`; the timer goes with it, so a finished run does not keep the process alive. */
async function settledWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
