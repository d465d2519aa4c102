// The harness client's connections to the target: kept alive no longer than the target keeps
// them (core/keep-alive.ts), and what a request lost to a closing connection may do next.
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createSecureContext } from 'node:tls';
import { Agent, buildConnector, Client, type Dispatcher, errors } from 'undici';
import type { Exchange } from '../../core/exchange.ts';
import { type IdleLimit, idleLimitOf } from '../../core/keep-alive.ts';

/** What one socket has carried, by its local port (undici's socket errors name the port). */
interface Watch {
  /** reads that returned bytes */
  reads: number;
  /** `reads` when the last request was written */
  readsAtWrite: number;
  lastRead: number;
  lastWrite: number;
}

/** The undici options every pool of one client uses. */
export interface PoolOptions {
  /** the target's origin: its idle limit is shared with every client of it (core/keep-alive.ts idleLimitOf) */
  origin: string;
  timeoutMs: number;
  ca?: string;
  insecure?: boolean;
}

/**
 * The idle time after which a request that is not idempotent (client.ts: every POST, creations of
 * the run too, whose resend needs a reading of the lists that a 401 probe's credentials cannot
 * make) goes on a new connection. Decision (issue 39): under load
 * the front end's clock runs ahead of ours by the time our reading of its answer waits for the
 * CPU; at a load average of 12 on 2 cores, POSTs (401 probes) were lost on connections idle under
 * the learned limit. 100 ms leaves a 1 s front end 900 ms of that lag.
 */
export const CAREFUL_IDLE_MS = 100;

/**
 * A target that announces an idle timeout at least this long (`Keep-Alive: timeout=N`) and was
 * never seen to close a connection sooner gives the careful pool the limit of the other.
 * Decision (issue 38): the limit is then DEFAULT_IDLE_MS (4 s) at most, 11 s and more below the
 * timeout, many times the lag behind a front end's clock measured at a load of 18 (1.2 s); with
 * 100 ms, 573 of an embedded run's 759 TLS connections were the careful pool's (each a handshake on
 * both sides). A front end that announces nothing, or less (Apache's 5 s), keeps CAREFUL_IDLE_MS.
 */
export const LONG_ANNOUNCED_MS = 15_000;

/**
 * A request stopped before its first byte because the kept-alive connection undici gave it had
 * been idle past the limit. Decision (issue 39): undici closes an idle connection by a timer; under
 * load the event loop runs that timer late, after a request has been given the connection (seen at
 * a load of 18 on 2 cores: POSTs written 850 ms after the last answer on a pool whose limit was
 * 100 ms, and lost). The age is checked again as the request is written; nothing of it reaches the
 * target, so it may go on a new connection whatever its method.
 */
export class StaleConnection extends errors.SocketError {
  // undici's errors answer instanceof for every SocketError; this class only for its own.
  static override [Symbol.hasInstance](value: unknown): boolean {
    return Function.prototype[Symbol.hasInstance].call(StaleConnection, value);
  }

  constructor(
    readonly idleMs: number,
    readonly limitMs: number,
  ) {
    super(`the kept-alive connection had been idle ${Math.round(idleMs)} ms, past the limit of ${Math.round(limitMs)} ms`);
  }
}

/**
 * One client's pool of connections and what it learned of the target's idle timeout. Decision:
 * undici closes idle connections by its own timer, set when the pool is made; when a shorter
 * limit is learned, a new pool takes the requests and the old one is closed once its requests
 * have ended (undici's graceful close).
 */
export class Connections {
  agent: Agent;
  /** The pool of requests that may not be sent twice: reused only within CAREFUL_IDLE_MS. */
  careful: Agent;
  readonly idle: IdleLimit;
  /** Requests sent a second time after their connection closed (a report's count). */
  retried = 0;
  /** Requests stopped before their first byte on a connection idle past the limit, and sent on a new one (StaleConnection). */
  stale = 0;
  private readonly watches = new Map<number, Watch>();
  private readonly connectBase: buildConnector.connector;
  private readonly unlisten: () => void;

  constructor(private readonly opts: PoolOptions) {
    const base = buildConnector({
      timeout: opts.timeoutMs,
      // Decision (issue 38): the trusted CA's context is made once, not by every connection (a
      // `ca` option makes node build a new context, certificate parsing included, per connect).
      ...(opts.ca ? { secureContext: createSecureContext({ ca: opts.ca }) } : {}),
      ...(opts.insecure ? { rejectUnauthorized: false } : {}),
    });
    this.connectBase = base;
    this.idle = idleLimitOf(opts.origin);
    this.agent = this.pool();
    this.careful = this.carefulPool();
    this.unlisten = this.idle.listen(() => this.renew());
  }

  /** The idle time within which the careful pool reuses a connection (see LONG_ANNOUNCED_MS). */
  private carefulMs = CAREFUL_IDLE_MS;

  /** A careful pool at the limit the target's announcements give now. */
  private carefulPool(): Agent {
    this.carefulMs = this.carefulLimit();
    return this.pool(this.carefulMs);
  }

  private carefulLimit(): number {
    const announced = this.idle.announcedMs;
    return announced !== undefined && announced >= LONG_ANNOUNCED_MS && this.idle.source !== 'observed close' ? Number.POSITIVE_INFINITY : CAREFUL_IDLE_MS;
  }

  /** Connections that are watched, and reused only within `atMostMs` (and the target's limit) of their last answer. */
  private connect(atMostMs: number): buildConnector.connector {
    return (o, callback) =>
      this.connectBase(o, (err, socket) => {
        if (socket) this.watch(socket as Socket, () => Math.min(atMostMs, this.idle.ms));
        callback(err, socket as never);
      });
  }

  private pool(atMostMs = Number.POSITIVE_INFINITY): Agent {
    // undici refuses a keepAliveTimeout of 0 at each request (UND_ERR_INVALID_ARG); a limit of 0
    // (a close seen just past MIN_OBSERVED_MS, as a loaded target's after its last allowed
    // request) means no reuse, as 1 ms does.
    const idle = Math.max(1, Math.min(atMostMs, this.idle.ms));
    return new Agent({
      keepAliveTimeout: idle,
      keepAliveMaxTimeout: idle,
      // Below a `Keep-Alive: timeout` hint by this much (undici's own reading of the header);
      // a hint of 1 s then means no reuse at all, and IdleLimit learns the rest.
      keepAliveTimeoutThreshold: 1_000,
      headersTimeout: this.opts.timeoutMs,
      bodyTimeout: this.opts.timeoutMs,
      connect: this.connect(atMostMs),
    });
  }

  /**
   * A request on a connection made for it and closed after its answer. Decision (issue 39): a
   * request sent again after its kept-alive connection closed does not go back to the pool, where
   * it may be given another connection idle as long, which the front end closes at the same time;
   * the exchange's `retried` says "on a new connection", and it is.
   */
  once(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    const client = new Client(options.origin as string, {
      pipelining: 1,
      headersTimeout: this.opts.timeoutMs,
      bodyTimeout: this.opts.timeoutMs,
      connect: this.connect(Number.POSITIVE_INFINITY),
    });
    client.dispatch({ ...options, reset: true }, handler);
    // A graceful close: the request and the reading of its body end first.
    void client.close().catch(() => undefined);
  }

  private renew(): void {
    const old = [this.agent, this.careful];
    this.agent = this.pool();
    this.careful = this.carefulPool();
    for (const agent of old) void agent.close().catch(() => undefined);
  }

  /** A new careful pool when what the target announced changes its limit (the old one closes once its requests end). */
  private renewCareful(): void {
    const old = this.careful;
    this.careful = this.carefulPool();
    void old.close().catch(() => undefined);
  }

  /**
   * Decision: undici reads a socket on `readable` (a `data` listener would change how it flows),
   * so the socket's own `read` and `write` are wrapped to note when it last carried a response and
   * a request; the target's `end` after an idle time teaches the limit. The first write of a
   * request on a connection idle longer than `limitMs()` is not made (StaleConnection).
   */
  private watch(socket: Socket, limitMs: () => number): void {
    const w: Watch = { reads: 0, readsAtWrite: 0, lastRead: performance.now(), lastWrite: 0 };
    const read = socket.read.bind(socket);
    const write = socket.write.bind(socket) as (...a: unknown[]) => boolean;
    socket.read = (size?: number) => {
      const chunk = read(size);
      if (chunk !== null) {
        w.reads++;
        w.lastRead = performance.now();
      }
      return chunk;
    };
    socket.write = ((...a: unknown[]) => {
      if (w.lastWrite <= w.lastRead) {
        const idle = performance.now() - w.lastRead;
        if (w.reads > 0 && idle > limitMs()) {
          socket.destroy(new StaleConnection(idle, limitMs()));
          return false;
        }
        w.readsAtWrite = w.reads;
      }
      w.lastWrite = performance.now();
      return write(...a);
    }) as Socket['write'];
    const port = socket.localPort;
    if (port !== undefined) this.watches.set(port, w);
    socket.on('end', () => this.idle.closedAfter(performance.now() - w.lastRead));
    socket.on('close', () => {
      // Kept a while: the error of the request it carried is handled after the close.
      if (port !== undefined) setTimeout(() => this.watches.get(port) === w && this.watches.delete(port), 5_000).unref();
    });
  }

  /**
   * True when the error is a connection the target closed that had carried a response before and
   * carried no byte of this one: the request may never have reached the application.
   */
  lostOnReused(e: unknown): boolean {
    const err = e as { code?: string; socket?: { localPort?: number }; cause?: { code?: string } } | undefined;
    const code = err?.code ?? err?.cause?.code;
    if (code !== 'UND_ERR_SOCKET' && code !== 'ECONNRESET' && code !== 'EPIPE') return false;
    const port = err?.socket?.localPort;
    const w = port === undefined ? undefined : this.watches.get(port);
    // Without the socket's record (an error before undici knew it), the code alone decides, as before.
    return w === undefined || (w.readsAtWrite > 0 && w.reads === w.readsAtWrite);
  }

  /** A response's headers: a `Keep-Alive: timeout=N` lowers the limit. */
  answered(headers: Record<string, string | string[] | undefined>): void {
    if (headers['keep-alive'] === undefined) return;
    this.idle.header(headers['keep-alive']);
    if (this.carefulLimit() !== this.carefulMs) this.renewCareful();
  }

  close(): Promise<void> {
    this.unlisten();
    return Promise.all([this.agent.close(), this.careful.close()]).then(() => undefined);
  }
}

/**
 * Decision (issue 38): during a run (runSuites) the clients of one origin with the same deadline and
 * trust share one pool, kept until the run's files are done, so a file's clients reuse the
 * connections the files before it opened: each root client had its own, and a run made 521 TLS
 * handshakes for 5,400 requests (5% of its CPU, both sides). Outside a run (the project's tests,
 * pmv6 cleanup) each root client keeps its own pool, as before.
 */
let runPools: Map<string, Connections> | undefined;

export function openRunPools(): void {
  runPools = new Map();
}

/** The run's files are done: the shared pools close once their requests have ended. */
export async function closeRunPools(): Promise<void> {
  const pools = runPools;
  runPools = undefined;
  await Promise.all([...(pools?.values() ?? [])].map((c) => c.close().catch(() => undefined)));
}

/** The run's pool for these options, or undefined outside a run (the caller then owns a pool of its own). */
export function runPool(opts: PoolOptions): Connections | undefined {
  if (!runPools) return undefined;
  const key = JSON.stringify([opts.origin, opts.timeoutMs, opts.ca ?? '', opts.insecure === true]);
  let pool = runPools.get(key);
  if (!pool) {
    pool = new Connections(opts);
    runPools.set(key, pool);
  }
  return pool;
}

/** Creations the harness can look for by name: the collection's POST path, the name's key, the list that shows it. */
const CREATIONS: Record<string, { key: 'name' | 'username'; search?: string; list?: string }> = {
  '/passwords.json': { key: 'name', search: '/passwords/search' },
  '/projects.json': { key: 'name', search: '/projects/search' },
  '/my_passwords.json': { key: 'name', search: '/my_passwords/search' },
  '/users.json': { key: 'username', list: '/users' },
  '/groups.json': { key: 'name', list: '/groups' },
};
const LIST_PAGE = 1000;
const MAX_LIST_PAGES = 20;

/** The run's unique name of a creation (`pmv6-…`), or undefined when the POST is not one the harness can look for. */
export function creationName(path: string, json: unknown): { name: string; key: 'name' | 'username' } | undefined {
  const c = CREATIONS[path.split('?')[0]!];
  const name = c && json !== null && typeof json === 'object' ? (json as Record<string, unknown>)[c.key] : undefined;
  return c && typeof name === 'string' && name.startsWith('pmv6-') ? { name, key: c.key } : undefined;
}

/**
 * Whether a creation whose answer was lost landed: the lists that show it, read for its unique
 * name (the same reading the run's cleanup makes of its prefix). `true` found, `false` read to
 * the end without it, undefined when a reading failed (then it is not sent again).
 */
export async function landed(
  path: string,
  json: unknown,
  get: (path: string, headers: Record<string, string>) => Promise<Exchange>,
): Promise<boolean | undefined> {
  const what = creationName(path, json);
  const c = CREATIONS[path.split('?')[0]!];
  if (!what || !c) return undefined;
  const size = { 'X-Page-Size': String(LIST_PAGE) };
  const base = c.search ? `${c.search}/${encodeURIComponent(what.name)}` : c.list!;
  for (let page = 1; page <= MAX_LIST_PAGES; page++) {
    const ex = await get(`${base}/page/${page}.json`, size);
    const status = ex.response?.status;
    if (page > 1 && status === 404) return false;
    // A search with no match may answer 404 or an empty list.
    if (page === 1 && status === 404 && c.search) return false;
    if (status !== 200 || !Array.isArray(ex.json)) return undefined;
    const items = ex.json as Array<Record<string, unknown> | null>;
    if (items.some((item) => item?.[what.key] === what.name)) return true;
    if (items.length < LIST_PAGE) return false;
  }
  return undefined;
}
