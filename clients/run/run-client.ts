/**
 * `pmv6 clients run -- <command>`: the kit runs the client itself, once per scenario, as h2specd
 * runs an HTTP/2 client (`-e`), and judges what the command did (its exit, its output, its time)
 * together with the requests it sent. README.md beside this file.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { redactUrl, registerSecret, scrub } from '../../core/redact.ts';
import { formatDateTime } from '../../fixtures/reference-server/src/context.ts';
import { makeAccount } from '../kill-matrix.ts';
import { type ClientKit, createClientKit, type KitExchange } from '../kit.ts';
import type { StoredFinding } from '../ledger.ts';
import type { ScenarioName } from '../scenarios.ts';
import {
  type CheckId,
  crashTrace,
  DEFAULT_EXPECTATIONS,
  type Expectation,
  hideSecrets,
  type ListRead,
  LOOP_THRESHOLD,
  listRead,
  secretLines,
  slowHoldMs,
  unwalkedLists,
} from './expectations.ts';

export interface ClientRunOptions {
  command: string[];
  scenarios: readonly ScenarioName[];
  /** Per scenario; the defaults of expectations.ts otherwise. */
  expect?: Partial<Record<ScenarioName, Expectation>>;
  /**
   * How long one request may stay unanswered before the command must have given up on it (default
   * 20 s); a request held that long with its connection still open is a hang, and the command is
   * killed. Judged per request: a command may take longer in all.
   */
  deadlineMs?: number;
  /** How long one run of the command may take in all (default 300 s); past it, it is killed. */
  maxMs?: number;
  /** Scenarios run at once, each against a kit of its own (default 1). */
  jobs?: number;
  /** Bearer token of the control protocols, given to the command (default: generated). */
  controlToken?: string;
  /** Passwords in the seeded project (default 45: three pages of the product's default 20). */
  passwords?: number;
  /** Told of each scenario's result as it ends. */
  progress?: (r: ScenarioResult) => void;
}

/** An output line a check stands on: its number in the command's output, redacted. */
export interface OutputLine {
  n: number;
  text: string;
}

export interface Check {
  /** Which check (a column of the report's matrix, CHECKS of expectations.ts). */
  id: CheckId;
  what: string;
  held: boolean;
  detail?: string;
  /** The output lines the finding stands on (a printed secret, a crash trace), redacted. */
  lines?: OutputLine[];
}

/** One request of the command, as the report shows it. */
export interface SentRequest {
  method: string;
  /** Path and query, redacted. */
  target: string;
  /** The kit's status; null when it never answered. */
  status: number | null;
  /** How it ended when not by an answer: the client gave up on it, the kit cut it mid-body, or still held when the command ended. */
  end?: 'gave up' | 'cut mid-body' | 'held' | 'killed while waiting';
  /** From the request's arrival to its answer or its end. */
  ms?: number;
}

export interface ScenarioResult {
  scenario: ScenarioName;
  expectation: Expectation;
  exitCode: number | null;
  signal: string | null;
  ms: number;
  hung: boolean;
  /** The last lines of its stdout and stderr, redacted, control characters escaped. */
  output: string[];
  /** How many non-empty lines it printed in all. */
  outputLines: number;
  requests: number;
  /** The requests it sent, in order (method, redacted path and query, status), at most 100. */
  sent: SentRequest[];
  /** Client-clause findings of the kit on the requests of this run (clause and what was seen). */
  findings: Array<Pick<StoredFinding, 'clause' | 'level' | 'method' | 'target' | 'expected' | 'actual'>>;
  checks: Check[];
  held: boolean;
}

export interface ClientRunResult {
  /** When the first scenario started (ISO 8601). */
  startedAt: string;
  command: string;
  base: string;
  deadlineMs: number;
  maxMs: number;
  scenarios: ScenarioResult[];
  kitErrors: string[];
  /** 0 every expectation held and no MUST finding, 1 otherwise, 3 a fault of the kit. */
  exitCode: 0 | 1 | 3;
}

const OUTPUT_BYTES = 64 * 1024;
const OUTPUT_LINES = 20;
const SENT_SHOWN = 100;
/** Lines a check may quote from the output. */
const EVIDENCE_LINES = 10;

interface Prepared {
  kit: ClientKit;
  base: string;
  env: Record<string, string>;
}

async function prepare(token: string, passwords: number): Promise<Prepared> {
  const kit = await createClientKit({ adminPassword: randomBytes(12).toString('base64url'), controlToken: token });
  try {
    const base = await kit.listen({ host: '127.0.0.1', port: 0 });
    const account = await makeAccount(base, token);
    registerSecret(account.basic.password, 'password');
    const projectId = await seed(kit, account.basic, passwords);
    const env = {
      PMV6_BASE_URL: base,
      PMV6_API_URL: `${base}/index.php/api/v6/`,
      PMV6_USER: account.basic.user,
      PMV6_PASSWORD: account.basic.password,
      PMV6_HMAC_PUBLIC: account.hmac.publicKey,
      PMV6_HMAC_PRIVATE: account.hmac.privateKey,
      PMV6_PROJECT_ID: String(projectId),
      PMV6_CONTROL_URL: `${base}/__control`,
      PMV6_CONTROL_TOKEN: token,
    };
    return { kit, base, env };
  } catch (e) {
    await kit.close();
    throw e;
  }
}

export async function runClient(opts: ClientRunOptions): Promise<ClientRunResult> {
  const token = opts.controlToken || randomBytes(16).toString('hex');
  const deadlineMs = opts.deadlineMs ?? 20_000;
  const maxMs = opts.maxMs ?? 300_000;
  const jobs = Math.max(1, Math.min(opts.jobs ?? 1, opts.scenarios.length));
  const kits: Prepared[] = [];
  const startedAt = new Date().toISOString();
  try {
    for (let i = 0; i < jobs; i++) kits.push(await prepare(token, opts.passwords ?? 45));
    const results: ScenarioResult[] = new Array(opts.scenarios.length);
    const kitErrors: string[] = [];
    let next = 0;
    await Promise.all(
      kits.map(async (k) => {
        while (next < opts.scenarios.length) {
          const i = next++;
          const scenario = opts.scenarios[i]!;
          const r = await oneScenario(k.kit, opts.command, scenario, opts.expect?.[scenario] ?? DEFAULT_EXPECTATIONS[scenario], k.env, deadlineMs, maxMs);
          kitErrors.push(...r.kitErrors);
          results[i] = r.result;
          opts.progress?.(r.result);
        }
      }),
    );
    const failed = results.some((s) => !s.held);
    return {
      startedAt,
      command: scrub(opts.command.join(' ')),
      base: kits[0]!.base,
      deadlineMs,
      maxMs,
      scenarios: results,
      kitErrors,
      exitCode: kitErrors.length > 0 && !failed ? 3 : failed ? 1 : 0,
    };
  } finally {
    await Promise.all(kits.map((k) => k.kit.close()));
  }
}

/**
 * A project with `n` passwords, so that lists have several pages; made before the first
 * scenario (each scenario starts from a reset ledger, so these requests are no client's).
 */
async function seed(kit: ClientKit, admin: { user: string; password: string }, n: number): Promise<number> {
  const { server } = kit;
  const created = await server.app.inject({
    method: 'POST',
    url: '/index.php/api/v6/projects.json',
    headers: { authorization: `Basic ${Buffer.from(`${admin.user}:${admin.password}`).toString('base64')}`, 'content-type': 'application/json; charset=utf-8' },
    payload: JSON.stringify({ name: 'pmv6-client-run', parent_id: 0 }),
  });
  if (created.statusCode !== 201) throw new Error(`seeding the kit: creating a project answered ${created.statusCode}`);
  const id = (created.json() as { id: number }).id;
  server.store.passwords.seed(id, n, server.adminId, formatDateTime(Date.now()), () => null, 'pmv6-client-run-');
  return id;
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;

/** The key under which identical requests are counted: method, URL and body. */
function requestKey(ex: KitExchange): string {
  const body = ex.bodyDigest ?? (ex.contentLength === undefined || ex.contentLength === '0' ? '' : `unread:${ex.contentLength}`);
  return `${ex.method} ${ex.rawUrl} ${body}`;
}

/** What the command may print for a reply to count as showing it: the error object's message, or the status of an HTML page. */
function shownBy(ex: KitExchange): string[] {
  const body = ex.reply?.body;
  if (ex.cut || body === undefined || ex.status === null || ex.status < 400) return [];
  const message = messageOf(body);
  if (message !== undefined) return [message];
  const title = /<title>([^<]*)<\/title>/i.exec(body)?.[1]?.trim();
  return [String(ex.status), ...(title ? [title] : [])];
}

async function oneScenario(
  kit: ClientKit,
  command: string[],
  scenario: ScenarioName,
  expectation: Expectation,
  baseEnv: Record<string, string>,
  deadlineMs: number,
  maxMs: number,
): Promise<{ result: ScenarioResult; kitErrors: string[] }> {
  kit.reset();
  kit.setScenario(scenario === 'normal' ? undefined : { name: scenario, ...(scenario === 'slow' ? { delayMs: slowHoldMs(deadlineMs) } : {}) });
  const exchanges: KitExchange[] = [];
  const unsubscribe = kit.observe((ex) => exchanges.push(ex));
  let hungOn: string | undefined;
  let run: Awaited<ReturnType<typeof execute>>;
  try {
    run = await execute(command, { ...process.env, ...baseEnv, PMV6_SCENARIO: scenario }, maxMs, () => {
      const now = Date.now();
      const held = exchanges.find((ex) => ex.status === null && ex.endedAt === undefined && now - ex.at >= deadlineMs);
      if (held !== undefined) hungOn = `${held.method} ${hideSecrets(redactUrl(held.rawUrl))}`;
      return held !== undefined;
    });
  } finally {
    unsubscribe();
    kit.setScenario(undefined);
  }
  const snapshot = kit.snapshot();
  const findings = snapshot.clients.flatMap((c) =>
    c.examples.map((f) => ({ clause: f.clause, level: f.level, method: f.method, target: f.target, expected: f.expected, actual: f.actual })),
  );
  const output = `${run.stdout}\n${run.stderr}`;
  const escapeControls = (l: string) => l.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  const numbered: OutputLine[] = hideSecrets(output)
    .split('\n')
    .map((text, i) => ({ n: i + 1, text: escapeControls(text) }));
  const checks: Check[] = [];
  const secrets = secretLines(output).map((l) => ({ n: l.n, text: escapeControls(l.text) }));
  checks.push({
    id: 'secret',
    what: 'prints no secret (a password, a key, a password it sent)',
    held: secrets.length === 0,
    ...(secrets.length
      ? {
          detail: `a secret on line${secrets.length > 1 ? 's' : ''} ${secrets.map((l) => l.n).join(', ')} of its output (shown redacted)`,
          lines: secrets.slice(0, EVIDENCE_LINES),
        }
      : {}),
  });
  const tooLong = run.killed && hungOn === undefined;
  checks.push({
    id: 'hang',
    what: `gives up on a reply held ${seconds(deadlineMs)} (a timeout of its own)`,
    held: hungOn === undefined,
    ...(hungOn ? { detail: `${hungOn} still waiting after ${seconds(deadlineMs)}: killed (no timeout of its own?)` } : {}),
  });
  checks.push({
    id: 'max-time',
    what: `ends within ${seconds(maxMs)} in all`,
    held: !tooLong,
    ...(tooLong ? { detail: `still running after ${seconds(maxMs)}: killed` } : {}),
  });
  const counts = new Map<string, { n: number; ex: KitExchange }>();
  for (const ex of exchanges) {
    const key = requestKey(ex);
    const e = counts.get(key) ?? { n: 0, ex };
    e.n++;
    counts.set(key, e);
  }
  const loop = [...counts.values()].find((e) => e.n >= LOOP_THRESHOLD);
  checks.push({
    id: 'loop',
    what: `repeats no request ${LOOP_THRESHOLD} times or more (method, URL and body)`,
    held: loop === undefined,
    ...(loop ? { detail: `${loop.ex.method} ${hideSecrets(redactUrl(loop.ex.rawUrl))} sent ${loop.n} times with the same body` } : {}),
  });
  const trace = crashTrace(output);
  const traceCheck = (): Check => {
    if (trace === undefined) return { id: 'crash', what: 'prints no crash trace', held: true };
    // The trace's first line, and the lines before it that name the error (Node.js and Java print the message first).
    const at = Math.max(
      numbered.findIndex((l) => trace.re.test(l.text)),
      0,
    );
    const before = numbered
      .slice(0, at)
      .filter((l) => l.text.trim() !== '')
      .slice(-4);
    const after = numbered.slice(at).filter((l) => l.text.trim() !== '');
    return { id: 'crash', what: 'prints no crash trace', held: false, detail: trace.name, lines: [...before, ...after].slice(0, EVIDENCE_LINES) };
  };
  const hung = hungOn !== undefined || tooLong;
  if (expectation === 'succeeds') {
    checks.push({ id: 'exit', what: 'exits 0', held: run.code === 0, ...(run.code === 0 ? {} : { detail: `exit ${run.code ?? run.signal}` }) });
    checks.push(traceCheck());
    const reads = exchanges
      .filter((ex) => ex.method === 'GET' && !ex.cut)
      .map((ex) => listRead(ex.apiPath, ex.status, ex.reply?.headers, ex.reply?.body))
      .filter((r): r is ListRead => r !== undefined);
    const unwalked = unwalkedLists(reads);
    checks.push({
      id: 'walk',
      what: 'reads every page of each list it reads',
      held: unwalked.length === 0,
      ...(unwalked.length
        ? { detail: unwalked.map((u) => `${u.list}: read page(s) ${u.read.join(', ')} of ${u.last} (the Link header named the next one)`).join('; ') }
        : {}),
    });
  } else if (expectation === 'fails-cleanly') {
    const failedRun = run.code !== 0 && !hung;
    checks.push({
      id: 'exit',
      what: 'fails (a non-zero exit), not an empty or partial result',
      held: failedRun,
      ...(failedRun ? {} : { detail: hung ? 'it hung' : 'exit 0: the error was swallowed' }),
    });
    checks.push(traceCheck());
    const shown = new Map<string, string[]>();
    for (const ex of exchanges) {
      const forms = shownBy(ex);
      if (forms.length > 0) shown.set(forms.join('\0'), forms);
    }
    const lower = output.toLowerCase();
    const showsOne = [...shown.values()].some((forms) => forms.some((f) => lower.includes(f.toLowerCase())));
    if (shown.size > 0)
      checks.push({
        id: 'message',
        what: "shows the server's error (its message, or the status of an HTML page)",
        held: showsOne,
        ...(showsOne
          ? {}
          : { detail: `none of ${[...shown.values()].map((forms) => forms.map((f) => JSON.stringify(f)).join(' or ')).join(', ')} in its output` }),
      });
    else if (exchanges.length > 0) {
      const said = numbered.some((l) => l.text.trim() !== '');
      checks.push({ id: 'message', what: 'says why it failed (prints a message)', held: said, ...(said ? {} : { detail: 'it printed nothing' }) });
    }
  } else if (expectation === 'gives-up') {
    // The per-request check above is the expectation itself: a client without a timeout hangs.
  }
  const kitFindings = findings.filter((f) => f.level === 'MUST');
  checks.push({
    id: 'clauses',
    what: 'raises no MUST finding of the client clauses',
    held: kitFindings.length === 0,
    ...(kitFindings.length ? { detail: kitFindings.map((f) => `${f.clause} on ${f.method} ${f.target}: ${f.actual}`).join('; ') } : {}),
  });
  const lines = numbered.filter((l) => l.text.trim() !== '');
  return {
    result: {
      scenario,
      expectation,
      exitCode: run.code,
      signal: run.signal,
      ms: run.ms,
      hung,
      output: lines.slice(-OUTPUT_LINES).map((l) => l.text),
      outputLines: lines.length,
      requests: exchanges.length,
      sent: exchanges.slice(0, SENT_SHOWN).map((ex) => sentOf(ex, run.killedAt)),
      findings,
      checks,
      held: checks.every((c) => c.held),
    },
    kitErrors: snapshot.kitErrors,
  };
}

function sentOf(ex: KitExchange, killedAt: number | undefined): SentRequest {
  const killed = killedAt !== undefined && ex.status === null && (ex.endedAt === undefined || ex.endedAt >= killedAt);
  const end = ex.cut ? 'cut mid-body' : killed ? 'killed while waiting' : ex.abandoned ? 'gave up' : ex.status === null ? 'held' : undefined;
  return {
    method: ex.method,
    target: hideSecrets(redactUrl(ex.rawUrl)),
    status: ex.status,
    ...(end ? { end } : {}),
    ...(ex.endedAt !== undefined ? { ms: ex.endedAt - ex.at } : {}),
  };
}

function messageOf(body: string | undefined): string | undefined {
  if (body === undefined || !body.trimStart().startsWith('{')) return undefined;
  try {
    const m = (JSON.parse(body) as { message?: unknown }).message;
    return typeof m === 'string' && m.trim() !== '' ? m : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs the command in its own process group; the whole group is killed past `maxMs`, or as soon
 * as `hung()` says so (checked every 100 ms).
 */
function execute(command: string[], env: NodeJS.ProcessEnv, maxMs: number, hung: () => boolean) {
  return new Promise<{ code: number | null; signal: string | null; ms: number; killed: boolean; killedAt?: number; stdout: string; stderr: string }>(
    (resolve) => {
      const started = Date.now();
      let killed = false;
      let killedAt: number | undefined;
      let stdout = '';
      let stderr = '';
      const keep = (s: string, d: Buffer) => (s + d.toString('utf8')).slice(-OUTPUT_BYTES);
      const child = spawn(command[0]!, command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      const killGroup = (signal: NodeJS.Signals) => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, signal);
        } catch {
          // already gone
        }
      };
      const kill = () => {
        if (killed) return;
        killed = true;
        killedAt = Date.now();
        killGroup('SIGTERM');
        setTimeout(() => killGroup('SIGKILL'), 2_000).unref();
      };
      const timer = setTimeout(kill, maxMs);
      const watch = setInterval(() => {
        if (hung()) kill();
      }, 100);
      const stop = () => {
        clearTimeout(timer);
        clearInterval(watch);
      };
      child.stdout.on('data', (d: Buffer) => (stdout = keep(stdout, d)));
      child.stderr.on('data', (d: Buffer) => (stderr = keep(stderr, d)));
      child.on('error', (e) => {
        stop();
        resolve({
          code: 127,
          signal: null,
          ms: Date.now() - started,
          killed: false,
          stdout,
          stderr: `${stderr}\npmv6: cannot start ${command[0]}: ${e.message}`,
        });
      });
      child.on('close', (code, signal) => {
        stop();
        resolve({ code, signal, ms: Date.now() - started, killed, ...(killedAt !== undefined ? { killedAt } : {}), stdout, stderr });
      });
    },
  );
}
