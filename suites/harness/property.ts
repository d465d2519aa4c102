import fc from 'fast-check';
import { SetupError, ViolationError } from './assert.ts';
import type { ClauseTestContext } from './clause-test.ts';
import { DEPTH_FACTOR, inFlight } from './config.ts';
import { ahead } from './in-order.ts';

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
 *
 * Decision (--concurrency N > 1): the runs go out N at once. They are the runs fast-check makes
 * one after another from the same seed: a first fc.check whose runs only record their input
 * (generation does not depend on the outcome of a run). The outcomes are taken in order; at the
 * first run that did not pass, no new run starts: a failure is replayed by fast-check from its
 * path and shrunk one run after another, so the failure reported is the one --concurrency 1
 * reports; a skipped case (fc.pre) makes fast-check generate others, so its own loop decides.
 * The runs of a property are independent requests (refusals, reads, objects of their own).
 */
export async function checkProperty<Ts>(t: ClauseTestContext, property: fc.IAsyncProperty<Ts>, run: PropertyRun<Ts>): Promise<void> {
  const numRuns = Math.max(1, Math.round(run.numRuns * DEPTH_FACTOR[t.config.depth ?? 'standard']));
  const params = {
    seed: t.config.seed,
    numRuns,
    ...(run.examples ? { examples: run.examples } : {}),
    ...(run.timeLimitMs ? { interruptAfterTimeLimit: run.timeLimitMs } : {}),
  };
  const side = inFlight(t.config);
  let path: string | undefined;
  if (side > 1 && !run.timeLimitMs) {
    const inputs: Ts[] = [];
    const record: fc.IAsyncProperty<Ts> = Object.create(property, {
      run: {
        value: async (input: Ts) => {
          inputs.push(input);
          return null;
        },
      },
    });
    await fc.check(record, params);
    let index = 0;
    let outcome: Awaited<ReturnType<typeof property.run>> = null;
    for await (const [, r] of ahead(inputs, side, (input) => property.run(input))) {
      outcome = r;
      if (r !== null) break;
      index++;
    }
    if (outcome === null) return;
    if (!fc.PreconditionFailure.isFailure(outcome)) path = String(index);
  }
  const out = await fc.check(property, { ...params, ...(path !== undefined ? { path } : {}) });
  if (!out.failed) return;
  // Replayed from its path, the failing run is the replay's first: the runs before it passed.
  const runs = out.numRuns + (path !== undefined ? Number(path) : 0);
  const replay =
    `property failed after ${runs} run(s), shrunk ${out.numShrinks} time(s); ` +
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
