import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ViolationError } from '../assert.ts';
import type { ClauseTestContext } from '../clause-test.ts';
import type { RunConfig } from '../config.ts';
import { checkProperty } from '../property.ts';

const context = (concurrency: number) =>
  ({
    config: { target: 'http://127.0.0.1:9', user: 'a', password: 'b', runId: 'p', seed: 42, readOnly: false, timeoutMs: 1000, concurrency } satisfies RunConfig,
  }) as unknown as ClauseTestContext;

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

async function failure(concurrency: number, property: fc.IAsyncProperty<[number]>): Promise<string> {
  try {
    await checkProperty(context(concurrency), property, { numRuns: 40, examples: [[1]] });
  } catch (e) {
    return e instanceof ViolationError ? `${e.expected} | ${e.actual}` : String(e);
  }
  return 'passed';
}

describe('checkProperty', () => {
  test('sends the runs side by side and reports a failure as one after another does: same counterexample, seed and path', async () => {
    let inFlight = 0;
    let peak = 0;
    const property = () =>
      fc.asyncProperty(fc.integer({ min: 0, max: 1000 }), async (v) => {
        peak = Math.max(peak, ++inFlight);
        await tick();
        inFlight--;
        if (v > 700) throw new ViolationError({ expected: 'at most 700', actual: String(v) });
      });
    const inTurn = await failure(1, property());
    expect(peak).toBe(1);
    expect(inTurn).toMatch(/at most 700 \| 701\n.*counterexample \[701\]; seed 42, path "/);
    peak = 0;
    expect(await failure(8, property())).toBe(inTurn);
    expect(peak).toBeGreaterThan(1);
  });

  test('a passing property passes at any concurrency, its runs being the ones made one after another', async () => {
    const seen = (concurrency: number) => {
      const values: number[] = [];
      return checkProperty(
        context(concurrency),
        fc.asyncProperty(fc.integer({ min: 0, max: 1000 }), async (v) => {
          values.push(v);
        }),
        { numRuns: 40, examples: [[1]] },
      ).then(() => values.sort((a, b) => a - b));
    };
    expect(await seen(8)).toEqual(await seen(1));
  });

  test('a run that skips its case (fc.pre) leaves the property to fast-check, which generates others', async () => {
    const property = fc.asyncProperty(fc.integer({ min: 0, max: 1000 }), async (v) => {
      fc.pre(v % 2 === 0);
      if (v > 900) throw new ViolationError({ expected: 'at most 900', actual: String(v) });
    });
    const inTurn = await failure(1, property);
    expect(await failure(8, property)).toBe(inTurn);
  });
});
