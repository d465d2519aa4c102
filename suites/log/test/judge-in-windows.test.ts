import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../../core/exchange.ts';
import { ViolationError } from '../../harness/assert.ts';
import { COPIES, type CountWindows, type Judged, judgeInWindows, MOST_COPIES, ROUNDS, type WindowRule } from '../log-reader.ts';

// A log that only the requests below and other users write to: `logs` tells which labels the
// server logs, `foreign` how many entries other users add while a window's requests are out.
function log(logs: (label: string) => boolean, foreign: (window: number) => number = () => 0) {
  let count = 0;
  let opened = 0;
  const windows: Pick<CountWindows, 'added' | 'copies'> = {
    async added<T>(send: () => Promise<T>) {
      const before = count;
      const result = await send();
      count += foreign(opened++);
      return { result, added: count - before, ms: 0 };
    },
    async copies(send: () => Promise<Exchange>, copies = 1) {
      const { result, added, ms } = await this.added(() => Promise.all(Array.from({ length: copies }, send)));
      return { ex: result[0]!, added, ms };
    },
  };
  const request = (label: string, status: number): Judged => [
    label,
    async () => {
      if (logs(label)) count++;
      return { request: { method: 'GET', url: `/${label}`, headers: {} }, response: { status, headers: {}, body: '{}' } } as Exchange;
    },
  ];
  return { windows, request, windowsOpened: () => opened };
}

const LOGGED: WindowRule = { logged: true, judges: (ex) => ex.response?.status === 401, owed: (label) => `a log entry for ${label}` };
const UNLOGGED: WindowRule = { logged: false, judges: (ex) => ex.response?.status === 404, owed: (label) => `no log entry for ${label}` };
const labels = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];

// A fixed sequence of numbers in (0, 1): the same foreign entries at every run of the test.
function seeded(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return ((x >>> 0) + 0.5) / 2 ** 32;
  };
}

async function blamed(run: Promise<unknown>): Promise<string | undefined> {
  try {
    await run;
    return undefined;
  } catch (error) {
    if (error instanceof ViolationError) return error.message;
    throw error;
  }
}

// Every label of `labels` sent once, as the rule's requests (401s for LOGGED, 404s for UNLOGGED).
function judgeAll(l: ReturnType<typeof log>, rule: WindowRule) {
  return judgeInWindows(
    l.windows,
    labels.map((x) => l.request(x, rule === LOGGED ? 401 : 404)),
    8,
    rule,
  );
}

describe('judgeInWindows', () => {
  it('proves every logged request in one window when the log gained an entry for each', async () => {
    const l = log(() => true);
    expect((await judgeAll(l, LOGGED)).map((j) => j.index)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(l.windowsOpened()).toBe(1);
  });

  it.each([
    ['leaves out of the log', LOGGED, (odd: string) => (x: string) => x !== odd, 'a log entry for'],
    ['logs among those it must not', UNLOGGED, (odd: string) => (x: string) => x === odd, 'no log entry for'],
  ] as const)('names the one request a server %s, wherever it stands', async (_, rule, logs, owed) => {
    for (const odd of labels) expect(await blamed(judgeAll(log(logs(odd)), rule))).toContain(`${owed} ${odd}`);
  });

  it('blames no request for entries other users add to every window', async () => {
    expect(
      await judgeAll(
        log(
          () => true,
          () => 1,
        ),
        LOGGED,
      ),
    ).toHaveLength(7);
    // As many foreign entries in every window as copies and more: a log that leaves errors out is not blamed.
    for (const f of [1, COPIES - 1, COPIES, 3 * COPIES])
      expect(
        await judgeAll(
          log(
            () => false,
            () => f,
          ),
          UNLOGGED,
        ),
      ).toHaveLength(7);
  });

  // A busy installation: other users add a varying number of entries to each window (a Poisson
  // count, from a fixed seed), as a populated field at 100 ms a reply does (LOG-03 failed a lawful
  // server there when five entries in one window of copies named the request).
  it.each([1, 3, 8])('blames no unlogged request, and still names one that is logged, among %d foreign entries a window on average', async (mean) => {
    const poisson = seeded(mean * 7919);
    const foreign = () => {
      let k = 0;
      for (let p = 1, limit = Math.exp(-mean); ; k++) {
        p *= poisson();
        if (p <= limit) return k;
      }
    };
    for (let trial = 0; trial < 25; trial++)
      expect(
        await judgeAll(
          log(() => false, foreign),
          UNLOGGED,
        ),
      ).toHaveLength(7);
    let named = 0;
    for (let trial = 0; trial < 25; trial++)
      if (
        await blamed(
          judgeAll(
            log((x) => x === 'c', foreign),
            UNLOGGED,
          ),
        )
      )
        named++;
    expect(named).toBeGreaterThanOrEqual(24);
  });

  it('sends at most MOST_COPIES copies a round, and names nothing on a log too busy for that', async () => {
    let sent = 0;
    const l = log(
      () => true,
      () => MOST_COPIES,
    );
    const counted: Judged = [
      'a',
      async () => {
        sent++;
        return l.request('a', 404)[1]();
      },
    ];
    expect(await judgeInWindows(l.windows, [counted], 8, UNLOGGED)).toHaveLength(1);
    expect(sent).toBe(1);
  });

  it('names a logged request only after ROUNDS rounds of copies, each beside a quiet window', async () => {
    const l = log((x) => x === 'a');
    const message = await blamed(judgeInWindows(l.windows, [l.request('a', 404)], 8, UNLOGGED));
    expect(message).toContain('no log entry for a');
    expect(message?.match(/in a window as long with nothing sent/g)).toHaveLength(ROUNDS);
    // Its own window, then a window of copies and a quiet one each round.
    expect(l.windowsOpened()).toBe(1 + 2 * ROUNDS);
  });

  it('does not let an entry of a reply it does not judge stand in for a missing one', async () => {
    // 'ok' succeeds (and is logged, as an action may be); 'a' is refused and left out of the log.
    const l = log((x) => x === 'ok');
    expect(await blamed(judgeInWindows(l.windows, [l.request('ok', 200), l.request('a', 401)], 8, LOGGED))).toContain('a log entry for a');
  });
});
