import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { TargetError } from '../core/errors.ts';
import { registerSecret, scrub } from '../core/redact.ts';
import type { RunConfig } from '../suites/harness/config.ts';
import type { BaseConfig, Target } from './target.ts';

// `pmv6 run --image NAME`: the target is a container started here with testcontainers, found the
// way testcontainers finds an engine (DOCKER_HOST, ~/.testcontainers.properties, the local socket).
// The container is stopped and removed by close(), after any failure to start or to answer, on
// SIGINT/SIGTERM (also during the start), and (last resort, through the docker CLI) when the
// process exits with it still there.

/** The label the reference server's image carries (Dockerfile): pmv6 configures it itself. */
export const REFERENCE_LABEL = 'io.pmv6.reference';

/** Every container pmv6 starts carries this label, a value of its own for each start. */
export const RUN_LABEL = 'io.pmv6.start';

/** The testcontainers versions pmv6 works with (package.json's peerDependencies says the same). */
export const TESTCONTAINERS_RANGE = '^11.14.0';

export class ContainerError extends TargetError {
  override name = 'ContainerError';
}

export interface ContainerOptions {
  image: string;
  /** The port the server listens on inside the container; default 80 (host network: see below). */
  containerPort?: number;
  /** `K=V` pairs given with --container-env; applied after (over) the automatic ones. */
  env?: Record<string, string>;
  /** Where the installation is mounted: the API is at {basePath}index.php/api/v6/. Default "/". */
  basePath?: string;
  /** Polled until it answers with any HTTP status. Default {basePath}index.php/api/v6/version.json. */
  waitPath?: string;
  /** Docker network mode, e.g. "host" (the container shares the host's ports; no port mapping). */
  network?: string;
  /** Admin credentials and control token from the usual flags/environment. */
  user?: string;
  password?: string;
  controlToken?: string;
  startupTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface ContainerTarget {
  /** Fills target, user, password and (when there is one) control of a RunConfig. */
  config: Pick<RunConfig, 'target' | 'user' | 'password' | 'control'>;
  containerId: string;
  /** The image is the pmv6 reference server (its label), configured by pmv6. */
  reference: boolean;
  startupMs: number;
  close(): Promise<void>;
}

// An image started for this run, then checked by the same preflight as a URL target; stopped
// again when the preflight refuses it.
export async function containerTarget(base: BaseConfig, opts: ContainerOptions, hmac?: { publicKey: string; privateKey: string }): Promise<Target> {
  const started = await startContainerTarget(opts);
  const id = started.containerId.slice(0, 12);
  opts.log?.(`container ${id} answered after ${started.startupMs} ms`);
  const config = { ...base, ...started.config, ...(hmac ? { hmac } : {}) };
  try {
    // Loaded here: the flags' parsing (bin/cli/container-flags.ts) reads this module, and `run --help` need not load the API client.
    const { preflight } = await import('./preflight.ts');
    const version = await preflight(config);
    const label = `container ${id} of ${opts.image}${started.reference ? ', pmv6 reference server' : ''}`;
    return { kind: 'container', label, config, version, close: started.close };
  } catch (e) {
    await started.close();
    throw e;
  }
}

/** Parses repeated `--container-env K=V` values. */
export function parseContainerEnv(values: string[] | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const kv of values ?? []) {
    const eq = kv.indexOf('=');
    if (eq <= 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(kv.slice(0, eq))) {
      throw new ContainerOptionError(`--container-env needs NAME=VALUE, got "${kv.slice(0, Math.max(eq, 0)) || kv.split('=')[0]}=…"`);
    }
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return env;
}

/** A bad --container-* flag (the CLI turns it into a usage error). */
export class ContainerOptionError extends Error {
  override name = 'ContainerOptionError';
}

export function normaliseBasePath(basePath: string | undefined): string {
  const p = basePath ?? '/';
  if (!p.startsWith('/') || /[?#\s]/.test(p)) throw new ContainerOptionError(`--base-path must be a path starting with "/", got "${p}"`);
  return p.endsWith('/') ? p : `${p}/`;
}

const SECRET_NAME = /PASS|TOKEN|SECRET|KEY|CREDENTIAL/i;

export async function startContainerTarget(opts: ContainerOptions): Promise<ContainerTarget> {
  const log = opts.log ?? (() => {});
  const basePath = normaliseBasePath(opts.basePath);
  const given = opts.env ?? {};
  for (const [k, v] of Object.entries(given)) if (v && SECRET_NAME.test(k)) registerSecret(v, `container env ${k}`);

  // Loaded here so that `pmv6 run` without --image never loads testcontainers. Decision: it is an
  // optional peer dependency of the package (only --image needs it), installed beside pmv6.
  let tc: typeof import('testcontainers');
  try {
    tc = await import('testcontainers');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw e;
    throw new ContainerError(
      `--image needs the package testcontainers, which pmv6 does not install: run npm install testcontainers@${TESTCONTAINERS_RANGE} where pmv6 is installed`,
    );
  }
  let client: Awaited<ReturnType<typeof tc.getContainerRuntimeClient>>;
  try {
    client = await tc.getContainerRuntimeClient();
  } catch (e) {
    throw new ContainerError(
      `no container engine reachable for --image (start Docker or set DOCKER_HOST; inside a container, TESTCONTAINERS_HOST_OVERRIDE may be needed; DEBUG='testcontainers*' shows why): ${firstLine(e)}`,
    );
  }
  const imageName = tc.ImageName.fromString(opts.image);
  if (!(await client.image.exists(imageName))) {
    try {
      log(`pulling ${opts.image}`);
      await client.image.pull(imageName);
    } catch (e) {
      throw new ContainerError(`image ${opts.image} is not on the engine and could not be pulled: ${firstLine(e)}`);
    }
  }
  const labels = (await client.image.inspect(imageName)).Config?.Labels ?? {};
  const reference = labels[REFERENCE_LABEL] === '1';

  const host = opts.network === 'host';
  // The engine's host as testcontainers resolves it (TESTCONTAINERS_HOST_OVERRIDE, DOCKER_HOST, ...).
  const engineHost = client.info.containerRuntime.host;
  const local = /^(localhost|127\.[\d.]+|::1|\[::1\])$/.test(engineHost);
  // On the host network the container's port is a host port: the reference image is told to
  // listen on a free port (PORT) of loopback when the engine is local (PMV6_HOST), so runs do not
  // collide and nothing listens beyond loopback; any other image listens where it listens
  // (--container-port, default 80).
  const containerPort = opts.containerPort ?? (host && reference && local ? await freePort() : 80);
  const env: Record<string, string> = {};
  let user = opts.user;
  let password = opts.password;
  let controlToken = opts.controlToken;
  if (reference) {
    user ??= given.PMV6_ADMIN_USER ?? 'admin';
    password ??= given.PMV6_ADMIN_PASSWORD ?? randomBytes(18).toString('base64url');
    controlToken ??= given.PMV6_CONTROL_TOKEN ?? randomBytes(24).toString('base64url');
    Object.assign(env, { PMV6_ADMIN_USER: user, PMV6_ADMIN_PASSWORD: password, PMV6_CONTROL_TOKEN: controlToken, PORT: String(containerPort) });
    if (host && local) env.PMV6_HOST = '127.0.0.1';
  } else if (!user || !password) {
    throw new ContainerOptionError(
      '--image needs the admin credentials of the installation in the container: --user and --password (or PMV6_USER and PMV6_PASSWORD); only the pmv6 reference image is configured automatically',
    );
  }
  registerSecret(password, 'admin password');
  if (controlToken) registerSecret(controlToken, 'control token');
  Object.assign(env, given);

  // Decision: every container of this start carries a label of its own, so that whatever the
  // engine created is found and removed after any failure, also one testcontainers gave up on
  // half-way (created but not started, started but its ports never bound).
  const runLabel = randomBytes(8).toString('hex');
  const docker = client.container.dockerode;
  const sweep = () =>
    within(ENGINE_DEADLINE_MS, 'removing the containers of this start', async () => {
      const left = await docker.listContainers({ all: true, filters: { label: [`${RUN_LABEL}=${runLabel}`] } });
      await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true })));
    });

  // Docker's default network is "bridge"; an engine started with --bridge=none has none, and a
  // container created there runs without network, its port never published (testcontainers then
  // waits 10 s and says only that the ports were not bound).
  if (!opts.network && !(await within(ENGINE_DEADLINE_MS, "listing the engine's networks", () => docker.listNetworks())).some((n) => n.Name === 'bridge')) {
    throw new ContainerError(
      `the container engine has no "bridge" network (dockerd --bridge=none?), so no port of the container can be published: add --network host`,
    );
  }

  let container = new tc.GenericContainer(opts.image)
    .withEnvironment(env)
    .withLabels({ 'io.pmv6.run': 'true', [RUN_LABEL]: runLabel })
    .withWaitStrategy(new NoWait())
    .withPullPolicy({ shouldPull: () => false });
  container = host ? container.withNetworkMode('host') : container.withExposedPorts(containerPort);
  if (opts.network && !host) container = container.withNetworkMode(opts.network);

  const started = Date.now();
  // Guarded from before the start: a signal while the engine creates the container waits for the
  // start to settle (bounded), then removes what it created.
  const guard = removeOnExit(runLabel);
  let running: Awaited<ReturnType<typeof container.start>> | undefined;
  const starting = container.start();
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      await Promise.race([starting.catch(() => {}), new Promise((r) => setTimeout(r, 15_000).unref())]);
      try {
        if (running) await within(ENGINE_DEADLINE_MS, 'stopping the container', () => running!.stop({ remove: true, timeout: 2_000 })).catch(() => {});
        await sweep();
      } catch {
        removeByLabel(runLabel);
      } finally {
        guard.dispose();
      }
    })();
    return closed;
  };
  guard.onSignal(close);
  try {
    running = await starting;
  } catch (e) {
    await close();
    throw new ContainerError(`could not start a container of ${opts.image}: the engine said: ${engineReason(e)}${host ? '' : '; --network host may help'}`);
  }
  const id = running.getId();

  try {
    const address = local ? '127.0.0.1' : urlHost(running.getHost());
    const origin = `http://${address}:${host ? containerPort : running.getMappedPort(containerPort)}`;
    const target = `${origin}${basePath.slice(0, -1)}`;
    const waitUrl = `${origin}${opts.waitPath ?? `${basePath}index.php/api/v6/version.json`}`;
    log(`container ${id.slice(0, 12)} of ${opts.image}${reference ? ' (pmv6 reference server)' : ''}: waiting for ${waitUrl}`);
    await waitForHttp(waitUrl, opts.startupTimeoutMs ?? 60_000, async () => {
      const info = await within(ENGINE_DEADLINE_MS, 'inspecting the container', () => client.container.getById(id).inspect());
      if (info.State.Running) return undefined;
      const tail = await logTail(client.container.getById(id));
      return `the container exited with code ${info.State.ExitCode}${tail ? `; its last output: ${tail}` : ''}`;
    });
    return {
      config: {
        target,
        user: user!,
        password: password!,
        ...(controlToken ? { control: { url: `${target}/__control`, token: controlToken } } : {}),
      },
      containerId: id,
      reference,
      startupMs: Date.now() - started,
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

async function waitForHttp(url: string, timeoutMs: number, exited: () => Promise<string | undefined>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await res.body?.cancel();
      return; // any HTTP answer: the server is up (version.json may well say 401 unauthenticated)
    } catch (e) {
      last = firstLine((e as { cause?: unknown }).cause ?? e);
    }
    const why = await exited().catch(() => undefined);
    if (why) throw new ContainerError(scrub(`the container did not answer at ${url}: ${why}`));
    if (Date.now() > deadline)
      throw new ContainerError(
        `the container did not answer at ${url} within ${Math.round(timeoutMs / 1000)} s (${last}); check --container-port, --base-path and --wait-path`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function logTail(container: { logs(opts: { stdout: boolean; stderr: boolean; tail: number; follow: false }): Promise<Buffer> }): Promise<string> {
  try {
    const buf = await within(ENGINE_DEADLINE_MS, "reading the container's output", () =>
      container.logs({ stdout: true, stderr: true, tail: 5, follow: false }),
    );
    // Without a TTY the stream is multiplexed: 8-byte frame headers before each chunk.
    let text = '';
    for (let i = 0; i + 8 <= buf.length; ) {
      const len = buf.readUInt32BE(i + 4);
      text += buf.subarray(i + 8, i + 8 + len).toString('utf8');
      i += 8 + len;
    }
    return text.trim().split('\n').slice(-3).join(' | ').slice(0, 500);
  } catch {
    return '';
  }
}

/** Readiness is pmv6's own HTTP poll (works on every network mode); testcontainers only starts. */
class NoWait {
  private timeout = 60_000;
  async waitUntilReady(): Promise<void> {}
  withStartupTimeout(ms: number): this {
    this.timeout = ms;
    return this;
  }
  isStartupTimeoutSet(): boolean {
    return true;
  }
  getStartupTimeout(): number {
    return this.timeout;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// While the container runs: SIGINT/SIGTERM stop and remove it and exit 130/143 (unless someone
// else handles the signal), and an exit with it still running removes it synchronously through
// the docker CLI (best effort, for a second signal or a crash: Ryuk may be disabled).
function removeOnExit(runLabel: string): { onSignal(close: () => Promise<void>): void; dispose(): void } {
  const onExit = () => removeByLabel(runLabel);
  const handlers: Array<[NodeJS.Signals, () => void]> = [];
  process.once('exit', onExit);
  return {
    onSignal(close) {
      for (const [signal, code] of [
        ['SIGINT', 130],
        ['SIGTERM', 143],
      ] as const) {
        // Listeners already there (libraries' exit hooks such as signal-exit's) do not count.
        const before = new Set(process.listeners(signal));
        const handler = () => {
          // Someone who came later handles the signal (pmv6 run, during the suites: it stops the
          // run and cleans up, then closes the container): leave it to them; the exit hook stays.
          if (process.listeners(signal).some((l) => !before.has(l))) return;
          process.stderr.write(`pmv6: ${signal}: stopping and removing the container\n`);
          void close().finally(() => process.exit(code));
        };
        process.once(signal, handler);
        handlers.push([signal, handler]);
      }
    },
    dispose() {
      process.off('exit', onExit);
      for (const [signal, handler] of handlers) process.off(signal, handler);
    },
  };
}

/** Synchronously, through the docker CLI (best effort: at exit, or when the engine's API failed). */
/** The deadline of one call to the container engine that is not the start itself. */
const ENGINE_DEADLINE_MS = 30_000;

/** `fn`'s result, or an error naming `what` when the engine has not answered within `ms`. */
async function within<T>(ms: number, what: string, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ContainerError(`the container engine did not answer within ${ms / 1000} s (${what})`)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([fn(), late]);
  } finally {
    clearTimeout(timer);
  }
}

function removeByLabel(runLabel: string): void {
  const ids = spawnSync('docker', ['ps', '-aq', '--filter', `label=${RUN_LABEL}=${runLabel}`], { encoding: 'utf8', timeout: 30_000 }).stdout ?? '';
  const list = ids.split('\n').filter(Boolean);
  if (list.length > 0) spawnSync('docker', ['rm', '-f', ...list], { stdio: 'ignore', timeout: 30_000 });
}

/** The engine's own words: dockerode puts them in json.message, after "(HTTP code N) …". */
function engineReason(e: unknown): string {
  const json = (e as { json?: { message?: unknown } } | undefined)?.json;
  return (typeof json?.message === 'string' ? json.message : firstLine(e)).split('\n')[0]!.slice(0, 300);
}

function urlHost(h: string): string {
  return h.includes(':') && !h.startsWith('[') ? `[${h}]` : h;
}

function firstLine(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return (message.split('\n')[0] ?? '').slice(0, 300);
}
