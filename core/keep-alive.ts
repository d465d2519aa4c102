/**
 * How long a kept-alive connection to the target may stay idle before pmv6 stops reusing it,
 * learned from the target itself. Both HTTP clients (the harness's, suites/harness/client.ts, and
 * the load engine's, load/engine/http1.ts) read it from here.
 *
 * Decision: a front end closes an idle connection after its own timeout (nginx
 * `keepalive_timeout`, 75 s by default, often set to 1 s; Apache `KeepAliveTimeout`, 5 s); a
 * request written at that moment is lost with the connection ("other side closed"). The limit
 * starts at DEFAULT_IDLE_MS (under Apache's default) and only goes down: to a margin below the
 * `Keep-Alive: timeout=N` a response announces, or below the idle time after which the target was
 * seen to close a connection. The margin is a quarter of the timeout, at least MIN_MARGIN_MS:
 * 750 ms idle for a 1 s timeout, 3.75 s for 5 s.
 */
export const DEFAULT_IDLE_MS = 4_000;
const MIN_MARGIN_MS = 200;
/**
 * A close seen sooner than this after the last response is not an idle timeout (a server that
 * ends the connection after its answer, a reset): it teaches nothing.
 */
const MIN_OBSERVED_MS = 150;

/** The idle time to keep a connection for a server timeout of `timeoutMs`. */
export function safeIdleMs(timeoutMs: number): number {
  return Math.max(0, Math.floor(timeoutMs - Math.max(MIN_MARGIN_MS, timeoutMs / 4)));
}

/** `timeout=N` (seconds) of a Keep-Alive header value, in ms; undefined without one. */
export function keepAliveTimeoutMs(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header.join(',') : header;
  const m = value === undefined ? null : /(?:^|[,;\s])timeout\s*=\s*"?(\d{1,6})"?/i.exec(value);
  return m ? Number(m[1]) * 1000 : undefined;
}

export type IdleSource = 'default' | 'keep-alive header' | 'observed close';

export class IdleLimit {
  private limit = DEFAULT_IDLE_MS;
  private from: IdleSource = 'default';
  private readonly listeners = new Set<(limitMs: number) => void>();
  /** The target's timeout as learned (ms), when one was. */
  learnedTimeoutMs: number | undefined;
  /** The idle timeout the target's last `Keep-Alive: timeout=N` announced (ms), also one longer than the limit. */
  announcedMs: number | undefined;

  /** `onChange` is called with the new limit whenever it goes down. */
  constructor(onChange?: (limitMs: number) => void) {
    if (onChange) this.listeners.add(onChange);
  }

  /** Calls `listener` with the new limit whenever it goes down, until the returned function is called. */
  listen(listener: (limitMs: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get ms(): number {
    return this.limit;
  }
  get source(): IdleSource {
    return this.from;
  }

  /** A response's `Keep-Alive` header. */
  header(value: string | string[] | undefined): void {
    const t = keepAliveTimeoutMs(value);
    if (t === undefined) return;
    this.announcedMs = t;
    this.learn(t, 'keep-alive header');
  }

  /** The target closed a connection `idleMs` after the last bytes it sent on it. */
  closedAfter(idleMs: number): void {
    if (idleMs >= MIN_OBSERVED_MS) this.learn(idleMs, 'observed close');
  }

  private learn(timeoutMs: number, source: IdleSource): void {
    const next = safeIdleMs(timeoutMs);
    if (next >= this.limit) return;
    this.limit = next;
    this.from = source;
    this.learnedTimeoutMs = timeoutMs;
    for (const listener of this.listeners) listener(next);
  }
}

const byOrigin = new Map<string, IdleLimit>();

/**
 * The one limit of an origin (scheme, host, port) for the whole process. Decision (issue 39): the
 * idle timeout is the front end's, whichever client learned it; the run's control client, which
 * goes through the same front end (`--control https://host/__control`) but speaks seldom, kept
 * its own limit at DEFAULT_IDLE_MS and sent its creations on connections nginx had closed after
 * 1 s (`control POST /users: no response: UND_ERR_SOCKET: other side closed`, under load).
 */
export function idleLimitOf(origin: string): IdleLimit {
  let limit = byOrigin.get(origin);
  if (!limit) {
    limit = new IdleLimit();
    byOrigin.set(origin, limit);
  }
  return limit;
}

/**
 * Forgets every origin's limit. Decision (issue 38): a kill-matrix worker runs mutant after mutant,
 * each on a new embedded server, whose port may be one an earlier server had; that server's close
 * ended the connections left idle, which taught its origin a limit near 0, and the next server on
 * the port inherited it (8 of 336 mutants survived: lists read on connections closing under them
 * were left out as not served). Each run there starts knowing nothing, as a new process does.
 */
export function forgetIdleLimits(): void {
  byOrigin.clear();
}
