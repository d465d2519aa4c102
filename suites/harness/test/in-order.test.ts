import { describe, expect, test } from 'vitest';
import { ahead, inOrder, together } from '../in-order.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('inOrder', () => {
  test('keeps the items order whatever order the calls end in, and never has more than the limit in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const out = await inOrder([30, 5, 20, 1, 10, 2, 15], 3, async (ms, i) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await tick(ms);
      inFlight--;
      return `${i}:${ms}`;
    });
    expect(out).toEqual(['0:30', '1:5', '2:20', '3:1', '4:10', '5:2', '6:15']);
    expect(peak).toBe(3);
  });

  test('a limit of 1 is one call after another', async () => {
    const order: string[] = [];
    await inOrder(['a', 'b', 'c'], 1, async (x) => {
      order.push(`start ${x}`);
      await tick(1);
      order.push(`end ${x}`);
    });
    expect(order).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  test('the first failure is thrown after the calls already started have settled; no new call starts', async () => {
    const started: number[] = [];
    const settled: number[] = [];
    const run = inOrder([1, 2, 3, 4, 5, 6], 2, async (n) => {
      started.push(n);
      await tick(n === 2 ? 1 : 5);
      settled.push(n);
      if (n === 2) throw new Error('two');
      return n;
    });
    await expect(run).rejects.toThrow('two');
    expect(started).toEqual([1, 2]);
    expect(settled.sort()).toEqual([1, 2]);
  });

  test('no items, no calls', async () => {
    expect(await inOrder([], 4, async () => 1)).toEqual([]);
  });
});

describe('ahead', () => {
  test('hands the results over in order, at most `limit` calls ahead of the loop', async () => {
    let inFlight = 0;
    let peak = 0;
    const seen: number[] = [];
    for await (const [n, r] of ahead([1, 2, 3, 4, 5, 6], 3, async (n) => {
      peak = Math.max(peak, ++inFlight);
      await tick(n % 2 === 0 ? 1 : 6);
      inFlight--;
      return n * 10;
    })) {
      expect(r).toBe(n * 10);
      seen.push(n);
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
    expect(peak).toBe(3);
  });

  test('a loop that ends early starts no new call, and the calls started settle before its error goes on', async () => {
    const started: number[] = [];
    const settled: number[] = [];
    const loop = (async () => {
      for await (const [n] of ahead([1, 2, 3, 4, 5, 6, 7, 8], 2, async (n) => {
        started.push(n);
        await tick(5);
        settled.push(n);
        return n;
      })) {
        if (n === 2) throw new Error('violation on 2');
      }
    })();
    await expect(loop).rejects.toThrow('violation on 2');
    expect(started).toEqual([1, 2, 3, 4]);
    expect(settled.sort()).toEqual([1, 2, 3, 4]);
  });

  test('together: the values in order; a failure goes on once every call has settled', async () => {
    expect(await together([tick(3).then(() => 1), Promise.resolve('b')])).toEqual([1, 'b']);
    let slowDone = false;
    const failing = together([
      Promise.reject(new Error('setup failed')),
      tick(10).then(() => {
        slowDone = true;
      }),
    ]);
    await expect(failing).rejects.toThrow('setup failed');
    expect(slowDone).toBe(true);
  });
});
