import { AsyncLocalStorage } from 'node:async_hooks';
import type { Exchange } from '../../core/exchange.ts';
import type { ApiClient, Auth } from './client.ts';

/**
 * Every exchange the harness makes passes through here: the response oracle (suites/oracle/)
 * listens, and the run counts its requests. `channel` tells API traffic from the control
 * protocol's; `quiet` marks the oracle's own look-ups, which are counted but not judged again.
 */
export type Channel = 'api' | 'control';

/**
 * Where a request comes from: the suite file and the test (or hook) that sent it. Suite files
 * run side by side, so the runner names each file's and each test's async context with a scope;
 * requests are counted into the scope and its parents, and the oracle keeps its findings by file.
 */
export interface TrafficScope {
  readonly file: string;
  readonly parent?: TrafficScope;
  sent: number;
}

/**
 * Writes (any request but GET and HEAD, API or control) started so far, and those in flight,
 * when a request was sent. Files side by side write while others read: a list's page and its
 * count agree only if no write overlapped both (see `unchangedSince`).
 */
export interface WriteMark {
  started: number;
  inFlight: number;
  /** performance.now() when the request was sent (relations order a read after a delete by it). */
  at?: number;
}

export interface Observed {
  exchange: Exchange;
  channel: Channel;
  /** How the request authenticated. */
  auth: Auth;
  /** The client that sent it (a look-up goes through `client.withAuth(...)`). */
  client: ApiClient;
  quiet: boolean;
  /** The writes when the request was sent. */
  mark: WriteMark;
}

export type Listener = (o: Observed) => void | Promise<void>;

const listeners = new Set<Listener>();
const scopes = new AsyncLocalStorage<TrafficScope>();
let sent = 0;
let writesStarted = 0;
let writesInFlight = 0;

/**
 * A GET of the run on its way: admitted and about to be sent, its listeners not yet run.
 * `heard` settles once they have (answered or not).
 */
export interface Sending {
  exchange: Exchange;
  auth: Auth;
  channel: Channel;
  heard: Promise<void>;
}

const sendingListeners = new Set<(s: Sending) => void>();

/** Adds a listener told of every GET as it goes out (not the oracle's own look-ups); returns the function that removes it. */
export function onSending(fn: (s: Sending) => void): () => void {
  sendingListeners.add(fn);
  return () => sendingListeners.delete(fn);
}

/** Called by the client as a GET goes out; returns the function to call, once, when the exchange's listeners have run. */
export function announceSending(s: Omit<Sending, 'heard'>): () => void {
  if (sendingListeners.size === 0) return () => {};
  let heard!: () => void;
  const p = new Promise<void>((resolve) => {
    heard = resolve;
  });
  for (const fn of sendingListeners) fn({ ...s, heard: p });
  return heard;
}

/** Adds a listener; returns the function that removes it. */
export function onExchange(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/**
 * Called by the client after every exchange, answered or not; listeners run in order and are
 * awaited, in the context that sent the request (`currentScope()` names its file and test).
 */
export async function emitExchange(o: Observed): Promise<void> {
  sent++;
  for (let s = scopes.getStore(); s; s = s.parent) s.sent++;
  for (const fn of listeners) await fn(o);
}

/** Requests sent by this process so far (API, control and the oracle's look-ups). */
export function requestsSent(): number {
  return sent;
}

/** Runs fn in a scope of its own: the requests it sends are counted there (and in the scopes around it). */
export function inScope<T>(scope: TrafficScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

/** The scope of the calling context, if any. */
export function currentScope(): TrafficScope | undefined {
  return scopes.getStore();
}

/** A child scope of the calling context's (a test inside its file). */
export function childScope(): TrafficScope {
  const parent = scopes.getStore();
  return parent ? { file: parent.file, parent, sent: 0 } : { file: '', sent: 0 };
}

/** The writes so far; called by the client before it sends. */
export function writeMark(): WriteMark {
  return { started: writesStarted, inFlight: writesInFlight, at: performance.now() };
}

/** Called by the client as a request goes out; returns the function to call, once, when it has ended. */
export function requestStarting(method: string): () => void {
  const m = method.toUpperCase();
  if (m === 'GET' || m === 'HEAD') return () => {};
  writesStarted++;
  writesInFlight++;
  return () => {
    writesInFlight--;
  };
}

/** No write was in flight at `mark` and none has started since: whatever was read since then reads one state. */
export function unchangedSince(mark: WriteMark): boolean {
  return mark.inFlight === 0 && writesStarted === mark.started;
}
