import { describe, expect, test } from 'vitest';
import { holdsBetweenCounts } from '../../oracle/lists.ts';

// The one mechanism behind the relations' and the oracle's list findings (suites/oracle/lists.ts).
function counts(...values: Array<number | undefined>): { read: () => Promise<number | undefined>; reads: () => number } {
  let i = 0;
  return { read: async () => values[i++], reads: () => i };
}

describe('holdsBetweenCounts: a finding on a list stands only when it holds again between two equal counts', () => {
  test('stands when the finding holds again and the counts before and after agree', async () => {
    const c = counts(7, 7);
    expect(await holdsBetweenCounts(c.read, async () => true)).toBe(true);
    expect(c.reads()).toBe(2);
  });

  test('does not stand when the list moved (counts differ), the finding is gone, or a count cannot be read', async () => {
    expect(await holdsBetweenCounts(counts(7, 8).read, async () => true)).toBe(false);
    expect(await holdsBetweenCounts(counts(7, 7).read, async () => false)).toBe(false);
    expect(await holdsBetweenCounts(counts(7, undefined).read, async () => true)).toBe(false);
    let asked = false;
    expect(
      await holdsBetweenCounts(counts(undefined).read, async () => {
        asked = true;
        return true;
      }),
    ).toBe(false);
    expect(asked).toBe(false);
  });

  test('with the count the finding was judged by, the count before must agree with it too (compared by `same`)', async () => {
    type C = { n: number; per: number };
    const same = (a: C, b: C) => a.n === b.n && a.per === b.per;
    const read = (...v: C[]) => counts(...(v as unknown as number[])).read as unknown as () => Promise<C | undefined>;
    expect(await holdsBetweenCounts(read({ n: 3, per: 5 }, { n: 3, per: 5 }), async () => true, { same, expected: { n: 3, per: 5 } })).toBe(true);
    expect(await holdsBetweenCounts(read({ n: 4, per: 5 }, { n: 4, per: 5 }), async () => true, { same, expected: { n: 3, per: 5 } })).toBe(false);
  });
});
