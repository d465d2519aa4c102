import type { Exchange } from '../../core/exchange.ts';
import type { ApiClient, Auth } from './client.ts';

/**
 * Every exchange the harness makes passes through here: the response oracle (suites/oracle/)
 * listens, and the run counts its requests. `channel` tells API traffic from the control
 * protocol's; `quiet` marks the oracle's own look-ups, which are counted but not judged again.
 */
export type Channel = 'api' | 'control';

export interface Observed {
  exchange: Exchange;
  channel: Channel;
  /** How the request authenticated. */
  auth: Auth;
  /** The client that sent it (a look-up goes through `client.withAuth(...)`). */
  client: ApiClient;
  quiet: boolean;
}

export type Listener = (o: Observed) => void | Promise<void>;

const listeners = new Set<Listener>();
let sent = 0;

/** Adds a listener; returns the function that removes it. */
export function onExchange(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Called by the client after every exchange, answered or not; listeners run in order and are awaited. */
export async function emitExchange(o: Observed): Promise<void> {
  sent++;
  for (const fn of listeners) await fn(o);
}

/** Requests sent by this process so far (API, control and the oracle's look-ups). */
export function requestsSent(): number {
  return sent;
}
