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
// - Among the requests queued before the next exclusive section, a free slot goes first to one of
//   a preferred suite file with no request in flight (`preferred`: the runner's longest chains of
//   requests one after another, run-suites.ts LONGEST_CHAINS), the earliest of those (issue 38:
//   no serial tail); the others in order of arrival, so a preferred file's requests side by side
//   and the other files' chains are not starved. The run lasts
//   at least as long as its longest chain, and each of its requests waited behind every request
//   queued before it: measured through 100 ms, the model's chain of 607 requests took 810 delays
//   in order of arrival. (Preferring the file with the fewest requests in flight made it worse,
//   940: the model sends its read-backs side by side and then waited for every file with none.)
// - A request "in flight" is the whole exchange including what listeners do with it (the
//   response oracle judges it against the settings it was sent under), so a section never
//   changes a setting under a response still being judged. The oracle's own look-ups (`quiet`)
//   ride on the exchange they judge and do not queue.
// - A section must not wait on a request another context started and has not yet sent (it would
//   wait for the section's own end): the settings sections make what they need before they open.
//   Should one do, the test's deadline ends it as a harness error, never a hang.
// - No gate is open outside a run (the project's own tests, the runner's cleanup): everything passes.
import { AsyncLocalStorage } from 'node:async_hooks';
import { currentScope } from './traffic.ts';

/**
 * The exclusive section the calling context runs in. One for the process: every instance of
 * AsyncLocalStorage that has run stays in every later promise's bookkeeping (a worker that runs a
 * hundred runs would carry a hundred).
 */
const sections = new AsyncLocalStorage<symbol>();

/** Set while a test runs beside the other tests of its file (suites/harness/suite-api.ts testsSideBySide). */
const beside = new AsyncLocalStorage<true>();

/** Runs fn as a test beside the others of its file: it may open no exclusive section. */
export function runBeside<T>(fn: () => T): T {
  return beside.run(true, fn);
}

/**
 * The tests of a file that runs alone share its section: one of them changing a setting would
 * change it under the others (measured: pages read at NUM_ITEMS_LISTS 5 against a count read at
 * 20). Such a test is declared to run on its own (afterOthers).
 */
function refuseBeside(): void {
  if (beside.getStore())
    throw new Error('harness: an exclusive section (a setting, a fault) in a test that runs beside the other tests of its file: declare the test afterOthers');
}

interface Waiter {
  kind: 'shared' | 'exclusive';
  /** The preferred suite file of a shared waiter, if it is one's. */
  preferred?: string;
  wake: () => void;
}

export class Gate {
  #inFlight = 0;
  /** Requests in flight by preferred file. */
  readonly #preferredInFlight = new Map<string, number>();
  #holder: symbol | undefined;
  #closed = false;
  readonly #queue: Waiter[] = [];
  /** The holder's requests waiting for a slot: served before anyone else. */
  readonly #holderQueue: Array<() => void> = [];

  /** At most `limit` requests in flight at once; the requests of the `preferred` suite files served first. */
  constructor(
    readonly limit: number,
    readonly preferred: ReadonlySet<string> = new Set(),
  ) {}

  /** Whether the calling context holds the gate (runs inside an exclusive section). */
  holding(): boolean {
    return this.#holder !== undefined && sections.getStore() === this.#holder;
  }

  /** Waits for a slot; returns the function that gives it back. */
  async admit(): Promise<() => void> {
    if (this.#closed) return () => {};
    const scope = this.preferred.size > 0 ? currentScope()?.file : undefined;
    const file = scope !== undefined && this.preferred.has(scope) ? scope : undefined;
    if (this.holding()) {
      if (this.#inFlight >= this.limit) await new Promise<void>((wake) => this.#holderQueue.push(wake));
      else this.#inFlight++;
    } else if (this.#holder !== undefined || this.#queue.length > 0 || this.#inFlight >= this.limit) {
      await new Promise<void>((wake) => this.#queue.push(file === undefined ? { kind: 'shared', wake } : { kind: 'shared', preferred: file, wake }));
    } else this.#inFlight++;
    if (file !== undefined) this.#preferredInFlight.set(file, (this.#preferredInFlight.get(file) ?? 0) + 1);
    let given = false;
    return () => {
      if (given || this.#closed) return;
      given = true;
      this.#inFlight--;
      if (file !== undefined) this.#preferredInFlight.set(file, (this.#preferredInFlight.get(file) ?? 1) - 1);
      this.#serve();
    };
  }

  /** Runs fn with the target to itself: nothing else in flight while it runs. Re-entrant. */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    // The tests of a file that runs alone share its section: one of them changing a setting
    // would change it under the others (measured: pages read at NUM_ITEMS_LISTS 5 against a
    // count read at 20). Such a test is declared to run on its own (afterOthers).
    if (beside.getStore())
      throw new Error(
        'harness: an exclusive section (a setting, a fault) in a test that runs beside the other tests of its file: declare the test afterOthers',
      );
    if (this.#closed || this.holding()) return fn();
    if (this.#holder !== undefined || this.#queue.length > 0 || this.#inFlight > 0) {
      await new Promise<void>((wake) => this.#queue.push({ kind: 'exclusive', wake }));
      if (this.#closed) return fn();
    } else this.#holder = Symbol('exclusive section');
    try {
      return await sections.run(this.#holder!, fn);
    } finally {
      this.#holder = undefined;
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
        this.#inFlight++;
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

  // The first shared waiter of a preferred file with nothing in flight before the first
  // exclusive one; else the head.
  #next(): number {
    for (let i = 0; i < this.#queue.length; i++) {
      const w = this.#queue[i]!;
      if (w.kind === 'exclusive') break;
      if (w.preferred !== undefined && !this.#preferredInFlight.get(w.preferred)) return i;
    }
    return 0;
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
