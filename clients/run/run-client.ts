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
import { type ScenarioName, SLOW_MAX_MS } from '../scenarios.ts';
import { crashTrace, DEFAULT_EXPECTATIONS, type Expectation, hideSecrets, type ListRead, LOOP_THRESHOLD, listRead, unwalkedLists } from './expectations.ts';

export interface ClientRunOptions {
  command: string[];
  scenarios: readonly ScenarioName[];
  /** Per scenario; the defaults of expectations.ts otherwise. */
  expect?: Partial<Record<ScenarioName, Expectation>>;
  /** How long one run of the command may take (default 20 s); past it the command is killed: it hung. */
  deadlineMs?: number;
  /** Passwords in the seeded project (default 45: three pages of the product's default 20). */
  passwords?: number;
  /** Told of each scenario's result as it ends. */
  progress?: (r: ScenarioResult) => void;
}

export interface Check {
  what: string;
  held: boolean;
  detail?: string;
}

export interface ScenarioResult {
  scenario: ScenarioName;
  expectation: Expectation;
  exitCode: number | null;
  signal: string | null;
  ms: number;
  hung: boolean;
  /** The last lines of its stdout and stderr, redacted. */
  output: string[];
  requests: number;
  /** The requests it sent, in order (method, redacted path and query, status), at most 100. */
  sent: Array<{ method: string; target: string; status: number | null }>;
  /** Client-clause findings of the kit on the requests of this run (clause and what was seen). */
  findings: Array<Pick<StoredFinding, 'clause' | 'level' | 'method' | 'target' | 'expected' | 'actual'>>;
  checks: Check[];
  held: boolean;
}

export interface ClientRunResult {
  command: string;
  base: string;
  deadlineMs: number;
  scenarios: ScenarioResult[];
  kitErrors: string[];
  /** 0 every expectation held and no MUST finding, 1 otherwise, 3 a fault of the kit. */
  exitCode: 0 | 1 | 3;
}

const OUTPUT_BYTES = 64 * 1024;
const OUTPUT_LINES = 20;
const SENT_SHOWN = 100;

export async function runClient(opts: ClientRunOptions): Promise<ClientRunResult> {
  const token = randomBytes(16).toString('hex');
  const kit = await createClientKit({ adminPassword: randomBytes(12).toString('base64url'), controlToken: token });
  const deadlineMs = opts.deadlineMs ?? 20_000;
  try {
    const base = await kit.listen({ host: '127.0.0.1', port: 0 });
    const account = await makeAccount(base, token);
    registerSecret(account.basic.password, 'password');
    const projectId = await seed(kit, account.basic, opts.passwords ?? 45);
    const env = {
      PMV6_BASE_URL: base,
      PMV6_API_URL: `${base}/index.php/api/v6/`,
      PMV6_USER: account.basic.user,
      PMV6_PASSWORD: account.basic.password,
      PMV6_HMAC_PUBLIC: account.hmac.publicKey,
      PMV6_HMAC_PRIVATE: account.hmac.privateKey,
      PMV6_PROJECT_ID: String(projectId),
    };
    const scenarios: ScenarioResult[] = [];
    const kitErrors: string[] = [];
    for (const scenario of opts.scenarios) {
      const r = await oneScenario(kit, opts.command, scenario, opts.expect?.[scenario] ?? DEFAULT_EXPECTATIONS[scenario], env, deadlineMs);
      kitErrors.push(...r.kitErrors);
      scenarios.push(r.result);
      opts.progress?.(r.result);
    }
    const failed = scenarios.some((s) => !s.held);
    return { command: scrub(opts.command.join(' ')), base, deadlineMs, scenarios, kitErrors, exitCode: kitErrors.length > 0 && !failed ? 3 : failed ? 1 : 0 };
  } finally {
    await kit.close();
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

async function oneScenario(
  kit: ClientKit,
  command: string[],
  scenario: ScenarioName,
  expectation: Expectation,
  baseEnv: Record<string, string>,
  deadlineMs: number,
): Promise<{ result: ScenarioResult; kitErrors: string[] }> {
  kit.reset();
  kit.setScenario(scenario === 'normal' ? undefined : { name: scenario, ...(scenario === 'slow' ? { delayMs: SLOW_MAX_MS } : {}) });
  const exchanges: KitExchange[] = [];
  const unsubscribe = kit.observe((ex) => exchanges.push(ex));
  let run: Awaited<ReturnType<typeof execute>>;
  try {
    run = await execute(command, { ...process.env, ...baseEnv, PMV6_SCENARIO: scenario }, deadlineMs);
  } finally {
    unsubscribe();
    kit.setScenario(undefined);
  }
  const snapshot = kit.snapshot();
  const findings = snapshot.clients.flatMap((c) =>
    c.examples.map((f) => ({ clause: f.clause, level: f.level, method: f.method, target: f.target, expected: f.expected, actual: f.actual })),
  );
  const output = `${run.stdout}\n${run.stderr}`;
  const checks: Check[] = [];
  const secretFree = hideSecrets(output) === output;
  checks.push({
    what: 'prints no secret (a password, a key, a password it sent)',
    held: secretFree,
    ...(secretFree ? {} : { detail: 'a secret in its output (shown redacted)' }),
  });
  checks.push({
    what: `ends within the deadline (${deadlineMs / 1000} s)`,
    held: !run.hung,
    ...(run.hung ? { detail: `still running after ${deadlineMs / 1000} s: killed (no timeout of its own?)` } : {}),
  });
  const counts = new Map<string, number>();
  for (const ex of exchanges) counts.set(`${ex.method} ${ex.rawUrl}`, (counts.get(`${ex.method} ${ex.rawUrl}`) ?? 0) + 1);
  const loop = [...counts].find(([, n]) => n >= LOOP_THRESHOLD);
  checks.push({
    what: `repeats no request ${LOOP_THRESHOLD} times or more`,
    held: loop === undefined,
    ...(loop ? { detail: `${scrub(loop[0])} sent ${loop[1]} times` } : {}),
  });
  const trace = crashTrace(output);
  if (expectation === 'succeeds') {
    checks.push({ what: 'exits 0', held: run.code === 0, ...(run.code === 0 ? {} : { detail: `exit ${run.code ?? run.signal}` }) });
    checks.push({ what: 'prints no crash trace', held: trace === undefined, ...(trace ? { detail: trace } : {}) });
    const reads = exchanges
      .filter((ex) => ex.method === 'GET')
      .map((ex) => listRead(ex.apiPath, ex.status, ex.reply?.headers, ex.reply?.body))
      .filter((r): r is ListRead => r !== undefined);
    const unwalked = unwalkedLists(reads);
    checks.push({
      what: 'reads every page of each list it reads',
      held: unwalked.length === 0,
      ...(unwalked.length
        ? { detail: unwalked.map((u) => `${u.list}: read page(s) ${u.read.join(', ')} of ${u.last} (the Link header named the next one)`).join('; ') }
        : {}),
    });
  } else if (expectation === 'fails-cleanly') {
    const failedRun = run.code !== 0 && !run.hung;
    checks.push({
      what: 'fails (a non-zero exit), not an empty or partial result',
      held: failedRun,
      ...(failedRun ? {} : { detail: run.hung ? 'it hung' : 'exit 0: the error was swallowed' }),
    });
    checks.push({ what: 'prints no crash trace', held: trace === undefined, ...(trace ? { detail: trace } : {}) });
    const messages = new Set(exchanges.map((ex) => messageOf(ex.reply?.body)).filter((m): m is string => m !== undefined));
    const shown = [...messages].some((m) => output.toLowerCase().includes(m.toLowerCase()));
    if (messages.size > 0)
      checks.push({
        what: "shows the server's error message",
        held: shown,
        ...(shown ? {} : { detail: `none of ${[...messages].map((m) => JSON.stringify(m)).join(', ')} in its output` }),
      });
  } else if (expectation === 'gives-up') {
    // The deadline check above is the expectation itself: a client without a timeout hangs.
  }
  const kitFindings = findings.filter((f) => f.level === 'MUST');
  checks.push({
    what: 'raises no MUST finding of the client clauses',
    held: kitFindings.length === 0,
    ...(kitFindings.length ? { detail: kitFindings.map((f) => `${f.clause} on ${f.method} ${f.target}: ${f.actual}`).join('; ') } : {}),
  });
  const lines = hideSecrets(output)
    .split('\n')
    .map((l) => l.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`))
    .filter((l) => l.trim() !== '');
  return {
    result: {
      scenario,
      expectation,
      exitCode: run.code,
      signal: run.signal,
      ms: run.ms,
      hung: run.hung,
      output: lines.slice(-OUTPUT_LINES),
      requests: exchanges.length,
      sent: exchanges.slice(0, SENT_SHOWN).map((ex) => ({ method: ex.method, target: hideSecrets(redactUrl(ex.rawUrl)), status: ex.status })),
      findings,
      checks,
      held: checks.every((c) => c.held),
    },
    kitErrors: snapshot.kitErrors,
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

/** Runs the command in its own process group; past the deadline the whole group is killed. */
function execute(command: string[], env: NodeJS.ProcessEnv, deadlineMs: number) {
  return new Promise<{ code: number | null; signal: string | null; ms: number; hung: boolean; stdout: string; stderr: string }>((resolve) => {
    const started = Date.now();
    let hung = false;
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
    const timer = setTimeout(() => {
      hung = true;
      killGroup('SIGTERM');
      setTimeout(() => killGroup('SIGKILL'), 2_000).unref();
    }, deadlineMs);
    child.stdout.on('data', (d: Buffer) => (stdout = keep(stdout, d)));
    child.stderr.on('data', (d: Buffer) => (stderr = keep(stderr, d)));
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ code: 127, signal: null, ms: Date.now() - started, hung: false, stdout, stderr: `${stderr}\npmv6: cannot start ${command[0]}: ${e.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, ms: Date.now() - started, hung, stdout, stderr });
    });
  });
}
