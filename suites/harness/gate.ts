// The gate every request of a run passes before it is sent: it keeps the requests in flight to
// --concurrency (all of them, a section's too), and it gives a section that changes server-wide state (a setting, an injected
// fault) the target to itself. Suite files that run side by side share the target; a section
// opened with `exclusive` waits until the requests of others in flight have ended, and others'
// requests wait until it ends. The requests of the section itself (its async context, however
// many it sends at once) pass.
//
// Decisions:
// - Waiters are served in the order they came (phase-fair): requests queued before an exclusive
//   section go first, those after it wait for its end; neither kind starves the other.
// - Among the requests queued before the next exclusive section, a free slot goes to the one of
//   the suite file with nothing in flight and the longest chain still ahead of it (`chains`: each
//   file's longest chain of requests one after another, measured by bench:field into
//   suites/runner/chains.ts, less the requests of that chain it has sent), the earliest among
//   equals; with none such, to the earliest (issue 38: no serial tail). It is the critical path
//   first: a run lasts at least as long as its longest chain, and each request of a chain served
//   in order of arrival waited behind the requests queued before it (measured through 100 ms: the
//   model's chain of 521 requests took 841 delays, response-kinds' 342 took 898). A file goes
//   first only while it has fewer than half the slots in flight (a chain's step of reads side by
//   side ends with its last read), and never before a waiter that has waited AGED request times
//   (the mean time a request holds its slot): served strictly by chain, the files of short chains
//   starved under load (a property with a time limit of 20 s ran out of it). A file that was not
//   measured has nothing ahead of it and goes in order of arrival.
// - The gate measures what it serves (`measured`): a request's place in its file's chain is one
//   more than the furthest place among the file's requests that had ended when it came; sections'
//   count and time are kept for the bench.
// - A request "in flight" is the whole exchange including what listeners do with it (the
//   response oracle judges it against the settings it was sent under), so a section never
//   changes a setting under a response still being judged. The oracle's own look-ups (`quiet`)
//   ride on the exchange they judge and do not queue.
// - A section must not wait on a request another context started and has not yet sent (it would
//   wait for the section's own end): the settings sections make what they need before they open.
//   Should one do, the test's deadline ends it as a harness error, never a hang.
// - Settings sections that ask the same settings share one section (`joinable`, issue 38: ten
//   sections of one or two requests each were 3.4 s of a run through 100 ms, every other file
//   waiting). A `Session.withSettings` whose fn only sends requests (`requestsOnly`) asks for a
//   section keyed by its settings (same keys, same values); a later call with the same key joins
//   it while it waits in the queue or is held: its fn runs in the section's async context (its
//   requests pass as the holder's), the first in puts the settings, the last out puts them back
//   and releases the gate, also when a joined fn throws. A bare `exclusive`, a fault or reset
//   section (withSettingsSnapshot) and a withSettings whose fn writes through the control
//   protocol are never joined, and a joined fn that writes a setting, a fault or a reset is a
//   harness error (control.ts `serverWide`): it would change them under the others.
//   No starvation: a held section takes no joiner once it has been held AGED request times, so
//   joining lengthens it by at most that plus its longest fn; waiters queued meanwhile go next.
//   Joining is the only way a section is shared: a context outside it (a sibling test of the same
//   file beside it) waits at the gate like any other request. The deadlock rule above holds for
//   joiners too: withSettings settles the file's creations before it opens or joins, and a
//   joined fn awaits only its own requests.
// - A settings section may hand the target over to the next (`handOver`, issue 38: through
//   100 ms each section's drain and the PUT that put its settings back held every other file
//   out): when a section ends and the first exclusive section waiting is a settings section that
//   starts from the settings between sections (`takesOver`: Session.withSettings, outermost), it
//   goes next, before the requests queued ahead of it, and the ending section leaves its settings
//   as they are: the next one puts back what differs from the settings between sections with
//   its own, in one PUT. No request outside the two runs between them, so every request outside
//   a section is still sent under the settings between sections. A bare `exclusive`, a reset or
//   fault section and an `exclusiveReads` never take over (each starts from the settings as they
//   are): a section before one of them puts its settings back itself.
// - Sections go back to back: when a section ends with another waiting, that one goes next,
//   before the requests queued ahead of it, and starts at once (nothing in flight to drain:
//   through 100 ms a drain held the target half a delay, eight slots idle). At most HANDOVERS
//   sections in a row go before requests queued ahead of them: then those requests go first.
// - No gate is open outside a run (the project's own tests, the runner's cleanup): everything passes.
import { AsyncLocalStorage } from 'node:async_hooks';
import { currentScope } from './traffic.ts';

/**
 * The exclusive section the calling context runs in. One for the process: every instance of
 * AsyncLocalStorage that has run stays in every later promise's bookkeeping (a worker that runs a
 * hundred runs would carry a hundred).
 */
const sections = new AsyncLocalStorage<{ id: symbol; joined?: true }>();

/** Set while a test runs beside the other tests of its file (suites/harness/suite-api.ts testsSideBySide). */
const beside = new AsyncLocalStorage<{ alone: boolean }>();

/**
 * Runs fn as a test beside the others of its file (`alone`: a file that runs alone): it may open
 * no exclusive section, and a settings section only in a file that does not run alone.
 */
export function runBeside<T>(alone: boolean, fn: () => T): T {
  return beside.run({ alone }, fn);
}

/**
 * The tests of a file that runs alone share its section: one of them changing a setting would
 * change it under the others (measured: pages read at NUM_ITEMS_LISTS 5 against a count read at
 * 20). Such a test is declared to run on its own (afterOthers).
 */
export function refuseBeside(): void {
  if (beside.getStore())
    throw new Error('harness: an exclusive section (a setting, a fault) in a test that runs beside the other tests of its file: declare the test afterOthers');
}

/**
 * A settings section (Session.withSettings) beside the other tests of the file is a section like
 * another file's: the tests outside it wait at the gate. Refused where the tests share the file's
 * section (a file that runs alone, see refuseBeside) and where no gate is open (nothing would
 * keep the others out).
 */
export function refuseSettingsBeside(): void {
  const b = beside.getStore();
  if (b?.alone || (b && open === undefined))
    throw new Error(
      `harness: a setting changed in a test that runs beside the other tests of its file ${b.alone ? 'that runs alone' : 'with no gate open'}: declare the test afterOthers`,
    );
}

/** A waiter that has waited this many request times is served before any chain (no starvation). */
export const AGED = 4;

/** At most this many sections in a row go before requests queued ahead of them (`handOver`, back to back). */
export const HANDOVERS = 2;

interface Waiter {
  kind: 'shared' | 'exclusive';
  /** When it began to wait (performance.now()). */
  at: number;
  /** The requests of its file's chain still ahead of a shared waiter (0: none known). */
  ahead: number;
  file?: string | undefined;
  /** An exclusive waiter that starts from the settings between sections (see `handOver`). */
  takesOver?: true;
  wake: () => void;
}

/** A settings section others may join (`Gate.joinable`). */
interface Joinable {
  /** When the section was opened (performance.now()); undefined while it waits in the queue. */
  heldAt?: number;
  /** The section's async context once held (undefined when the gate was closed). */
  id?: symbol | undefined;
  /** Its fns not yet ended, the opener's included. */
  members: number;
  /** The calls that joined it. */
  joiners: number;
  /** Takes no joiner: its last member has left, or its settings could not be put. */
  closed: boolean;
  /** Settles once the settings are put (rejects when they could not be). */
  opened: Promise<void>;
  ready: () => void;
  fail: (e: unknown) => void;
  /** Resolves when the last member has left. */
  drained: Promise<void>;
  leave: () => void;
}

function joinable(onClosed: () => void): Joinable {
  let ready!: () => void;
  let fail!: (e: unknown) => void;
  let drain!: () => void;
  const opened = new Promise<void>((resolve, reject) => {
    ready = resolve;
    fail = reject;
  });
  opened.catch(() => {});
  const drained = new Promise<void>((resolve) => {
    drain = resolve;
  });
  const j: Joinable = {
    members: 1,
    joiners: 0,
    closed: false,
    opened,
    ready,
    fail: (e) => {
      j.closed = true;
      onClosed();
      fail(e);
    },
    drained,
    leave: () => {
      if (--j.members > 0) return;
      j.closed = true;
      onClosed();
      drain();
    },
  };
  return j;
}

/** What a gate measured of the run it served (bench:field prints it and writes chains.ts from it). */
export interface GateMeasure {
  /** By suite file: its longest chain of requests one after another. */
  chains: Map<string, number>;
  /** Exclusive sections held, and their time in all (ms): nothing else was in flight meanwhile. */
  sections: number;
  sectionMs: number;
  /** By the suite file that opened them (or "(a file that runs alone)"): sections, their time (ms), their requests, the calls that joined them. */
  sectionsByFile: Map<string, { sections: number; ms: number; requests: number; joined: number }>;
  /** Sections that took the target over from the one before (`handOver`). */
  handedOver: number;
  /** Sections that went next as the one before ended, before requests queued ahead of them (back to back). */
  backToBack: number;
}

export class Gate {
  #inFlight = 0;
  /** The mean time a request holds its slot (ms), a moving average; 0 until one has. */
  #holdMs = 0;
  /** Requests in flight by suite file. */
  readonly #filesInFlight = new Map<string, number>();
  #holder: symbol | undefined;
  #heldAt = 0;
  #closed = false;
  readonly #queue: Waiter[] = [];
  /** The holder's requests waiting for a slot: served before anyone else. */
  readonly #holderQueue: Array<() => void> = [];
  readonly #measure: GateMeasure = { chains: new Map(), sections: 0, sectionMs: 0, sectionsByFile: new Map(), handedOver: 0, backToBack: 0 };
  #heldRequests = 0;
  #heldJoined = 0;
  /** The settings sections that take joiners, by key. */
  readonly #joinable = new Map<string, Joinable>();
  /** Sections in a row that went before requests queued ahead of them, no request outside them served since. */
  #inARow = 0;

  /**
   * At most `limit` requests in flight at once; a free slot to the request whose file has the
   * longest part of its chain (`chains`, in requests, by suite file) still ahead.
   */
  constructor(
    readonly limit: number,
    readonly chains: ReadonlyMap<string, number> = new Map(),
  ) {}

  /** What the gate has measured so far. */
  measured(): GateMeasure {
    return { ...this.#measure, chains: new Map(this.#measure.chains), sectionsByFile: new Map(this.#measure.sectionsByFile) };
  }

  /** Whether the calling context holds the gate (runs inside an exclusive section). */
  holding(): boolean {
    return this.#holder !== undefined && sections.getStore()?.id === this.#holder;
  }

  /** Whether the calling context is a fn that runs in a joinable settings section (`joinable`). */
  joined(): boolean {
    return this.holding() && sections.getStore()?.joined === true;
  }

  /** Waits for a slot; returns the function that gives it back. */
  async admit(): Promise<() => void> {
    if (this.#closed) return () => {};
    const file = currentScope()?.file;
    const chains = this.#measure.chains;
    const place = file === undefined ? 0 : (chains.get(file) ?? 0) + 1;
    if (this.holding()) {
      this.#heldRequests++;
      if (this.#inFlight >= this.limit) await new Promise<void>((wake) => this.#holderQueue.push(wake));
      else this.#inFlight++;
      this.#flying(file, 1);
    } else if (this.#holder !== undefined || this.#queue.length > 0 || this.#inFlight >= this.limit) {
      const ahead = file === undefined ? 0 : Math.max(0, (this.chains.get(file) ?? 0) - place);
      // Counted in flight when served (#serve), before the next waiter is chosen.
      await new Promise<void>((wake) => this.#queue.push({ kind: 'shared', at: performance.now(), ahead, file, wake }));
    } else {
      this.#inFlight++;
      this.#flying(file, 1);
    }
    let given = false;
    const admitted = performance.now();
    return () => {
      if (given || this.#closed) return;
      given = true;
      const held = performance.now() - admitted;
      this.#holdMs = this.#holdMs === 0 ? held : 0.9 * this.#holdMs + 0.1 * held;
      if (file !== undefined && place > (chains.get(file) ?? 0)) chains.set(file, place);
      this.#flying(file, -1);
      this.#inFlight--;
      this.#serve();
    };
  }

  /** Runs fn with the target to itself: nothing else in flight while it runs. Re-entrant. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    refuseBeside();
    return this.#section(undefined, fn);
  }

  /**
   * Runs fn in an exclusive section that later calls with the same `key` join until it has been
   * held AGED request times (see the decisions above); without a key, in a section of its own.
   * `open` runs once, first in, inside the section; what it returns runs once, after the last
   * member's fn has ended, and then the gate is released. Not for a context that holds the gate.
   */
  async joinable<T>(key: string | undefined, open: () => Promise<() => Promise<void>>, fn: () => Promise<T>, opts: { takesOver?: true } = {}): Promise<T> {
    const found = key === undefined ? undefined : this.#joinable.get(key);
    if (found !== undefined && this.#mayJoin(key!, found)) {
      found.members++;
      found.joiners++;
      try {
        await found.opened;
        return await (found.id === undefined ? fn() : sections.run({ id: found.id, joined: true }, fn));
      } finally {
        found.leave();
      }
    }
    const mine =
      key === undefined
        ? undefined
        : joinable(() => {
            if (this.#joinable.get(key) === mine) this.#joinable.delete(key);
          });
    if (mine) this.#joinable.set(key!, mine);
    return this.#section(opts.takesOver, async () => {
      const id = sections.getStore()?.id;
      if (mine) {
        mine.id = id;
        mine.heldAt = performance.now();
      }
      let close: (() => Promise<void>) | undefined;
      try {
        try {
          close = await open();
          mine?.ready();
        } catch (e) {
          mine?.fail(e);
          throw e;
        }
        return await (mine && id !== undefined ? sections.run({ id, joined: true }, fn) : fn());
      } finally {
        if (mine) {
          mine.leave();
          await mine.drained;
          this.#heldJoined = mine.joiners;
        }
        await close?.();
      }
    });
  }

  // A section takes joiners while it waits in the queue, and once held for less than AGED request
  // times (any time while no request has ended yet); one past that is dropped from the joinable,
  // and the next call opens a section of its own.
  #mayJoin(key: string, j: Joinable): boolean {
    if (!j.closed && (j.heldAt === undefined || this.#holdMs === 0 || performance.now() - j.heldAt < AGED * this.#holdMs)) return true;
    this.#joinable.delete(key);
    return false;
  }

  /**
   * Called by the holder as its section ends, in place of putting its settings back: whether the
   * next section takes the target over (see the decisions above). When it does, that section is
   * the next served, before the requests queued ahead of it, and the caller must leave the
   * settings as they are and send nothing more.
   */
  handOver(): boolean {
    if (this.#closed || !this.holding()) return false;
    const i = this.#firstSection();
    if (i < 0 || !this.#queue[i]!.takesOver || !this.#nextFirst(i)) return false;
    this.#measure.handedOver++;
    return true;
  }

  // Where the first exclusive waiter is in the queue (-1: none).
  #firstSection(): number {
    return this.#queue.findIndex((w) => w.kind === 'exclusive');
  }

  // The exclusive waiter at `i` to the head of the queue, unless HANDOVERS sections in a row
  // have gone before requests queued ahead of them (at the head already, it jumps nobody).
  #nextFirst(i: number): boolean {
    if (i === 0) return true;
    if (this.#inARow >= HANDOVERS) return false;
    this.#queue.unshift(...this.#queue.splice(i, 1));
    this.#inARow++;
    this.#measure.backToBack++;
    return true;
  }

  async #section<T>(takesOver: true | undefined, fn: () => Promise<T>): Promise<T> {
    if (this.#closed || this.holding()) return fn();
    if (this.#holder !== undefined || this.#queue.length > 0 || this.#inFlight > 0) {
      await new Promise<void>((wake) => this.#queue.push({ kind: 'exclusive', at: performance.now(), ahead: 0, ...(takesOver ? { takesOver } : {}), wake }));
      if (this.#closed) return fn();
    } else this.#holder = Symbol('exclusive section');
    this.#heldAt = performance.now();
    this.#heldRequests = 0;
    this.#heldJoined = 0;
    try {
      return await sections.run({ id: this.#holder! }, fn);
    } finally {
      const ms = performance.now() - this.#heldAt;
      this.#measure.sections++;
      this.#measure.sectionMs += ms;
      const by = currentScope()?.file ?? '(a file that runs alone)';
      const f = this.#measure.sectionsByFile.get(by) ?? { sections: 0, ms: 0, requests: 0, joined: 0 };
      this.#measure.sectionsByFile.set(by, {
        sections: f.sections + 1,
        ms: f.ms + ms,
        requests: f.requests + this.#heldRequests,
        joined: f.joined + this.#heldJoined,
      });
      this.#holder = undefined;
      // Back to back: the next section waiting starts now, with nothing in flight to drain.
      const next = this.#closed ? -1 : this.#firstSection();
      if (next > 0) this.#nextFirst(next);
      this.#serve();
    }
  }

  /**
   * Lets everything through from now on, the waiting first (after an interrupt the runner's
   * cleanup must not wait behind a section that may never end).
   */
  close(): void {
    this.#closed = true;
    this.#holder = undefined;
    for (const w of this.#queue.splice(0)) w.wake();
    for (const wake of this.#holderQueue.splice(0)) wake();
  }

  // Wakes the waiters at the head of the queue that can go now: shared ones while slots are free
  // (`#next`), an exclusive one when nothing is in flight.
  #serve(): void {
    while (this.#holder !== undefined && this.#holderQueue.length > 0 && this.#inFlight < this.limit) {
      this.#inFlight++;
      this.#holderQueue.shift()!();
    }
    while (this.#holder === undefined && this.#queue.length > 0) {
      const head = this.#queue[0]!;
      if (head.kind === 'shared') {
        if (this.#inFlight >= this.limit) return;
        const [next] = this.#queue.splice(this.#next(), 1);
        this.#inARow = 0;
        this.#inFlight++;
        this.#flying(next!.file, 1);
        next!.wake();
      } else {
        if (this.#inFlight > 0) return;
        this.#queue.shift();
        this.#holder = Symbol('exclusive section');
        head.wake();
        return;
      }
    }
  }

  #flying(file: string | undefined, n: 1 | -1): void {
    if (file !== undefined) this.#filesInFlight.set(file, (this.#filesInFlight.get(file) ?? 0) + n);
  }

  // The head once it has waited AGED request times; else among the shared waiters before the
  // first exclusive one whose file has fewer than half the slots in flight, the earliest of those
  // with the most ahead; with none ahead, the head.
  #next(): number {
    if (performance.now() - this.#queue[0]!.at >= AGED * this.#holdMs) return 0;
    const cap = Math.max(1, Math.floor(this.limit / 2));
    let best = 0;
    let most = 0;
    for (let i = 0; i < this.#queue.length; i++) {
      const w = this.#queue[i]!;
      if (w.kind === 'exclusive') break;
      if (w.ahead > most && (this.#filesInFlight.get(w.file!) ?? 0) < cap) {
        best = i;
        most = w.ahead;
      }
    }
    return best;
  }
}

let open: Gate | undefined;

/** The gate of the run in progress (set by the runner while suite files run), if any. */
export function activeGate(): Gate | undefined {
  return open;
}

export function openGate(gate: Gate | undefined): void {
  open = gate;
}

/** Runs fn as an exclusive section of the open gate (just fn when no gate is open). */
export function exclusive<T>(fn: () => Promise<T>): Promise<T> {
  refuseBeside();
  return open ? open.exclusive(fn) : fn();
}

/**
 * Runs fn as an exclusive section that only reads: it changes no setting and writes nothing, so a
 * test beside the other tests of its file may open it (they wait at the gate while it is held, as
 * the other files do, and nothing they read changes under them). Decision (issue 38: no serial
 * tail): every-list reads the lists every file writes to (the Admin's projects, passwords, users,
 * groups) in one such section and its own lists beside the other files. fn must not wait on a
 * request another context started and has not yet sent (see the decisions above).
 */
export function exclusiveReads<T>(fn: () => Promise<T>): Promise<T> {
  const gate = open;
  return gate ? beside.exit(() => gate.exclusive(fn)) : fn();
}
