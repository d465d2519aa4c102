import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, type ClientRequestArgs, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createConnection, type NetConnectOpts, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { registerSecret } from '../core/redact.ts';
import { basicAuthorization } from '../core/signers.ts';
import { formatDateTime } from '../fixtures/reference-server/src/context.ts';
import type { NewLogEntry } from '../fixtures/reference-server/src/db/log.ts';
import type { ReferenceServer } from '../fixtures/reference-server/src/index.ts';
import type { RunConfig } from '../suites/harness/config.ts';
import { startEmbeddedTarget } from './embedded.ts';
import type { BaseConfig, Target } from './target.ts';

export type FieldTarget = Target & {
  kind: 'field';
  seeded: FieldData;
  /** From now on the requests in flight at the proxy are sampled every 10 ms (earlier samples are dropped). */
  mark(): void;
  /** What the installation saw since it started: the proxy's counts, the samples since `mark`, the other users' requests. */
  report(): Promise<FieldReport>;
};

/** The server's own time to answer, behind the proxy's delay. */
export interface ServerTime {
  ms: number;
  slowest: Array<{ path: string; n: number; ms: number }>;
}

/** Since `mark`: the share of a process's time its event loop was busy, and its CPU time. */
export interface ProcessUsage {
  utilization: number;
  cpuMs: number;
}

/** What the field installation measured of itself. */
export interface FieldReport {
  /** requests in flight at the proxy every 10 ms since `mark` */
  inFlight: number[];
  /** the most requests in flight at once */
  peak: number;
  /** requests the proxy forwarded */
  requests: number;
  /** idle connections the proxy closed */
  idleClosed: number;
  /** how long the server behind the proxy took to answer */
  server: ServerTime;
  /** the proxy's error log: connections to the server that failed (an upload cut short by an early answer, a 502 of its own) */
  upstreamErrors: UpstreamError[];
  /** the other users' requests (busy installations) */
  actor?: ActorStats;
  /** the installation's process: its server alone, or (`runs: 'here'`) the server, the proxy, the other users and the run */
  busy: ProcessUsage;
  /** the process of the proxy and the other users, where it is not the installation's (`runs: 'process'`) */
  front?: ProcessUsage;
}

/** How much an installation holds before a run (bulk, through the store). */
export interface FieldData {
  passwords: number;
  projects: number;
  users: number;
  logEntries: number;
}

/** An installation as it is in the field: populated, busy, slow, with a short keep-alive. */
export interface FieldOptions {
  /** what to seed; `false` (or zeros) for an empty installation */
  data?: Partial<FieldData> | false;
  /** other users writing and reading through the API while the run goes on */
  busy?: boolean | { actors?: number; pauseMs?: number };
  /** ms every response is held before its first byte goes back (default 20) */
  delayMs?: number;
  /** ms an idle kept-alive connection stays open before the server closes it, with no Keep-Alive hint (default 5000, Apache's default) */
  idleCloseMs?: number;
  /** the server's hooks before it listens (mutants); a mutated installation runs in this process */
  mutate?: (server: ReferenceServer) => void;
  /**
   * Where the installation runs: `'process'` (default) a child process of its own for the
   * server, and another for the proxy and the other users, as on machines of their own; `'here'`
   * this process, sharing its event loop with the run.
   */
  runs?: 'process' | 'here';
}

/** The installation's own part of FieldOptions (what its process receives). */
export type InstallationOptions = Pick<FieldOptions, 'data' | 'mutate'>;
/** The network's and the other users' part of FieldOptions (what their process receives). */
export type FrontOptions = Pick<FieldOptions, 'busy' | 'delayMs' | 'idleCloseMs'>;

/** Decision: about the size of a team's installation after some years (issue 25), seeded in under a second or two. */
export const FIELD_DATA: FieldData = { passwords: 20_000, projects: 200, users: 300, logEntries: 50_000 };

const SEED_PREFIX = 'field-';
const LOG_ACTIONS = ['view password', 'update password', 'create password', 'view project', 'user login'];

/**
 * The field installation: the embedded reference server (plain http), seeded in bulk with
 * `data`, behind a loopback proxy that holds each response `delayMs` and closes idle connections
 * after `idleCloseMs` without a Keep-Alive hint, with a bounded background actor (`busy`) whose
 * own users create, update and delete their own objects and read lists through the API while
 * the run goes on. The control protocol goes through the proxy too.
 */
export async function startFieldTarget(base: Partial<BaseConfig> = {}, opts: FieldOptions = {}): Promise<FieldTarget> {
  if (opts.mutate !== undefined || opts.runs === 'here') return startFieldHere(base, opts);
  const { mutate: _m, runs: _r, ...rest } = opts;
  return startFieldProcesses(base, rest);
}

/** The installation alone: the embedded reference server over plain http, seeded in bulk. */
export interface Installation {
  /** the server's own address (not through the proxy) */
  config: RunConfig;
  seeded: FieldData;
  close(): Promise<void>;
}

/** The reference server of a field installation, seeded with `opts.data` (FIELD_DATA unless `false`). */
export async function startInstallation(base: Partial<BaseConfig>, opts: InstallationOptions): Promise<Installation> {
  let server: ReferenceServer | undefined;
  const embedded = await startEmbeddedTarget(base, {
    http: true,
    mutate: (s) => {
      server = s;
      opts.mutate?.(s);
    },
  });
  try {
    if (!server || !embedded.config.control) throw new Error('embedded server did not start');
    const data: FieldData = opts.data === false ? { passwords: 0, projects: 0, users: 0, logEntries: 0 } : { ...FIELD_DATA, ...opts.data };
    seedField(server, data);
    return { config: embedded.config, seeded: data, close: () => embedded.close() };
  } catch (e) {
    await embedded.close();
    throw e;
  }
}

/** What stands between the run and the installation: the slow proxy, and the other users at work beside the run. */
export interface Front {
  /** the proxy's address */
  url: string;
  mark(): void;
  report(): Omit<FieldReport, 'busy' | 'front'>;
  close(): Promise<void>;
}

/** The proxy in front of the installation at `upstream` (its own address), and its other users when `opts.busy`. */
export async function startFront(upstream: RunConfig, opts: FrontOptions): Promise<Front> {
  const proxy = await startSlowProxy(upstream.target, { delayMs: opts.delayMs ?? 20, idleCloseMs: opts.idleCloseMs ?? 5_000 });
  let actor: BusyActor | undefined;
  try {
    if (opts.busy) {
      const b = opts.busy === true ? {} : opts.busy;
      actor = await startBusyActor(upstream, { actors: b.actors ?? 2, pauseMs: b.pauseMs ?? 100 });
    }
  } catch (e) {
    await proxy.close();
    throw e;
  }
  const a = actor;
  let samples: number[] = [];
  let sampler: NodeJS.Timeout | undefined;
  return {
    url: proxy.url,
    mark: () => {
      samples = [];
      clearInterval(sampler);
      // One sample for each 10 ms since the mark, also where the timer fired late (a busy machine).
      const marked = performance.now();
      sampler = setInterval(() => {
        const slot = Math.floor((performance.now() - marked) / 10);
        const now = proxy.inFlight();
        while (samples.length <= slot) samples.push(now);
      }, 10);
      sampler.unref();
    },
    report: () => ({
      inFlight: [...samples],
      peak: proxy.peak(),
      requests: proxy.requests(),
      idleClosed: proxy.idleClosed(),
      server: proxy.serverTime(),
      upstreamErrors: proxy.upstreamErrors(),
      ...(a ? { actor: a.stats() } : {}),
    }),
    close: async () => {
      clearInterval(sampler);
      await a?.stop();
      await proxy.close();
    },
  };
}

/** The run's configuration through the proxy at `url`: the API and the control protocol. */
export function throughProxy(config: RunConfig, url: string): RunConfig {
  if (!config.control) throw new Error('the field installation serves the control protocol');
  return { ...config, target: url, control: { url: `${url}/__control`, token: config.control.token } };
}

function labelOf(data: FieldData, busy: boolean, delayMs: number): string {
  const empty = data.passwords + data.projects + data.users + data.logEntries === 0;
  return `field installation (${empty ? 'empty' : `${data.passwords} passwords, ${data.projects} projects, ${data.users} users, ${data.logEntries} log entries`}${busy ? ', busy' : ', quiet'}, ${delayMs} ms a reply)`;
}

/** The busy share and CPU time of this process since the last `reset`. */
export function processUsage(): { reset(): void; read(): ProcessUsage } {
  let elu = performance.eventLoopUtilization();
  let cpu = process.cpuUsage();
  return {
    reset: () => {
      elu = performance.eventLoopUtilization();
      cpu = process.cpuUsage();
    },
    read: () => {
      const c = process.cpuUsage(cpu);
      return { utilization: performance.eventLoopUtilization(elu).utilization, cpuMs: (c.user + c.system) / 1000 };
    },
  };
}

/** The field installation in this process (see startFieldTarget). */
export async function startFieldHere(base: Partial<BaseConfig> = {}, opts: FieldOptions = {}): Promise<FieldTarget> {
  const installation = await startInstallation(base, opts);
  let front: Front;
  try {
    front = await startFront(installation.config, opts);
  } catch (e) {
    await installation.close();
    throw e;
  }
  const usage = processUsage();
  return fieldTarget(installation.config, front.url, installation.seeded, opts, {
    mark: () => {
      front.mark();
      usage.reset();
    },
    report: async () => ({ ...front.report(), busy: usage.read() }),
    close: async () => {
      await front.close();
      await installation.close();
    },
  });
}

/** The target a run sees: the installation through its front, labelled by what it holds and how it answers. */
function fieldTarget(
  config: RunConfig,
  frontUrl: string,
  seeded: FieldData,
  opts: Pick<FieldOptions, 'busy' | 'delayMs'>,
  ends: Pick<FieldTarget, 'mark' | 'report' | 'close'>,
): FieldTarget {
  return {
    kind: 'field',
    label: labelOf(seeded, Boolean(opts.busy), opts.delayMs ?? 20),
    config: throughProxy(config, frontUrl),
    version: undefined,
    seeded,
    ...ends,
  };
}

const BUILT = import.meta.url.endsWith('.js');
const CHILD = fileURLToPath(new URL(BUILT ? './field-child.js' : './field-child.ts', import.meta.url));
/** Deadlines of the child's answers: starting includes seeding in bulk (a few seconds). */
const START_DEADLINE_MS = 120_000;
const ASK_DEADLINE_MS = 30_000;

/** A message to a field process (targets/field-child.ts) and its answers. */
export type FieldAsk =
  | { type: 'installation'; base: Partial<BaseConfig>; opts: Omit<InstallationOptions, 'mutate'> }
  | { type: 'front'; upstream: RunConfig; opts: FrontOptions }
  | { type: 'mark' | 'report' | 'close' };
/** A field process's answer to `report`: its own usage, and the front's report where it runs the front. */
export type FieldChildReport = { usage: ProcessUsage; front?: Omit<FieldReport, 'busy' | 'front'> };

/** A child process running targets/field-child.ts, asked one message at a time with a deadline. */
interface FieldChild {
  ask<T>(message: FieldAsk, deadlineMs?: number): Promise<T>;
  /** asks it to close, then waits for it to end (killed after 5 s) */
  stop(): Promise<void>;
}

function forkFieldChild(): FieldChild {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'NODE_OPTIONS' && k !== 'TEST'));
  const child = fork(CHILD, [], {
    execArgv: [...(BUILT ? [] : ['--import', 'tsx']), ...(process.env.FIELD_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : [])],
    env,
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-2_000);
  });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let next = 0;
  let exited: string | undefined;
  child.on('message', (m: { id: number; ok: boolean; value?: unknown; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.ok) p?.resolve(m.value);
    else p?.reject(new Error(`the field installation: ${m.error}`));
  });
  const ended = new Promise<void>((resolve) =>
    child.on('exit', (code, signal) => {
      exited = `the field installation's process ended (${signal ?? `exit ${code}`})${stderr.trim() ? `: ${stderr.trim().split('\n').slice(-3).join(' | ')}` : ''}`;
      for (const p of pending.values()) p.reject(new Error(exited));
      pending.clear();
      resolve();
    }),
  );
  const ask = <T>(message: FieldAsk, deadlineMs = ASK_DEADLINE_MS): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (exited !== undefined) return reject(new Error(exited));
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the field installation did not answer ${message.type} within ${deadlineMs} ms`));
      }, deadlineMs);
      pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      child.send({ id, ...message });
    });
  return {
    ask,
    stop: async () => {
      if (exited === undefined) await ask({ type: 'close' }).catch(() => undefined);
      const killed = setTimeout(() => child.kill('SIGKILL'), 5_000);
      if (exited === undefined && child.connected) child.disconnect();
      await ended;
      clearTimeout(killed);
    },
  };
}

/**
 * Decision: the field installation runs in child processes of its own by default: its server in
 * one, the proxy and the other users in another. An installation in the field is another
 * machine, its network is not its server, and its other users sit at machines of their own: none
 * of their CPU is the run's, and the latency of the network does not wait for the server's event
 * loop. In the run's process the server's work (a few ms a request, its other users' requests)
 * and the proxy's share one event loop with the run and slow the run down by what the server
 * does; in the server's process the proxy's own work (two HTTP exchanges a request) and the other
 * users' clients queued every request behind them, and each long answer of the server (a search
 * of 50,000 log entries) held every reply waiting out its delay. Each child stops its part when
 * the parent goes away.
 */
async function startFieldProcesses(base: Partial<BaseConfig>, opts: Omit<FieldOptions, 'mutate' | 'runs'>): Promise<FieldTarget> {
  // Both processes start at once; the front needs the installation's address.
  const server = forkFieldChild();
  const network = forkFieldChild();
  const stop = async () => {
    await network.stop();
    await server.stop();
  };
  try {
    const started = await server.ask<{ config: RunConfig; seeded: FieldData }>(
      { type: 'installation', base, opts: opts.data === undefined ? {} : { data: opts.data } },
      START_DEADLINE_MS,
    );
    registerSecret(started.config.password, 'admin password');
    if (started.config.control) registerSecret(started.config.control.token, 'control token');
    const front = await network.ask<{ url: string }>(
      { type: 'front', upstream: started.config, opts: { busy: opts.busy ?? false, delayMs: opts.delayMs ?? 20, idleCloseMs: opts.idleCloseMs ?? 5_000 } },
      START_DEADLINE_MS,
    );
    return fieldTarget(started.config, front.url, started.seeded, opts, {
      mark: () => {
        for (const c of [server, network]) void c.ask({ type: 'mark' }).catch(() => undefined);
      },
      report: async () => {
        const [s, n] = await Promise.all([server.ask<FieldChildReport>({ type: 'report' }), network.ask<FieldChildReport>({ type: 'report' })]);
        if (!n.front) throw new Error('the field installation: the front did not report');
        return { ...n.front, busy: s.usage, front: n.usage };
      },
      close: stop,
    });
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Bulk rows through the store: users (who cannot sign in), projects, passwords spread over them, log entries. */
function seedField(server: ReferenceServer, data: FieldData): void {
  const store = server.store;
  const now = formatDateTime(Date.now());
  store.db.transaction(() => {
    for (let i = 0; i < data.users; i++) {
      const n = String(i).padStart(5, '0');
      store.users.insert({
        username: `${SEED_PREFIX}user-${n}`,
        name: `Field User ${n}`,
        email_address: `field-${n}@example.com`,
        role: i % 10 === 0 ? 'project manager' : 'normal user',
        password_hash: '!',
        api_only: false,
        active: true,
        created_on: now,
      });
    }
  })();
  const projects: number[] = [];
  store.db.transaction(() => {
    for (let i = 0; i < data.projects; i++)
      projects.push(
        store.projects.insert({ name: `${SEED_PREFIX}project-${String(i).padStart(4, '0')}`, parent_id: 0, tags: '', notes: '', user_id: server.adminId, now }),
      );
  })();
  if (data.passwords > 0 && projects.length === 0)
    projects.push(store.projects.insert({ name: `${SEED_PREFIX}project-0000`, parent_id: 0, tags: '', notes: '', user_id: server.adminId, now }));
  const per = Math.ceil(data.passwords / Math.max(1, projects.length));
  for (let p = 0, left = data.passwords; left > 0; p++, left -= per)
    store.passwords.seed(projects[p]!, Math.min(per, left), server.adminId, now, () => null, `${SEED_PREFIX}p${p}-`);
  const entries: NewLogEntry[] = [];
  for (let i = 0; i < data.logEntries; i++)
    entries.push({
      date_time: now,
      ip_address: '192.0.2.10',
      user_id: server.adminId,
      user_name: 'admin',
      action: LOG_ACTIONS[i % LOG_ACTIONS.length]!,
      related_password_id: null,
      related_password_name: null,
      related_project_id: null,
      related_project_name: null,
      data_raw: '',
      data_ui: '',
      origin: 'web',
    });
  store.log.insertMany(entries);
}

/** A loopback proxy in front of an installation: the latency of a distant one and an Apache-like keep-alive. */
export interface SlowProxy {
  url: string;
  /** requests waiting for or receiving their response now */
  inFlight(): number;
  /** the most requests in flight at once */
  peak(): number;
  /** requests forwarded */
  requests(): number;
  /** idle connections it closed */
  idleClosed(): number;
  /** how long the installation took to answer (to the response's head), in all and by path (ids as N), the slowest paths first */
  serverTime(): ServerTime;
  /** the proxy's error log: failures of a connection to the installation (the latest UPSTREAM_ERRORS_KEPT) */
  upstreamErrors(): UpstreamError[];
  close(): Promise<void>;
}

/** A connection to the installation that failed: its error code, the request's path, and whether its answer had come (then passed on). */
export type UpstreamError = { code: string; path: string; answered: boolean };

/** The proxy's error log keeps this many entries, the latest. */
export const UPSTREAM_ERRORS_KEPT = 50;

/** Upstream sockets whose request body could not be sent to its end: the error's code. */
const uploadFailed = new WeakMap<Socket, string>();

/**
 * An installation may answer a request from its head alone (a 413 from the Content-Length) and
 * reset the connection with the body unread; the rest of the upload then fails (EPIPE,
 * ECONNRESET), often before the answer, already in the socket, has been read. Decision, as nginx
 * does with an early answer: a failed write to the installation ends the upload, not the
 * connection; the answer is read and passed on, and the connection is not used again. Only a
 * connection that ends with no answer is the proxy's own 502.
 */
class EarlyAnswerAgent extends Agent {
  override createConnection(options: ClientRequestArgs): Socket {
    const socket = createConnection(options as NetConnectOpts);
    const swallow = (cb: (error?: Error | null) => void) => (error?: Error | null) => {
      if (error) uploadFailed.set(socket, (error as NodeJS.ErrnoException).code ?? error.message);
      cb();
    };
    const write = socket._write.bind(socket);
    socket._write = (chunk, encoding, cb) => (uploadFailed.has(socket) ? cb() : write(chunk, encoding, swallow(cb)));
    const writev = socket._writev?.bind(socket);
    if (writev) socket._writev = (chunks, cb) => (uploadFailed.has(socket) ? cb() : writev(chunks, swallow(cb)));
    return socket;
  }
}

/**
 * Each request is forwarded at once; its response is held `delayMs` before the first byte goes
 * back. A connection idle `idleCloseMs` after its last response is closed with no Keep-Alive
 * header ever sent, as Apache does (KeepAliveTimeout 5), so a client learns of it only by the
 * close. The client's Host header goes through unchanged (nginx's `proxy_set_header Host $host`,
 * Apache's `ProxyPreserveHost On`): the installation's Link headers name the address the client
 * used, as behind any reverse proxy configured for it.
 */
export async function startSlowProxy(upstream: string, opts: { delayMs: number; idleCloseMs: number }): Promise<SlowProxy> {
  const up = new URL(upstream);
  let inFlight = 0;
  let peak = 0;
  let requests = 0;
  let idleClosed = 0;
  let serverMs = 0;
  const byPath = new Map<string, { n: number; ms: number }>();
  const errors: UpstreamError[] = [];
  const logError = (e: UpstreamError) => {
    errors.push(e);
    if (errors.length > UPSTREAM_ERRORS_KEPT) errors.shift();
  };
  // Node's global agent's options (the proxy used it before): an idle connection to the server is
  // closed after 5 s, well before the server's own idle timeout, so none is reused as it closes.
  const agent = new EarlyAnswerAgent({ keepAlive: true, scheduling: 'lifo', timeout: 5_000 });
  const idle = new Map<Socket, NodeJS.Timeout>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    clearTimeout(idle.get(socket));
    idle.delete(socket);
    inFlight++;
    requests++;
    peak = Math.max(peak, inFlight);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      inFlight--;
      if (socket.destroyed) return;
      idle.set(
        socket,
        setTimeout(() => {
          idle.delete(socket);
          idleClosed++;
          socket.end();
        }, opts.idleCloseMs),
      );
    };
    res.on('close', finish);
    const sent = performance.now();
    let answered = false;
    const path = req.url ?? '';
    const out = httpRequest({ host: up.hostname, port: up.port, method: req.method, path, headers: req.headers, agent }, (answer) => {
      answered = true;
      const took = performance.now() - sent;
      serverMs += took;
      const size = req.headers['x-page-size'];
      const key = `${req.method} ${path
        .replace(/^\/index\.php\/api\/v6/, '')
        .replace(/\/\d+(?=[/.])/g, '/N')
        .replace(/\/search\/[^/]+\.json/, '/search/Q.json')}${size === undefined ? '' : ` (${size} a page)`}`;
      const k = byPath.get(key) ?? { n: 0, ms: 0 };
      k.n++;
      k.ms += took;
      byPath.set(key, k);
      // A connection whose upload failed is not used again (its write side is gone).
      answer.on('end', () => {
        if (out.socket && uploadFailed.has(out.socket)) out.socket.destroy();
      });
      setTimeout(() => {
        const headers = { ...answer.headers };
        delete headers['keep-alive'];
        delete headers.connection;
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
      }, opts.delayMs);
    });
    // Logged once the request is over, from its own socket: a kept-alive socket serves many
    // requests, and a listener on the socket would outlive this one.
    let failure: string | undefined;
    let upstreamSocket: Socket | undefined;
    out.on('socket', (s: Socket) => {
      upstreamSocket = s;
    });
    out.once('close', () => {
      failure ??= upstreamSocket && uploadFailed.get(upstreamSocket);
      if (failure !== undefined) logError({ code: failure, path, answered });
    });
    out.on('error', (e: NodeJS.ErrnoException) => {
      failure ??= (out.socket && uploadFailed.get(out.socket)) ?? e.code ?? e.message;
      if (answered) return;
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(out);
    // A request body the installation did not read to its end (a 413 answered from the
    // Content-Length) is read and dropped once the reply has gone, as nginx and Apache discard
    // it: left paused behind the upstream's end, the connection's next request would never be
    // read (measured: a GET after the 2 MiB body of large-body.test.ts waited 10 s, now and then).
    res.on('finish', () => {
      if (req.complete) return;
      req.unpipe(out);
      out.destroy();
      req.resume();
    });
  });
  // Node's own keep-alive timer would send `Keep-Alive: timeout=N`; the idle timers above replace it.
  server.keepAliveTimeout = 0;
  server.on('connection', (socket: Socket) => socket.on('close', () => clearTimeout(idle.get(socket))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy did not listen');
  return {
    url: `http://127.0.0.1:${address.port}`,
    inFlight: () => inFlight,
    peak: () => peak,
    requests: () => requests,
    idleClosed: () => idleClosed,
    upstreamErrors: () => [...errors],
    serverTime: () => ({
      ms: serverMs,
      slowest: [...byPath]
        .sort((a, b) => b[1].ms - a[1].ms)
        .slice(0, 25)
        .map(([path, { n, ms }]) => ({ path, n, ms })),
    }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of idle.values()) clearTimeout(t);
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}

/** What the other users sent, how many got no 2XX answer, and what they made and deleted. */
export type ActorStats = { requests: number; failed: number; created: number; deleted: number };

/** Other users of the installation at work: what they sent and how it went. */
export interface BusyActor {
  /** requests sent, and how many got no 2XX answer */
  stats(): ActorStats;
  /** stops after the requests under way, deletes whatever its users still own; never throws */
  stop(): Promise<void>;
}

/**
 * `actors` users of their own (admins made through the control protocol), each one request at a
 * time with `pauseMs` between: create a project and a password in it, read it, update it, read
 * the first pages of the password, project and log lists, delete the password and the project.
 * Bounded (at most `actors` requests in flight), loopback only, every request with a deadline and
 * its body read up to a bound.
 */
export async function startBusyActor(config: RunConfig, opts: { actors: number; pauseMs: number }): Promise<BusyActor> {
  if (!config.control) throw new Error('the busy actor makes its users through the control protocol');
  const control = config.control;
  const api = `${config.target}/index.php/api/v6`;
  const tag = randomBytes(4).toString('hex');
  const stats = { requests: 0, failed: 0, created: 0, deleted: 0 };
  let stopping = false;
  const users: Array<{ id: number; authorization: string }> = [];
  for (let a = 0; a < opts.actors; a++) {
    const password = randomBytes(18).toString('base64url');
    registerSecret(password, 'busy actor password');
    const r = await request(`${control.url}/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${control.token}`, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ username: `field-actor-${tag}-${a}`, password, role: 'admin', api_only: false, active: true }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await r.body.json()) as { id: number };
    if (r.statusCode !== 201) throw new Error(`making the busy actor's user answered ${r.statusCode}`);
    users.push({ id: body.id, authorization: basicAuthorization(`field-actor-${tag}-${a}`, password) });
  }

  const send = async (authorization: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> => {
    stats.requests++;
    try {
      const r = await request(`${api}${path}`, {
        method: method as 'GET',
        headers: { authorization, 'content-type': 'application/json; charset=utf-8', 'x-page-size': '20' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await readBounded(r.body, 1 << 20);
      if (r.statusCode < 200 || r.statusCode >= 300) stats.failed++;
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { status: r.statusCode, json };
    } catch {
      stats.failed++;
      return { status: 0, json: undefined };
    }
  };
  const pause = () => new Promise((resolve) => setTimeout(resolve, opts.pauseMs));
  const idOf = (j: unknown) => (j !== null && typeof j === 'object' && typeof (j as { id?: unknown }).id === 'number' ? (j as { id: number }).id : undefined);

  // What its users made and have not deleted yet (a run may have the API off or in maintenance when they try).
  const owned = new Set<string>();
  const remove = async (auth: string, path: string) => {
    const status = (await send(auth, 'DELETE', path)).status;
    if ((status >= 200 && status < 300) || status === 404) {
      owned.delete(path);
      if (status !== 404) stats.deleted++;
    }
  };
  const loop = async (user: { authorization: string }, a: number) => {
    const auth = user.authorization;
    for (let i = 0; !stopping; i++) {
      const name = `field-actor-${tag}-${a}-${i}`;
      const project = idOf((await send(auth, 'POST', '/projects.json', { name, parent_id: 0 })).json);
      if (project === undefined) {
        await pause();
        continue;
      }
      stats.created++;
      owned.add(`/projects/${project}.json`);
      try {
        await pause();
        const password = idOf((await send(auth, 'POST', '/passwords.json', { name, project_id: project, password: `secret-${name}` })).json);
        if (password !== undefined) {
          stats.created++;
          owned.add(`/passwords/${password}.json`);
          const steps: Array<[string, string, unknown?]> = [
            ['GET', `/passwords/${password}.json`],
            ['PUT', `/passwords/${password}.json`, { notes: `busy ${i}` }],
            ['GET', '/passwords.json'],
            ['GET', '/projects.json'],
            ['GET', '/log.json'],
          ];
          for (const [method, path, body] of steps) {
            if (stopping) break;
            await pause();
            await send(auth, method, path, body);
          }
          await pause();
          await remove(auth, `/passwords/${password}.json`);
        }
      } finally {
        await remove(auth, `/projects/${project}.json`);
      }
      await pause();
    }
  };
  const loops = users.map((u, a) => loop(u, a));
  return {
    stats: () => ({ ...stats }),
    stop: async () => {
      stopping = true;
      await Promise.allSettled(loops);
      const admin = basicAuthorization(config.user, config.password);
      for (const path of [...owned].sort((a, b) => (a.startsWith('/passwords') ? -1 : 0) - (b.startsWith('/passwords') ? -1 : 0))) await remove(admin, path);
      for (const u of users) await send(admin, 'DELETE', `/users/${u.id}.json`);
    },
  };
}

async function readBounded(body: AsyncIterable<Buffer> & { dump(o?: { limit?: number }): Promise<void> }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      await body.dump().catch(() => undefined);
      return '';
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
