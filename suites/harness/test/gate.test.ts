import { describe, expect, test } from 'vitest';
import { Gate } from '../gate.ts';
import { childScope, inScope, requestStarting, unchangedSince, writeMark } from '../traffic.ts';

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

/** A request through the gate that stays in flight until `end()` is called. */
function request(gate: Gate, log: string[], name: string) {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => {
    end = resolve;
  });
  const done = (async () => {
    const release = await gate.admit();
    log.push(`${name} in`);
    await ended;
    log.push(`${name} out`);
    release();
  })();
  return { end, done };
}

describe('the gate', () => {
  test('lets at most `limit` requests be in flight, the next when one ends', async () => {
    const gate = new Gate(2);
    const log: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((n) => request(gate, log, n));
    await tick();
    expect(log).toEqual(['a in', 'b in']);
    a!.end();
    await tick();
    expect(log).toEqual(['a in', 'b in', 'a out', 'c in']);
    b!.end();
    c!.end();
    await Promise.all([a!.done, b!.done, c!.done]);
  });

  test('a free slot goes to the queued request of a preferred file with none in flight before the requests of others queued earlier', async () => {
    const gate = new Gate(2, new Set(['chain']));
    const log: string[] = [];
    const inFile = (file: string, name: string) => inScope({ file, sent: 0 }, () => request(gate, log, name));
    // Another file fills both slots and queues two more; the preferred file queues one after them.
    const many = ['m1', 'm2', 'm3', 'm4'].map((n) => inFile('many', n));
    await tick();
    const chain = inFile('chain', 'c1');
    await tick();
    expect(log).toEqual(['m1 in', 'm2 in']);
    many[0]!.end();
    await tick();
    // The chain's request goes before m3 and m4, queued earlier.
    expect(log).toEqual(['m1 in', 'm2 in', 'm1 out', 'c1 in']);
    // A second request of the chain while its first is in flight waits its turn.
    const chain2 = inFile('chain', 'c2');
    await tick();
    many[1]!.end();
    await tick();
    expect(log.slice(4)).toEqual(['m2 out', 'm3 in']);
    for (const r of [...many, chain, chain2]) r.end();
    await Promise.all([...many, chain, chain2].map((r) => r.done));
  });

  test('an exclusive section waits for the requests in flight, and holds back those after it', async () => {
    const gate = new Gate(8);
    const log: string[] = [];
    const before = request(gate, log, 'before');
    await tick();
    let endSection!: () => void;
    const section = gate.exclusive(async () => {
      log.push('section in');
      await new Promise<void>((resolve) => {
        endSection = resolve;
      });
      log.push('section out');
    });
    await tick();
    const after = request(gate, log, 'after');
    await tick();
    expect(log).toEqual(['before in']);
    before.end();
    await tick();
    expect(log).toEqual(['before in', 'before out', 'section in']);
    await tick();
    expect(log).not.toContain('after in');
    endSection();
    await section;
    await tick();
    expect(log).toEqual(['before in', 'before out', 'section in', 'section out', 'after in']);
    after.end();
    await after.done;
  });

  test("a section's own requests pass, re-entrantly, but no more than `limit` at once", async () => {
    const gate = new Gate(2);
    let peak = 0;
    let inFlight = 0;
    await gate.exclusive(async () => {
      expect(gate.holding()).toBe(true);
      await gate.exclusive(async () => {
        await Promise.all(
          Array.from({ length: 6 }, async () => {
            const release = await gate.admit();
            peak = Math.max(peak, ++inFlight);
            await tick();
            inFlight--;
            release();
          }),
        );
      });
    });
    expect(peak).toBe(2);
    expect(gate.holding()).toBe(false);
  });

  test('serves waiters in the order they came: requests queued before a section go first', async () => {
    const gate = new Gate(1);
    const log: string[] = [];
    const first = request(gate, log, 'first');
    await tick();
    const queued = request(gate, log, 'queued');
    const section = gate.exclusive(async () => {
      log.push('section');
    });
    first.end();
    await tick();
    expect(log).toEqual(['first in', 'first out', 'queued in']);
    queued.end();
    await section;
    expect(log).toEqual(['first in', 'first out', 'queued in', 'queued out', 'section']);
  });

  test('closing lets every waiter through at once (the cleanup after an interrupt)', async () => {
    const gate = new Gate(1);
    const log: string[] = [];
    const stuck = request(gate, log, 'stuck');
    await tick();
    const waiting = request(gate, log, 'waiting');
    let ran = false;
    const section = gate.exclusive(async () => {
      ran = true;
    });
    await tick();
    expect(log).toEqual(['stuck in']);
    gate.close();
    await section;
    await tick();
    expect(ran).toBe(true);
    expect(log).toEqual(['stuck in', 'waiting in']);
    expect(await gate.admit()).toBeTypeOf('function');
    stuck.end();
    waiting.end();
    await Promise.all([stuck.done, waiting.done]);
  });
});

describe('traffic', () => {
  test('a write in flight or started since a mark makes what was read since unsettled', () => {
    const mark = writeMark();
    expect(unchangedSince(mark)).toBe(true);
    const ended = requestStarting('GET');
    ended();
    expect(unchangedSince(mark)).toBe(true);
    const writeEnded = requestStarting('PUT');
    const during = writeMark();
    expect(unchangedSince(mark)).toBe(false);
    writeEnded();
    expect(unchangedSince(during)).toBe(false);
    expect(unchangedSince(writeMark())).toBe(true);
  });

  test('scopes name the file and the test that sent a request', () => {
    const file = { file: 'suites/x.test.ts', sent: 0 };
    inScope(file, () => {
      const test = childScope();
      expect(test.file).toBe('suites/x.test.ts');
      expect(test.parent).toBe(file);
    });
  });
});
