// The iterations of a load run: the executor starts them (constant VUs, or a constant arrival
// rate that drops an iteration when every VU is busy) until the duration, the iteration bound or
// the request bound; then the run waits for the iterations in flight. Once a second the progress
// line. k6's executors of the same names are the model.
import { performance } from 'node:perf_hooks';
import type { Io, Scenario } from '../k6/lib/iterations.js';
import type { RunMetrics } from './metrics.ts';
import { round3 } from './stats.ts';
import { Stopped, type Transport } from './transport.ts';

/** The executor a run uses, from the scenario or the command line (--vus, --rate). */
export type RunModel = { executor: 'constant-arrival-rate'; rate: number; maxVUs: number } | { executor: 'constant-vus'; vus: number };

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
  swept?: { found: number; deleted: number };
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
  const more = () => !transport.stopped && performance.now() < end && metrics.requests < limits.maxRequests && counts.started < limits.maxIterations;

  function launch(): Promise<void> {
    const n = counts.started++;
    inFlight++;
    const p = iterate(transport.io, scenario, n)
      .then(() => void counts.completed++)
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

  const ticker = setInterval(() => {
    const s = metrics.closeSecond();
    const { passes, fails } = metrics.checkTotals();
    const total = passes + fails;
    progress?.(
      `${String(s.second).padStart(4)}s  ${s.requests} req/s  p95 ${s.p95.toFixed(1)} ms  ` +
        `iterations ${counts.completed}/${counts.started} dropped ${counts.dropped}  failed ${metrics.failed}/${metrics.requests}  ` +
        `checks ${total === 0 ? '-' : `${((100 * passes) / total).toFixed(2)}%`}  in flight ${inFlight}`,
    );
  }, 1000);

  try {
    if (model.executor === 'constant-vus') {
      const loops = Array.from({ length: model.vus }, async () => {
        while (more()) await launch();
      });
      await settledWithin(Promise.all(loops), limits.durationMs);
    } else {
      const interval = 1000 / model.rate;
      let due = 0;
      while (more()) {
        const now = performance.now();
        const target = Math.floor((now - t0) / interval) + 1;
        for (; due < target && counts.started < limits.maxIterations; due++) {
          if (inFlight >= model.maxVUs) counts.dropped++;
          else launch();
        }
        await sleep(Math.max(1, Math.min(interval, end - now, t0 + due * interval - performance.now())));
      }
    }
    if (counts.started >= limits.maxIterations) await settledWithin(Promise.allSettled([...running]), Math.max(0, end - performance.now()));
    transport.stop();
    await settledWithin(Promise.allSettled([...running]), limits.timeoutMs + 1000);
  } finally {
    clearInterval(ticker);
    transport.stop();
  }
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
