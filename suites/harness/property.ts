import fc from 'fast-check';
import { SetupError, ViolationError } from './assert.ts';
import type { ClauseTestContext } from './clause-test.ts';
import { DEPTH_FACTOR } from './config.ts';

export interface PropertyRun<Ts> {
  numRuns: number;
  /** Cases that run on every seed, before the random ones. */
  examples?: Ts[];
  /** Stop generating new cases after this long; the cases run so far still count. */
  timeLimitMs?: number;
}

/**
 * Runs an async property from the run's seed, so `pmv6 run --seed N` replays it.
 *
 * Decision: fast-check reports a failed property as a plain Error, which the runner would count
 * as a harness error. The failure is rethrown as the error its counterexample raised (a
 * ViolationError keeps its exchange, a SetupError stays a failed setup) with fast-check's replay
 * data added: seed, path and the shrunk counterexample.
 */
export async function checkProperty<Ts>(t: ClauseTestContext, property: fc.IAsyncProperty<Ts>, run: PropertyRun<Ts>): Promise<void> {
  const numRuns = Math.max(1, Math.round(run.numRuns * DEPTH_FACTOR[t.config.depth ?? 'standard']));
  const out = await fc.check(property, {
    seed: t.config.seed,
    numRuns,
    ...(run.examples ? { examples: run.examples } : {}),
    ...(run.timeLimitMs ? { interruptAfterTimeLimit: run.timeLimitMs } : {}),
  });
  if (!out.failed) return;
  const replay =
    `property failed after ${out.numRuns} run(s), shrunk ${out.numShrinks} time(s); ` +
    `counterexample ${fc.stringify(out.counterexample)}; seed ${out.seed}, path "${out.counterexamplePath}" ` +
    `(replay: pmv6 run --seed ${out.seed}, or fc.check with { seed: ${out.seed}, path: "${out.counterexamplePath}" })`;
  const e = out.errorInstance;
  if (e instanceof ViolationError) {
    throw new ViolationError({ expected: e.expected, actual: `${e.actual}\n${replay}`, ...(e.exchange ? { exchange: e.exchange } : {}) });
  }
  if (e instanceof SetupError) throw new SetupError(`${e.message}\n${replay}`, { cause: e });
  const err = e instanceof Error ? e : new Error(String(e));
  err.message = `${err.message}\n${replay}`;
  throw err;
}
