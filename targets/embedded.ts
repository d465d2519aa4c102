import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { registerSecret, scrub } from '../core/redact.ts';
import type { ReferenceServer } from '../fixtures/reference-server/src/index.ts';
import { newRunId, type RunConfig, randomSeed } from '../suites/harness/config.ts';
import type { ThreadSpec } from './embedded-thread.ts';
import type { Target } from './target.ts';
import { type Certificate, selfSignedCertificate } from './tls.ts';

export type EmbeddedTarget = Target & { kind: 'embedded' };

export interface EmbeddedOptions {
  /** the server's hooks before it listens (mutants, variants); a mutated server runs in this thread */
  mutate?: (server: ReferenceServer) => void;
  /** plain http instead of https */
  http?: boolean;
  /**
   * Where the server runs: `'thread'` (default without `mutate`) a worker thread of its own,
   * `'here'` this thread, sharing its event loop with the run.
   */
  runs?: 'thread' | 'here';
}

// The default target: the reference server on an ephemeral loopback port, in memory, over https
// with a throwaway certificate (plain http where openssl is missing), with the control protocol on
// and secrets generated for this run only, in a worker thread of its own (see SERVER_THREAD).
// `mutate` adds hooks to the server before it listens (the mutants of fixtures/mutants/ do): such
// a server runs in this thread, where the hooks are.
export async function startEmbeddedTarget(base: Partial<RunConfig> = {}, options: EmbeddedOptions = {}): Promise<EmbeddedTarget> {
  const password = randomBytes(18).toString('base64url');
  const token = randomBytes(24).toString('base64url');
  registerSecret(password, 'admin password');
  registerSecret(token, 'control token');
  const certificate = options.http ? undefined : cachedCertificate();
  const spec: ThreadSpec = {
    adminPassword: password,
    controlToken: token,
    passwordCost: EMBEDDED_PASSWORD_COST,
    maxUploadFileSizeBytes: EMBEDDED_MAX_UPLOAD,
    ...(certificate ? { tls: certificate } : {}),
  };
  const server = options.mutate !== undefined || options.runs === 'here' ? await serverHere(spec, options.mutate) : await startServerThread(spec);
  const { target } = server;
  const config: RunConfig = {
    runId: base.runId ?? newRunId(),
    seed: base.seed ?? randomSeed(),
    readOnly: base.readOnly ?? false,
    timeoutMs: base.timeoutMs ?? 10_000,
    ...base,
    target,
    user: 'admin',
    password,
    control: { url: `${target}/__control`, token },
    ...(certificate ? { tls: { ca: certificate.cert } } : {}),
  };
  return { kind: 'embedded', label: 'embedded reference server', config, version: undefined, close: server.close };
}

/** A started server: its base URL and how to stop it. */
export interface Running {
  target: string;
  close(): Promise<void>;
}

async function serverHere(spec: ThreadSpec, mutate?: (server: ReferenceServer) => void): Promise<Running> {
  // Loaded only here: with the server in its own thread, the run's thread never loads its modules
  // (fastify, SQLite, the routes: their code and heap are the thread's alone).
  const { createReferenceServer } = await import('../fixtures/reference-server/src/index.ts');
  const server = await createReferenceServer({ adminUser: 'admin', ...spec });
  try {
    mutate?.(server);
    return { target: await server.listen({ host: '127.0.0.1', port: 0 }), close: () => server.close() };
  } catch (e) {
    await server.close();
    throw e;
  }
}

/**
 * Decision (issue 38): the embedded run is CPU-bound on one thread, and a third of it was the
 * server (its routes, fastify, SQLite, its share of node's http and TLS) sharing the event loop
 * with the run, and paying for the run's AsyncLocalStorage hooks on each of its promises. In a
 * worker thread of its own the server and the run use two cores, as a run against an installation
 * does. Measured side by side (bench:suite, 5 runs, with the careful pool's reuse of
 * suites/harness/connections.ts LONG_ANNOUNCED_MS): the run's main thread 3.1 s of CPU against
 * 6.3 s (0.49), the process 0.88 of the CPU, 0.93 of the wall time at a load of 3 to 8 on 2 cores
 * (4.5 s twice at 3). Its cost is memory: the thread has a heap and a glibc malloc arena of its
 * own. bench:memory's `embedded` case peaked at 231-311 MB against 206-391 MB before at a load of
 * 8 to 10, 229-395 against 215-307 at 20, and 220-224 MB with MALLOC_ARENA_MAX=2.
 */
const BUILT = import.meta.url.endsWith('.js');
const THREAD = new URL(BUILT ? './embedded-thread.js' : './embedded-thread.ts', import.meta.url);
/** Making the server and listening: well under a second; a machine under load takes longer. */
const START_DEADLINE_MS = 60_000;
/** Closing it: its connections end at once (fastify's close), the in-memory database with it. */
const CLOSE_DEADLINE_MS = 5_000;
/**
 * Its output kept here, never printed as it comes (it could hold what a secret became). Decision:
 * a young generation of 8 MB instead of V8's 32: the server's garbage is a request's own, and the
 * default's semi-spaces made the thread's heap 56-83 MB instead of 31-58 (the thread's heap at the
 * end of full runs, side by side); no difference in CPU was seen.
 */
const THREAD_OPTIONS = { stdout: true, stderr: true, resourceLimits: { maxYoungGenerationSizeMb: 8 } } as const;
/** The end of what the thread printed that an error quotes (redacted). */
const OUTPUT_TAIL = 2_000;

/** The reference server made and listening in a worker thread of its own (the embedded target's default). */
export async function startServerThread(spec: ThreadSpec): Promise<Running> {
  // From the TypeScript sources (tsx, vitest) the thread compiles them itself: a worker does not
  // inherit the loader hooks registered in this one, nor `--import tsx` given in its execArgv.
  const worker = BUILT
    ? new Worker(THREAD, { workerData: spec, ...THREAD_OPTIONS })
    : new Worker(`import(${JSON.stringify(tsxApi())}).then(({ register }) => { register(); return import(${JSON.stringify(THREAD.href)}); });`, {
        eval: true,
        workerData: spec,
        ...THREAD_OPTIONS,
      });
  let output = '';
  const keep = (d: Buffer) => {
    output = (output + d.toString('utf8')).slice(-OUTPUT_TAIL);
  };
  worker.stdout.on('data', keep);
  worker.stderr.on('data', keep);
  let crash: unknown;
  worker.on('error', (e) => (crash = e));
  /** Why the thread ended, redacted: its error, its exit code, the end of what it printed. */
  const why = (code: number) => {
    const error = crash instanceof Error ? crash.message : crash === undefined ? '' : String(crash);
    const printed = output.trim().split('\n').slice(-3).join(' | ');
    return scrub(`exit ${code}${error ? `: ${error.split('\n')[0]}` : ''}${printed ? ` (it printed: ${printed})` : ''}`);
  };
  const ended = new Promise<number>((resolve) => worker.on('exit', resolve));
  const messages: ThreadMessage[] = [];
  let heard: (() => void) | undefined;
  worker.on('message', (m: ThreadMessage) => {
    messages.push(m);
    heard?.();
  });
  /** The thread's next message of these types, or its end, or the deadline (undefined). */
  const next = (types: ThreadMessage['type'][], deadlineMs: number): Promise<ThreadMessage | { type: 'exit'; code: number } | undefined> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve(undefined), deadlineMs);
      const look = () => {
        const m = messages.find((x) => types.includes(x.type));
        if (!m) return;
        clearTimeout(timer);
        resolve(m);
      };
      heard = look;
      look();
      void ended.then((code) => {
        clearTimeout(timer);
        resolve({ type: 'exit', code });
      });
    });
  let state: 'starting' | 'listening' | 'closing' = 'starting';
  void ended.then((code) => {
    // Ended under a run: said once, redacted; the run's requests fail from here on (harness
    // errors, then the CLI's preflight: "the target failed during the run", exit 2).
    if (state === 'listening') process.stderr.write(`pmv6: the embedded reference server's thread ended during the run (${why(code)})\n`);
  });
  let stopping: Promise<void> | undefined;
  // Closed once the server is (its port, its connections, its database): the thread's own end
  // (a few hundred ms of tearing down its heap) is not waited for, and never keeps this process.
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      state = 'closing';
      worker.postMessage({ type: 'close' });
      const closed = await next(['closed', 'failed'], CLOSE_DEADLINE_MS);
      worker.unref();
      if (closed?.type !== 'exit') void worker.terminate();
    })();
    return stopping;
  };
  const first = await next(['listening', 'failed'], START_DEADLINE_MS);
  if (first?.type === 'listening') {
    state = 'listening';
    // Never what keeps the CLI alive: a run that ends without close() still ends.
    worker.unref();
    return { target: first.url, close: stop };
  }
  await stop();
  if (first === undefined) throw new Error(`the embedded reference server did not start within ${START_DEADLINE_MS / 1000} s`);
  if (first.type === 'failed') throw new Error(`the embedded reference server did not start: ${scrub(first.error)}`);
  throw new Error(`the embedded reference server's thread ended before it listened (${why(first.type === 'exit' ? first.code : 0)})`);
}

type ThreadMessage = { type: 'listening'; url: string } | { type: 'failed'; error: string } | { type: 'closed' };

/** tsx's module hooks, for a thread that runs the TypeScript sources. */
function tsxApi(): string {
  return import.meta.resolve('tsx/esm/api');
}

/**
 * Decision: the embedded server lives in memory for one run, and every password on it is made
 * for that run and forgotten after. At the server's default scrypt cost (N 16384, about 36 ms a
 * hash here) a full run spent 6.4 s of its 11 s waiting for 179 hashes (users made, first sign-ins,
 * wrong passwords); at N 1024 a hash takes a sixteenth of that. No clause depends on the cost;
 * `pmv6 serve`, whose database persists, keeps the default. Issue 38: at N 1024 a run's hashes
 * still took 0.5 s of CPU (3 ms each, in libuv's pool, on a machine of 2 cores beside the run's
 * two threads) and 3 ms of each first sign-in's answer; at N 16 a hash takes 0.1 ms.
 */
const EMBEDDED_PASSWORD_COST = 16;

/**
 * Decision (issue 38, the embedded run's memory): the embedded server's maximum upload file size
 * is 1 MiB (its body limit), not the 10 MiB of DEFAULT_SETTINGS, and a reset keeps it. No clause
 * depends on the value; OPS-09's upload of one byte over the maximum (suites/model/files.ts, sent
 * by the runs whose random sequences draw it) is then a body of 1.4 MB instead of 14 MB. Both
 * ends of that upload are in this process: the run's thread holds the body's text twice (the
 * test's base64 and its JSON), the server's thread four times (the bytes as read, joined, as
 * text, parsed), and both heaps kept the size they grew to. It was the embedded run's bimodal
 * peak: sampling every thread's heap every 50 ms (6 runs), the runs that sent it peaked at
 * 299-316 MB (the run's heap 105-115 MB, the server's 49-54), the others at 252-263 (78-86, 28).
 * bench:memory, 16 runs side by side (two benches, at loads of 6 to 19): 238-261 MB against
 * main's 237-411, 7 of whose 16 passed 300 MB.
 */
const EMBEDDED_MAX_UPLOAD = 1024 * 1024;

let certificate: Certificate | undefined | null = null;

function cachedCertificate(): Certificate | undefined {
  if (certificate === null) certificate = selfSignedCertificate();
  return certificate;
}
