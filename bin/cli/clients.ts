import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { DEFAULT_SCENARIOS, EXPECTATIONS, type Expectation } from '../../clients/run/expectations.ts';
import { parseScenario, SCENARIOS, type ScenarioName } from '../../clients/scenarios.ts';
import { UsageError } from '../../core/errors.ts';
import { registerCredentials, registerSecret, scrub } from '../../core/redact.ts';
import { forTerminal } from '../../reporters/terminal.ts';
import { CLIENT_CLAUSES } from '../../suites/catalogue/client-clauses.ts';
import { intOption, parse } from './args.ts';
import { checkOutputDir } from './paths.ts';

const HELP = `pmv6 clients: the client conformance kit

Usage:
  pmv6 clients serve [options]     run the reference server as the kit: it checks every request
                                   against the client clauses (pmv6 clients clauses) and serves
                                   scenarios; the client report is written when it stops
  pmv6 clients matrix [--report-dir DIR]
  pmv6 clients clauses [--json]     list the client clauses
  pmv6 clients run [options] -- COMMAND [ARGS...]
                                   run the client's COMMAND once per scenario against the kit
                                   and judge its exit, output, time and requests (clients/run/)
                                   the client kill matrix: the test client and its faulty variants

Options of serve:
  --host HOST              address to bind (default 127.0.0.1)
  --port PORT              port (default 8080; 0 picks a free one)
  --admin-user NAME        the admin's username (default admin)
  --admin-password P       the admin's password (or PMV6_ADMIN_PASSWORD; default: generated, printed once)
  --control-token T        bearer token of {base}/__control and {base}/__clients
                           (or PMV6_CONTROL_TOKEN; default: generated, printed once)
  --hmac-window SECONDS    accepted HMAC timestamp skew (default 300)
  --scenario NAME          start in this scenario (default normal; see below)
  --duration SECONDS       stop by itself after this long (default: until stopped)
  --report-dir DIR         write DIR/results.json, junit.xml and report.html when it stops
  --strict                 a SHOULD finding fails the run too
  --quiet                  print only the verdict line

Options of run (COMMAND gets PMV6_BASE_URL, PMV6_API_URL, PMV6_USER, PMV6_PASSWORD,
PMV6_HMAC_PUBLIC, PMV6_HMAC_PRIVATE, PMV6_PROJECT_ID, PMV6_CONTROL_URL, PMV6_CONTROL_TOKEN and
PMV6_SCENARIO in its environment):
  --scenarios LIST         comma-separated (default ${DEFAULT_SCENARIOS.join(',')})
  --expect S=E,...         what COMMAND must do under scenario S: ${EXPECTATIONS.join(', ')}
                           (defaults: clients/run/README.md)
  --deadline SECONDS       a request may stay unanswered this long; a client still waiting
                           then has no timeout of its own: it hung and is killed (default 20)
  --max-time SECONDS       one run of COMMAND may take this long in all (default 300)
  --jobs N                 run N scenarios at once, each against a kit of its own (default 1)
  --control-token T        the control token given to COMMAND (or PMV6_CONTROL_TOKEN; default: generated)
  --report-dir DIR         write DIR/client-run.json, report.html, summary.md and junit.xml

Stops on SIGINT, SIGTERM, POST {base}/__clients/stop or --duration; then prints the report.

Scenarios (PUT {base}/__clients/scenario {"name","path"?,"times"?,"delayMs"?} switches them):
${Object.entries(SCENARIOS)
  .map(([n, d]) => `  ${n.padEnd(24)} ${d}`)
  .join('\n')}

Exit codes (as for pmv6 run): 0 no finding, 1 a client broke a MUST clause, 2 usage error,
3 inconclusive (no request received, or a fault of the kit), 4 the kit could not start.
The matrix exits 0 when every variant is killed and the conforming client raises no finding, 1 otherwise.`;

async function pmv6Version(): Promise<string> {
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

async function serve(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    host: { type: 'string' },
    port: { type: 'string' },
    'admin-user': { type: 'string' },
    'admin-password': { type: 'string' },
    'control-token': { type: 'string' },
    'hmac-window': { type: 'string' },
    scenario: { type: 'string' },
    duration: { type: 'string' },
    'report-dir': { type: 'string' },
    strict: { type: 'boolean', default: false },
    quiet: { type: 'boolean', default: false },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const port = intOption('port', values.port, 0, 65535) ?? 8080;
  const hmacWindowSeconds = intOption('hmac-window', values['hmac-window'], 1, 86_400) ?? 300;
  const duration = intOption('duration', values.duration, 1, 7 * 86_400);
  const scenario = values.scenario === undefined ? undefined : parseScenario({ name: values.scenario });
  if (typeof scenario === 'string') throw new UsageError(`--scenario: ${scenario}`);
  const adminUser = values['admin-user'] ?? 'admin';
  const givenPassword = values['admin-password'] ?? process.env.PMV6_ADMIN_PASSWORD;
  const adminPassword = givenPassword || randomBytes(12).toString('base64url');
  const givenToken = values['control-token'] ?? process.env.PMV6_CONTROL_TOKEN;
  const controlToken = givenToken || randomBytes(16).toString('hex');
  registerCredentials(adminUser, adminPassword, 'admin password');
  registerSecret(controlToken, 'control token');

  // Loaded where used (package/test/startup-imports.test.ts): --help and a refused flag load no server or client.
  const { createClientKit } = await import('../../clients/kit.ts');
  let kit: Awaited<ReturnType<typeof createClientKit>> | undefined;
  let base: string;
  try {
    kit = await createClientKit({ adminUser, adminPassword, controlToken, hmacWindowSeconds, ...(scenario ? { scenario } : {}) });
    base = await kit.listen({ host: values.host ?? '127.0.0.1', port });
  } catch (e) {
    process.stderr.write(`pmv6 clients serve: could not start: ${(e as Error).message}\n`);
    await kit?.close().catch(() => {});
    return 4;
  }
  const out = process.stdout;
  out.write(`pmv6 client kit listening on ${base}\n`);
  out.write(`API base: ${base}/index.php/api/v6/\n`);
  out.write(`control: ${base}/__control (users, keys, settings) and ${base}/__clients (scenario, findings, reset, stop)\n`);
  if (!givenPassword) out.write(`admin user "${adminUser}" password (shown once): ${adminPassword}\n`);
  if (!givenToken) out.write(`control token (shown once): ${controlToken}\n`);
  if (scenario) out.write(`scenario: ${scenario.name}\n`);

  let timer: NodeJS.Timeout | undefined;
  const signals: Array<[NodeJS.Signals, () => void]> = [];
  await new Promise<void>((resolve) => {
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      const f = () => resolve();
      signals.push([sig, f]);
      process.once(sig, f);
    }
    kit.stopRequested.then(resolve, resolve);
    if (duration !== undefined) timer = setTimeout(resolve, duration * 1000);
  });
  if (timer) clearTimeout(timer);
  for (const [sig, f] of signals) process.removeListener(sig, f);
  const snapshot = kit.snapshot();
  await kit.close();
  const { clientResultsDocument } = await import('../../reporters/clients/results.ts');
  const { clientVerdictText } = await import('../../reporters/clients/console.ts');
  const { writeClientReports } = await import('../../reporters/clients/write.ts');
  const doc = clientResultsDocument(snapshot, { pmv6Version: await pmv6Version(), url: base, hmacWindowSeconds, strict: values.strict });
  const text = clientVerdictText(doc);
  out.write(values.quiet ? `${text.trim().split('\n').at(-1)}\n` : text);
  if (values['report-dir']) {
    const files = await writeClientReports(values['report-dir'], doc);
    out.write(`reports: ${files.join(', ')}\n`);
  }
  return doc.verdict.exitCode;
}

async function matrix(argv: string[]): Promise<number> {
  const { values } = parse(argv, { 'report-dir': { type: 'string' } });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const token = randomBytes(16).toString('hex');
  registerSecret(token, 'control token');
  const { matrixText, runClientMatrix } = await import('../../clients/kill-matrix.ts');
  const { clientResultsDocument } = await import('../../reporters/clients/results.ts');
  const { writeClientReports } = await import('../../reporters/clients/write.ts');
  const m = await runClientMatrix({ token });
  process.stdout.write(matrixText(m));
  if (values['report-dir']) {
    const doc = clientResultsDocument(m.snapshot, { pmv6Version: await pmv6Version(), url: '(kill matrix)', hmacWindowSeconds: 300 });
    const files = await writeClientReports(values['report-dir'], doc);
    process.stdout.write(`reports: ${files.join(', ')}\n`);
  }
  const clean = Object.keys(m.conforming.findings).length === 0 && m.conforming.errors.length === 0;
  return m.killed === m.total && clean ? 0 : 1;
}

async function runCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      scenarios: { type: 'string' },
      expect: { type: 'string' },
      deadline: { type: 'string' },
      'max-time': { type: 'string' },
      jobs: { type: 'string' },
      'control-token': { type: 'string' },
      'report-dir': { type: 'string' },
    },
    { positionals: true },
  );
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const dash = argv.indexOf('--');
  if (dash < 0 || positionals.length === 0) throw new UsageError("give the client's command after --: pmv6 clients run -- npm test");
  if (positionals.length !== argv.length - dash - 1) throw new UsageError(`unexpected argument "${positionals[0]}" before --`);
  const names = Object.keys(SCENARIOS) as ScenarioName[];
  const scenarios = values.scenarios === undefined ? [...DEFAULT_SCENARIOS] : values.scenarios.split(',').map((s) => s.trim());
  for (const s of scenarios) if (!names.includes(s as ScenarioName)) throw new UsageError(`--scenarios: "${s}" is not one of ${names.join(', ')}`);
  const expect: Partial<Record<ScenarioName, Expectation>> = {};
  for (const pair of values.expect === undefined ? [] : values.expect.split(',')) {
    const [s, e] = pair.split('=').map((x) => x.trim());
    if (!names.includes(s as ScenarioName) || !EXPECTATIONS.includes(e as Expectation))
      throw new UsageError(`--expect: "${pair}" is not SCENARIO=EXPECTATION (expectations: ${EXPECTATIONS.join(', ')})`);
    expect[s as ScenarioName] = e as Expectation;
  }
  const deadline = intOption('deadline', values.deadline, 1, 3600) ?? 20;
  const maxTime = intOption('max-time', values['max-time'], 1, 86_400) ?? 300;
  if (maxTime < deadline) throw new UsageError(`--max-time (${maxTime}) must be at least --deadline (${deadline})`);
  const jobs = intOption('jobs', values.jobs, 1, 16) ?? 1;
  const controlToken = values['control-token'] ?? process.env.PMV6_CONTROL_TOKEN;
  if (controlToken !== undefined && controlToken !== '') registerSecret(controlToken, 'control token');
  if (values['report-dir'] !== undefined) await checkOutputDir('--report-dir', values['report-dir']);
  const out = process.stdout;
  out.write(
    `pmv6 clients run: ${forTerminal(scrub(positionals.join(' ')))} under ${scenarios.length} scenarios; a request may be held ${deadline} s, a run may take ${maxTime} s\n`,
  );
  const { runClient } = await import('../../clients/run/run-client.ts');
  const { clientRunVerdictText, scenarioText } = await import('../../reporters/clients/run-text.ts');
  const { writeClientRunReports } = await import('../../reporters/clients/write.ts');
  const result = await runClient({
    command: positionals,
    scenarios: scenarios as ScenarioName[],
    expect,
    deadlineMs: deadline * 1000,
    maxMs: maxTime * 1000,
    jobs,
    ...(controlToken ? { controlToken } : {}),
    progress: (r) => out.write(`${scenarioText(r)}\n`),
  });
  out.write(`${clientRunVerdictText(result)}\n`);
  if (values['report-dir'] !== undefined) {
    const files = await writeClientRunReports(values['report-dir'], result, await pmv6Version());
    out.write(`reports: ${files.join(', ')}\n`);
  }
  return result.exitCode;
}

function clauses(argv: string[]): number {
  const { values } = parse(argv, { json: { type: 'boolean', default: false } });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const active = CLIENT_CLAUSES.filter((c) => !c.retired);
  if (values.json) process.stdout.write(`${JSON.stringify(active, null, 2)}\n`);
  else for (const c of active) process.stdout.write(`[${c.id}] ${c.level} ${c.behaviour}\n    ${c.section}: "${c.quote}"\n`);
  return 0;
}

export async function clients(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h') {
    process.stdout.write(`${HELP}\n`);
    return sub === undefined ? 2 : 0;
  }
  if (sub === 'serve') return serve(rest);
  if (sub === 'matrix') return matrix(rest);
  if (sub === 'clauses') return clauses(rest);
  if (sub === 'run') return runCommand(rest);
  throw new UsageError(`unknown subcommand "${sub}" (serve, matrix, clauses, run)`);
}
