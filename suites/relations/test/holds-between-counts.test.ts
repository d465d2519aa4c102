import { describe, expect, test } from 'vitest';
import { sameItems } from '../../harness/pages.ts';
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

describe('holdsBetweenCounts with a Reading: the finding stands only when a second reading shows the same answers', () => {
  type S = { ids: string[]; broken: boolean };
  const reads = (...v: S[]) => {
    let i = 0;
    return { read: async (_before: number) => v[i++]!, reads: () => i };
  };
  const finding = (s: S, before: number) => (s.broken ? `${s.ids.length} of ${before}` : undefined);
  const same = (a: S, b: S) => sameItems(a.ids, b.ids);
  const x = { ids: ['1', '2'], broken: true };

  test('returns the finding when the reading anew shows it, a second reading shows the same items and the counts agree', async () => {
    const r = reads(x, { ids: ['2', '1'], broken: true });
    expect(await holdsBetweenCounts(counts(3, 3).read, { read: r.read, finding, same })).toEqual({ finding: '2 of 3' });
    expect(r.reads()).toBe(2);
  });

  test('says why it does not stand: the count before unread, the finding gone, the list moved and back, the counts differ', async () => {
    expect(await holdsBetweenCounts(counts(undefined).read, { ...reads(x), finding, same })).toEqual({ why: 'uncounted' });
    const gone = reads({ ids: ['1'], broken: false }, x);
    expect(await holdsBetweenCounts(counts(3, 3).read, { read: gone.read, finding, same })).toEqual({ why: 'gone' });
    expect(gone.reads()).toBe(1);
    expect(await holdsBetweenCounts(counts(3, 3).read, { ...reads(x, { ids: ['1', '3'], broken: true }), finding, same })).toEqual({ why: 'moved' });
    expect(await holdsBetweenCounts(counts(3, 4).read, { ...reads(x, x), finding, same })).toEqual({ why: 'moved' });
    expect(await holdsBetweenCounts(counts(3, undefined).read, { ...reads(x, x), finding, same })).toEqual({ why: 'moved' });
    expect(await holdsBetweenCounts(counts(4, 4).read, { ...reads(x, x), finding, same }, { expected: 3 })).toEqual({ why: 'moved' });
  });

  test('with the first reading given, the list is read once and compared with it', async () => {
    const r = reads(x);
    expect(await holdsBetweenCounts(counts(3, 3).read, { read: r.read, finding, same, first: { ids: ['2', '1'], broken: true } }, { expected: 3 })).toEqual({
      finding: '2 of 3',
    });
    expect(r.reads()).toBe(1);
    expect(await holdsBetweenCounts(counts(3, 3).read, { ...reads(x), finding, same, first: { ids: ['1'], broken: true } })).toEqual({ why: 'moved' });
  });
});
