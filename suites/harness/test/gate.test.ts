import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { AGED, exclusive, exclusiveReads, Gate, HANDOVERS, openGate, refuseSettingsBeside, runBeside } from '../gate.ts';
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

  test('a free slot goes to the queued request whose file has nothing in flight and the longest chain still ahead, before the requests of others queued earlier', async () => {
    const gate = new Gate(
      2,
      new Map([
        ['long', 10],
        ['short', 3],
      ]),
    );
    const log: string[] = [];
    const inFile = (file: string, name: string) => inScope({ file, sent: 0 }, () => request(gate, log, name));
    // A file not measured fills both slots and queues one more; then the short chain, then the long one.
    const many = ['m1', 'm2', 'm3'].map((n) => inFile('many', n));
    await tick();
    const short = inFile('short', 's1');
    const long = inFile('long', 'l1');
    await tick();
    expect(log).toEqual(['m1 in', 'm2 in']);
    many[0]!.end();
    await tick();
    // The long chain's request goes first, then the short one's, then m3, queued before both.
    expect(log).toEqual(['m1 in', 'm2 in', 'm1 out', 'l1 in']);
    many[1]!.end();
    await tick();
    expect(log.slice(4)).toEqual(['m2 out', 's1 in']);
    // A second request of the long chain while its first is in flight waits its turn behind m3.
    const long2 = inFile('long', 'l2');
    await tick();
    short.end();
    await tick();
    expect(log.slice(6)).toEqual(['s1 out', 'm3 in']);
    for (const r of [...many, short, long, long2]) r.end();
    await Promise.all([...many, short, long, long2].map((r) => r.done));
  });

  test("a chain's part ahead shrinks as its file sends: a file past its measured chain goes in order of arrival", async () => {
    const gate = new Gate(1, new Map([['long', 2]]));
    const log: string[] = [];
    const inFile = (file: string, name: string) => inScope({ file, sent: 0 }, () => request(gate, log, name));
    // Two requests of the long file one after another: the first at place 1 (1 ahead), the second at place 2 (none ahead).
    const l1 = inFile('long', 'l1');
    await tick();
    l1.end();
    await l1.done;
    const blocker = inFile('other', 'o1');
    await tick();
    const o2 = inFile('other', 'o2');
    await tick();
    const l2 = inFile('long', 'l2');
    await tick();
    blocker.end();
    await tick();
    expect(log).toEqual(['l1 in', 'l1 out', 'o1 in', 'o1 out', 'o2 in']);
    for (const r of [o2, l2]) r.end();
    await Promise.all([o2.done, l2.done, blocker.done]);
  });

  test('a waiter that has waited AGED request times goes before any chain (short chains do not starve)', async () => {
    const gate = new Gate(1, new Map([['long', 10]]));
    const log: string[] = [];
    const inFile = (file: string, name: string) => inScope({ file, sent: 0 }, () => request(gate, log, name));
    // A quick request sets the mean time a request holds its slot.
    const quick = inFile('other', 'q');
    await tick();
    quick.end();
    await quick.done;
    const slow = inFile('other', 'o1');
    await tick();
    const old = inFile('other', 'o2');
    const chain = inFile('long', 'l1');
    // o1 holds its slot far longer than AGED quick requests: o2 has waited long enough to go first.
    await new Promise((resolve) => setTimeout(resolve, 200));
    slow.end();
    await tick();
    expect(log.slice(2)).toEqual(['o1 in', 'o1 out', 'o2 in']);
    for (const r of [old, chain]) r.end();
    await Promise.all([old.done, chain.done, slow.done]);
  });

  test("measures each file's longest chain of requests one after another, and the sections held", async () => {
    const gate = new Gate(8);
    const log: string[] = [];
    const inFile = (file: string, name: string) => inScope({ file, sent: 0 }, () => request(gate, log, name));
    // Three requests side by side, then one after them: a chain of 2.
    const side = ['a', 'b', 'c'].map((n) => inFile('f', n));
    await tick();
    for (const r of side) r.end();
    await Promise.all(side.map((r) => r.done));
    const last = inFile('f', 'd');
    await tick();
    last.end();
    await last.done;
    await inScope({ file: 'g', sent: 0 }, () => gate.exclusive(async () => (await gate.admit())()));
    const m = gate.measured();
    expect(Object.fromEntries(m.chains)).toEqual({ f: 2, g: 1 });
    expect(m.sections).toBe(1);
    expect(m.sectionsByFile.get('g')).toMatchObject({ sections: 1, requests: 1 });
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

  test('a section that only reads may be opened beside the other tests of a file, one that may change a setting may not', async () => {
    const gate = new Gate(2);
    const log: string[] = [];
    openGate(gate);
    try {
      await runBeside(false, async () => {
        expect(() => exclusive(async () => {})).toThrow(/afterOthers/);
        const other = request(gate, log, 'other');
        await tick();
        const section = exclusiveReads(async () => {
          log.push(`section in, holding ${gate.holding()}`);
          const release = await gate.admit();
          log.push('section read');
          release();
        });
        await tick();
        const after = request(gate, log, 'after');
        await tick();
        expect(log).toEqual(['other in']);
        other.end();
        await section;
        await tick();
        expect(log).toEqual(['other in', 'other out', 'section in, holding true', 'section read', 'after in']);
        after.end();
        await Promise.all([other.done, after.done]);
      });
    } finally {
      openGate(undefined);
    }
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

/**
 * Settings sections over a fake installation: `setting` is what it holds; each section opened
 * through `settings` puts `value` first in and puts back what it found last out, and `seen` gets
 * the setting under which each fn's request passed the gate.
 */
function installation(gate: Gate) {
  const state = { setting: 'default', opened: 0, closed: 0 };
  const seen: string[] = [];
  const send = async (name: string) => {
    const release = await gate.admit();
    seen.push(`${name}@${state.setting}`);
    release();
  };
  const settings = <T>(value: string, fn: () => Promise<T>) =>
    gate.joinable(
      `setting=${value}`,
      async () => {
        const before = state.setting;
        state.opened++;
        state.setting = value;
        await tick();
        return async () => {
          await tick();
          state.setting = before;
          state.closed++;
        };
      },
      fn,
    );
  return { state, seen, send, settings };
}

/** A promise and the function that resolves it. */
function later() {
  let go!: () => void;
  const done = new Promise<void>((resolve) => {
    go = resolve;
  });
  return { go, done };
}

describe('settings sections that ask the same settings share one section', () => {
  // A clock that stands still: a section is held less than AGED request times (the last test moves it).
  beforeEach(() => {
    vi.spyOn(performance, 'now').mockReturnValue(0);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  test("a call with the same settings joins the section, queued or held: the settings are put once, its requests pass as the holder's", async () => {
    const gate = new Gate(8);
    const { state, seen, send, settings } = installation(gate);
    const busy = request(gate, [], 'busy');
    await tick();
    const first = later();
    const opener = settings('hmac', async () => {
      expect(gate.holding() && gate.joined()).toBe(true);
      await send('opener');
      await first.done;
      return 'opener';
    });
    // Joins while the section waits for `busy`, and once it is held.
    const queued = settings('hmac', async () => {
      await send('queued');
      return 'queued';
    });
    busy.end();
    await tick();
    await tick();
    const held = settings('hmac', async () => {
      await send('held');
      return 'held';
    });
    await tick();
    await tick();
    first.go();
    expect(await Promise.all([opener, queued, held])).toEqual(['opener', 'queued', 'held']);
    expect(state).toEqual({ setting: 'default', opened: 1, closed: 1 });
    expect(seen.sort()).toEqual(['held@hmac', 'opener@hmac', 'queued@hmac']);
    expect(gate.measured().sections).toBe(1);
    expect([...gate.measured().sectionsByFile.values()]).toMatchObject([{ sections: 1, requests: 3, joined: 2 }]);
  });

  test('the last out puts the settings back and releases the gate; a request outside the section waits until then and is sent under the settings put back', async () => {
    const gate = new Gate(8);
    const { state, seen, send, settings } = installation(gate);
    const [hold, slow] = [later(), later()];
    let openerEnded = false;
    const opener = settings('basic', async () => {
      await send('opener');
      await hold.done;
    }).then(() => {
      openerEnded = true;
    });
    await tick();
    const joiner = settings('basic', async () => {
      await slow.done;
      await send('joiner');
    });
    // A sibling test beside them, in no section: it waits at the gate like any other request.
    const sibling = send('sibling');
    await tick();
    hold.go();
    await tick();
    await tick();
    // The opener's fn has ended, the joiner's has not: the section is still held.
    expect(seen).toEqual(['opener@basic']);
    expect(state.closed).toBe(0);
    expect(openerEnded).toBe(false);
    slow.go();
    await Promise.all([opener, joiner, sibling]);
    expect(seen).toEqual(['opener@basic', 'joiner@basic', 'sibling@default']);
    expect(state).toEqual({ setting: 'default', opened: 1, closed: 1 });
    expect(gate.holding()).toBe(false);
  });

  test('a joined fn that throws rejects alone; the settings are put back and the gate released once the others end', async () => {
    const gate = new Gate(8);
    const { state, seen, send, settings } = installation(gate);
    const hold = later();
    const opener = settings('basic', async () => {
      await hold.done;
      await send('opener');
      return 'fine';
    });
    await tick();
    const thrower = settings('basic', async () => {
      await send('thrower');
      throw new Error('the check failed');
    });
    await expect(thrower).rejects.toThrow('the check failed');
    expect(state.closed).toBe(0);
    hold.go();
    expect(await opener).toBe('fine');
    expect(state).toEqual({ setting: 'default', opened: 1, closed: 1 });
    await send('after');
    expect(seen).toEqual(['thrower@basic', 'opener@basic', 'after@default']);
  });

  test('a section whose settings could not be put fails every member and releases the gate', async () => {
    const gate = new Gate(8);
    const refused = () => Promise.reject(new Error('PUT /settings refused'));
    const opener = gate.joinable('k', refused, async () => 'ran');
    const joiner = gate.joinable('k', refused, async () => 'ran');
    await expect(opener).rejects.toThrow('PUT /settings refused');
    await expect(joiner).rejects.toThrow('PUT /settings refused');
    expect((await gate.admit())()).toBeUndefined();
    expect(gate.measured().sections).toBe(1);
  });

  test('other settings, a bare exclusive section and a call without a key are never joined', async () => {
    const gate = new Gate(8);
    const { state, seen, send, settings } = installation(gate);
    const hold = later();
    const basic = settings('basic', async () => {
      await hold.done;
      await send('basic');
    });
    await tick();
    const hmac = settings('hmac', () => send('hmac'));
    const bare = gate.exclusive(async () => {
      expect(gate.joined()).toBe(false);
      await send('bare');
    });
    const own = gate.joinable(
      undefined,
      async () => async () => {},
      () => send('own'),
    );
    await tick();
    await tick();
    expect(seen).toEqual([]);
    hold.go();
    await Promise.all([basic, hmac, bare, own]);
    expect(seen).toEqual(['basic@basic', 'hmac@hmac', 'bare@default', 'own@default']);
    expect(state).toMatchObject({ setting: 'default', opened: 2, closed: 2 });
    expect(gate.measured().sections).toBe(4);
  });

  test('no starvation: once held AGED request times a section takes no joiner; the next call with its settings opens a section of its own (back to back, before the waiter queued ahead of it)', async () => {
    let now = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const gate = new Gate(8);
    const { seen, send, settings } = installation(gate);
    // One request held 10 ms: a request time of 10 ms.
    const warm = request(gate, [], 'warm');
    await tick();
    now = 10;
    warm.end();
    await warm.done;
    const hold = later();
    const opener = settings('basic', async () => {
      await send('opener');
      await hold.done;
    });
    await tick();
    await tick();
    const waiter = send('waiter');
    // Held since 10; the request time is at most 10 ms (the section's own requests take none).
    now = 11;
    const joined = settings('basic', () => send('joined'));
    await tick();
    await tick();
    now = 10 + AGED * 10;
    const late = settings('basic', () => send('late'));
    await tick();
    await tick();
    expect(seen).toEqual(['opener@basic', 'joined@basic']);
    hold.go();
    await Promise.all([opener, joined, waiter, late]);
    expect(seen).toEqual(['opener@basic', 'joined@basic', 'late@basic', 'waiter@default']);
    expect(gate.measured().sections).toBe(2);
  });

  test('a settings section hands the target over to the first section waiting that takes over: it goes before the requests queued ahead of it, and nothing runs between the two', async () => {
    const gate = new Gate(8);
    const log: string[] = [];
    const hold = later();
    // Each section ends as Session.withSettings does: it hands over, or puts its setting back.
    const section = (name: string, wait?: Promise<void>) =>
      gate.joinable(
        undefined,
        async () => {
          log.push(`${name} open`);
          return async () => {
            log.push(gate.handOver() ? `${name} hands over` : `${name} puts back`);
          };
        },
        async () => {
          const release = await gate.admit();
          log.push(`${name} in`);
          await wait;
          release();
        },
        { takesOver: true },
      );
    const a = section('a', hold.done);
    await tick();
    const r1 = request(gate, log, 'r1');
    const b = section('b');
    const r2 = request(gate, log, 'r2');
    await tick();
    hold.go();
    await a;
    await b;
    await tick();
    expect(log.slice(0, 6)).toEqual(['a open', 'a in', 'a hands over', 'b open', 'b in', 'b puts back']);
    expect(log.slice(6)).toEqual(['r1 in', 'r2 in']);
    r1.end();
    r2.end();
    await Promise.all([r1.done, r2.done]);
    expect(gate.measured().handedOver).toBe(1);
  });

  test('sections go back to back: one waiting starts as the one before ends, before the requests queued ahead of it', async () => {
    const gate = new Gate(8);
    const log: string[] = [];
    const hold = later();
    const first = gate.exclusive(async () => {
      log.push('first in');
      await hold.done;
    });
    await tick();
    const r = request(gate, log, 'r');
    const second = gate.exclusive(async () => {
      log.push('second in');
    });
    await tick();
    hold.go();
    await Promise.all([first, second]);
    await tick();
    expect(log).toEqual(['first in', 'second in', 'r in']);
    r.end();
    await r.done;
    expect(gate.measured()).toMatchObject({ sections: 2, backToBack: 1, handedOver: 0 });
  });

  test('no hand-over to a bare exclusive section (nor past one), and at most HANDOVERS in a row before the requests queued meanwhile', async () => {
    const gate = new Gate(8);
    const log: string[] = [];
    const section = (name: string, wait?: Promise<void>) =>
      gate.joinable(
        undefined,
        async () => async () => {
          log.push(gate.handOver() ? `${name} hands over` : `${name} puts back`);
        },
        async () => {
          log.push(`${name} in`);
          await wait;
        },
        { takesOver: true },
      );
    const hold = later();
    const first = section('a', hold.done);
    await tick();
    const bare = gate.exclusive(async () => {
      log.push('bare in');
    });
    const b = section('b');
    await tick();
    hold.go();
    await Promise.all([first, bare, b]);
    expect(log).toEqual(['a in', 'a puts back', 'bare in', 'b in', 'b puts back']);

    log.length = 0;
    const again = later();
    const chain = [section('c0', again.done)];
    await tick();
    const r = request(gate, log, 'r');
    for (let i = 1; i <= HANDOVERS + 1; i++) chain.push(section(`c${i}`));
    await tick();
    again.go();
    await Promise.all(chain.slice(0, HANDOVERS + 1));
    await tick();
    const handed = Array.from({ length: HANDOVERS }, (_, i) => [`c${i} in`, `c${i} hands over`]).flat();
    expect(log).toEqual([...handed, `c${HANDOVERS} in`, `c${HANDOVERS} puts back`, 'r in']);
    r.end();
    await Promise.all([r.done, ...chain]);
    expect(log.slice(-3)).toEqual(['r out', `c${HANDOVERS + 1} in`, `c${HANDOVERS + 1} puts back`]);
  });

  test('withSettings beside the other tests of its file: refused in a file that runs alone or with no gate open, allowed in one that does not run alone', () => {
    const refused = /harness: a setting changed in a test that runs beside/;
    expect(() => runBeside(false, refuseSettingsBeside)).toThrow(refused);
    openGate(new Gate(8));
    try {
      expect(() => runBeside(true, refuseSettingsBeside)).toThrow(refused);
      expect(() => runBeside(false, refuseSettingsBeside)).not.toThrow();
      expect(() => refuseSettingsBeside()).not.toThrow();
    } finally {
      openGate(undefined);
    }
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
