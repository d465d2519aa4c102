import { readFile } from 'node:fs/promises';
import { TargetError, UsageError } from '../../core/errors.ts';
import { type Expectations, loadExpectations } from '../../core/expectations.ts';
import { registerSecret, scrub } from '../../core/redact.ts';
import { progress, verdictText } from '../../reporters/console.ts';
import { resultsDocument } from '../../reporters/results-json.ts';
import { forTerminal } from '../../reporters/terminal.ts';
import { CLAUSES, clauseById, clausesMatching } from '../../suites/catalogue/clauses.ts';
import { selects, selectsIds } from '../../suites/catalogue/selection.ts';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEPTHS,
  isDepth,
  NEEDS_BASIC,
  newRunId,
  type RunConfig,
  randomSeed,
} from '../../suites/harness/config.ts';
import { blame, Journal, stateDir } from '../../suites/harness/journal/journal.ts';
import { nothingChecked, verdictOf } from '../../suites/runner/verdict.ts';
import type { ContainerOptions } from '../../targets/container.ts';
import type { BaseConfig, Target } from '../../targets/target.ts';
import type { UrlTargetOptions } from '../../targets/url.ts';
import { intOption, parse, TARGET_OPTIONS, urlOption } from './args.ts';
import { CONTAINER_HELP, CONTAINER_OPTIONS, containerOptions } from './container-flags.ts';
import { checkInputFile, checkOutputDir, checkOutputFile } from './paths.ts';
import { namedVariants } from './variant-option.ts';
import { withTarget } from './with-target.ts';

const HELP = `pmv6 run: run the conformance suites and print the verdict

With no --target, starts the reference server in a thread of this process on an ephemeral
loopback port (control protocol on), runs every suite against it, and stops it.

Options (secrets are better given in the environment, which other users cannot see):
  --target URL            base URL of the installation (the API is at URL/index.php/api/v6/)
  --user U                admin username                     (env PMV6_USER)
  --password P            admin password                     (env PMV6_PASSWORD)
  --hmac-public K         admin's HMAC public key            (env PMV6_HMAC_PUBLIC)
  --hmac-private K        admin's HMAC private key           (env PMV6_HMAC_PRIVATE)
  --control URL           control protocol base, e.g. URL/__control
  --control-token T       control protocol bearer token      (env PMV6_CONTROL_TOKEN)
  --only IDS              run only these areas or clause IDs, comma-separated (AUTH,PAG-03)
  --skip IDS              skip these areas or clause IDs
  --strict                a failed SHOULD fails the run too
  --timeout MS            deadline of each whole request, headers and body (default 10000);
                          3 deadlines in a row with no answer between: the target stopped
                          answering, and the run ends within max(3 × MS, 30 s) + 9 s
                          after its last answer (so does a run that stalls otherwise)
  --max-response-bytes N  read at most N bytes of one response (default ${DEFAULT_MAX_RESPONSE_BYTES})
  --ca FILE               trust this CA certificate (PEM) for an https target
  --insecure              accept any certificate of an https target (self-signed, expired)
  --seed N                seed for generated data (default: random, printed)
  --depth D               how many cases each property test generates: quick (a fifth),
                          standard (default) or deep (four times); printed with the seed
  --concurrency N         requests in flight at once (default ${DEFAULT_CONCURRENCY}): suite files side by
                          side, those that read whole lists or the log alone, settings
                          changed with the target to themselves; the same verdict at any N
                          (1: every file in turn, one request after another)
  --report-dir DIR        write DIR/results.json, junit.xml, report.html and summary.md
                          (env PMV6_REPORT_DIR; the runner image sets /work/pmv6-report)
                          (summary.md also to $GITHUB_STEP_SUMMARY when that is set)
  --expectations FILE     known deviations, {"PAG-03": "reason", ...}: a listed failure is an
                          expected failure and does not fail the run; a listed clause that
                          passes is a stale expectation (fails the run under --strict)
  --variant IDS           the embedded server makes these lawful choices (fixtures/variants/,
                          see pmv6 variants --list), comma-separated
  --quiet                 print only the verdict
  --list                  print the tests that would run (after --only/--skip) and exit
  --read-only             run only the checks that create, change and delete nothing; the
                          others are reported as disabled
  --state-dir DIR         where runs keep their journals (env PMV6_STATE_DIR; default
                          $XDG_STATE_HOME/pmv6, else ~/.local/state/pmv6): every setting before
                          it changes and every creation before it is sent, read by pmv6 cleanup
                          (a copy goes to --report-dir as journal.jsonl)
  --cleanup-first         before the run, remove what earlier runs left on the target and put
                          back the settings they changed (as pmv6 cleanup does)
${CONTAINER_HELP}

Exit codes: 0 conformant, 1 one or more violations, 2 usage error, unreachable target,
rejected credentials or a target that failed during the run, 3 inconclusive (harness error or
failed setup, no violation), 130/143 interrupted by SIGINT/SIGTERM (after deleting what the run
created; the cleanup is printed).`;

const RUN_OPTIONS = {
  ...TARGET_OPTIONS,
  variant: { type: 'string' },
  only: { type: 'string' },
  skip: { type: 'string' },
  strict: { type: 'boolean', default: false },
  timeout: { type: 'string' },
  'max-response-bytes': { type: 'string' },
  ca: { type: 'string' },
  insecure: { type: 'boolean', default: false },
  seed: { type: 'string' },
  depth: { type: 'string' },
  'report-dir': { type: 'string' },
  expectations: { type: 'string' },
  quiet: { type: 'boolean', default: false },
  list: { type: 'boolean', default: false },
  'read-only': { type: 'boolean', default: false },
  concurrency: { type: 'string' },
  'state-dir': { type: 'string' },
  'cleanup-first': { type: 'boolean', default: false },
  ...CONTAINER_OPTIONS,
} as const;

/** What `pmv6 run` was asked to do, every flag and file checked before any work. */
interface RunRequest {
  base: BaseConfig;
  /** where to run: an installation, a container to start, or (neither) the embedded server */
  url?: UrlTargetOptions;
  container?: Omit<ContainerOptions, 'log'>;
  hmac?: { publicKey: string; privateKey: string };
  strict: boolean;
  quiet: boolean;
  reportDir?: string;
  expectations?: Expectations;
  /** lawful variants the embedded server applies (fixtures/variants/) */
  variants?: string;
  /** the state folder of the journals (suites/harness/journal/) */
  stateDir: string;
  cleanupFirst: boolean;
}

// parse → acquire a target → run the suites → report.
export async function run(argv: string[]): Promise<number> {
  const parsed = await parseRun(argv);
  if (typeof parsed === 'string') {
    process.stdout.write(parsed);
    return 0;
  }
  const log = (line: string) => {
    if (!parsed.quiet) process.stdout.write(`${forTerminal(line)}\n`);
  };
  return withTarget(
    'run',
    () => acquire(parsed, log),
    (target) => runAndReport(target, parsed, log),
  );
}

/** The request, or the text to print for --help and --list. */
async function parseRun(argv: string[]): Promise<RunRequest | string> {
  const { values } = parse(argv, RUN_OPTIONS);
  if (values.help) return `${HELP}\n`;
  const env = process.env;
  const target = urlOption('target', values.target);
  const control = urlOption('control', values.control);
  const timeoutMs = intOption('timeout', values.timeout, 100, 600_000) ?? 10_000;
  const maxResponseBytes = intOption('max-response-bytes', values['max-response-bytes'], 1024, 2 ** 31 - 1);
  const seed = intOption('seed', values.seed, 0, 2 ** 31 - 1) ?? randomSeed();
  const concurrency = intOption('concurrency', values.concurrency, 1, 64);
  const depth = values.depth ?? 'standard';
  if (!isDepth(depth)) throw new UsageError(`--depth: "${depth}" is not one of ${DEPTHS.join(', ')}`);
  const only = list(values.only, '--only');
  const skip = list(values.skip, '--skip');
  if (values.list) return listing(only, skip);
  if (!CLAUSES.some((c) => !c.retired && selects([c], { only, skip })))
    throw new UsageError('nothing would be checked: --only and --skip together select no clause (see pmv6 clauses)');
  const user = values.user ?? env.PMV6_USER;
  const password = values.password ?? env.PMV6_PASSWORD;
  const hmacPublic = values['hmac-public'] ?? env.PMV6_HMAC_PUBLIC;
  const hmacPrivate = values['hmac-private'] ?? env.PMV6_HMAC_PRIVATE;
  const controlToken = values['control-token'] ?? env.PMV6_CONTROL_TOKEN;
  // Every secret given is hidden from every output from here on, used by this run or not: a
  // server may echo any header it receives, and a token given without --control is still secret.
  for (const [value, label] of [
    [password, 'password'],
    [hmacPrivate, 'HMAC private key'],
    [controlToken, 'control token'],
  ] as const) {
    if (value) registerSecret(value, label);
  }
  // Decision (issue 36): a target or credentials given in the environment with no --target are
  // refused, never ignored: the run would test the embedded server and turn a gate green.
  if (!target && !values.image && env.PMV6_TARGET)
    throw new UsageError(
      `PMV6_TARGET is set (${env.PMV6_TARGET.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1«redacted»@')}) but pmv6 reads the target from --target only: give --target "$PMV6_TARGET", or unset PMV6_TARGET to test the embedded server`,
    );
  if (!target && !values.image) {
    const set = ['PMV6_USER', 'PMV6_PASSWORD', 'PMV6_HMAC_PUBLIC', 'PMV6_HMAC_PRIVATE', 'PMV6_CONTROL_TOKEN'].filter((k) => env[k]);
    if (set.length > 0)
      throw new UsageError(
        `${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} set but no --target is given: the run would test the embedded server; give --target URL, or unset ${set.length === 1 ? 'it' : 'them'}`,
      );
  }
  if (values['cleanup-first'] && (values['read-only'] || (!target && !values.image)))
    throw new UsageError('--cleanup-first needs --target (or --image) and a run that may write (not --read-only)');
  if (!target && !values.image && (values.user || values.password || control || values['control-token']))
    throw new UsageError('--user, --password, --control and --control-token need --target (or --image)');
  // Decision (issue 27): a control token without --control is refused, not tried at a guessed
  // address: unused, it would leave every settings-dependent clause unverifiable without a word.
  if (target && controlToken && !control)
    throw new UsageError(
      `a control token is set (${values['control-token'] !== undefined ? '--control-token' : 'PMV6_CONTROL_TOKEN'}) but no --control URL: give --control (the reference server's is ${target}/__control), or unset the token to run without the control protocol`,
    );
  if (target && (!user || !password)) throw new UsageError('a --target needs the admin credentials: --user and --password (or PMV6_USER and PMV6_PASSWORD)');
  if (Boolean(hmacPublic) !== Boolean(hmacPrivate)) throw new UsageError('give both --hmac-public and --hmac-private, or neither');
  if (control && !controlToken) throw new UsageError('--control needs --control-token (or PMV6_CONTROL_TOKEN)');
  const tls = await tlsTrust(values.ca, values.insecure, target);
  if (values.expectations !== undefined) await checkInputFile('--expectations', values.expectations);
  const expectations = values.expectations !== undefined ? await loadExpectations(values.expectations, clauseById) : undefined;
  // PMV6_REPORT_DIR: the runner image's mounted folder (package/runner.Dockerfile).
  const reportDir = values['report-dir'] ?? (env.PMV6_REPORT_DIR || undefined);
  if (reportDir !== undefined) await checkOutputDir(values['report-dir'] !== undefined ? '--report-dir' : 'PMV6_REPORT_DIR', reportDir);
  if (reportDir !== undefined && env.GITHUB_STEP_SUMMARY) await checkOutputFile('GITHUB_STEP_SUMMARY', env.GITHUB_STEP_SUMMARY);
  const hmac = hmacPublic && hmacPrivate ? { publicKey: hmacPublic, privateKey: hmacPrivate } : undefined;
  const container = containerOptions(values, { target, control, user, password, controlToken });
  if (values.variant !== undefined && (target || container)) throw new UsageError('--variant applies to the embedded server: leave out --target and --image');
  // After every check: a refused invocation prints its one line and nothing else.
  for (const flag of ['password', 'hmac-private', 'control-token'] as const) {
    if (values[flag] !== undefined)
      process.stderr.write(`pmv6 run: note: --${flag} is visible to other users of this machine; prefer the environment variable\n`);
  }
  return {
    base: {
      runId: newRunId(),
      seed,
      depth,
      ...(concurrency !== undefined ? { concurrency } : {}),
      readOnly: values['read-only'],
      timeoutMs,
      ...(maxResponseBytes !== undefined ? { maxResponseBytes } : {}),
      selection: { only, skip },
      ...(tls ? { tls } : {}),
    },
    ...(target
      ? {
          url: {
            target,
            user: user!,
            password: password!,
            hmac,
            control: control && controlToken ? { url: control, token: controlToken } : undefined,
            orHmac: true,
          },
        }
      : {}),
    ...(container ? { container } : {}),
    ...(hmac ? { hmac } : {}),
    strict: values.strict,
    quiet: values.quiet,
    ...(reportDir !== undefined ? { reportDir } : {}),
    ...(expectations ? { expectations } : {}),
    ...(values.variant !== undefined ? { variants: values.variant } : {}),
    stateDir: stateDir(values['state-dir']),
    cleanupFirst: values['cleanup-first'],
  };
}

export async function tlsTrust(caFile: string | undefined, insecure: boolean, target: string | undefined): Promise<RunConfig['tls']> {
  let ca: string | undefined;
  if (caFile !== undefined) {
    if (!target) throw new UsageError('--ca needs --target');
    await checkInputFile('--ca', caFile, 1024 * 1024);
    try {
      ca = await readFile(caFile, 'utf8');
    } catch (e) {
      throw new UsageError(`cannot read --ca: ${(e as Error).message}`);
    }
  }
  if (insecure && !target) throw new UsageError('--insecure needs --target');
  return ca || insecure ? { ...(ca ? { ca } : {}), ...(insecure ? { insecure: true } : {}) } : undefined;
}

async function acquire(request: RunRequest, log: (line: string) => void): Promise<Target> {
  if (request.url) {
    const { url } = request;
    if (request.cleanupFirst) {
      // Settings first: a target an earlier run left with the API off would fail the preflight.
      const { restoreJournalSettings } = await import('../../suites/runner/leftovers.ts');
      const restored = await restoreJournalSettings({ ...request.base, ...url, control: url.control } as RunConfig, request.stateDir);
      if (restored.restored.length > 0) log(`settings: put back ${restored.restored.join(', ')} as before an earlier run changed them (read back)`);
    }
    // Loaded where used (package/test/startup-imports.test.ts): --help, --list and a refused flag load no API client.
    const { urlTarget } = await import('../../targets/url.ts');
    try {
      return await urlTarget(request.base, url);
    } catch (e) {
      // A setting a journal says an earlier run changed and did not put back: said so, with the fix.
      if (!(e instanceof TargetError)) throw e;
      const who = blame(request.stateDir, url.target);
      if (!who) throw e;
      throw new TargetError(
        `${e.message}\npmv6 run: ${who}; put it back with: pmv6 cleanup --target ${url.target} --control ${url.control?.url ?? 'URL'} (or run with --cleanup-first)`,
      );
    }
  }
  if (request.container) {
    const { ContainerOptionError, containerTarget } = await import('../../targets/container.ts');
    try {
      return await containerTarget(request.base, { ...request.container, log }, request.hmac);
    } catch (e) {
      throw e instanceof ContainerOptionError ? new UsageError(e.message) : e;
    }
  }
  // Loaded here: a run against an installation does not load the reference server.
  const { startEmbeddedTarget } = await import('../../targets/embedded.ts');
  const variants = request.variants === undefined ? [] : await namedVariants(request.variants);
  const started = startEmbeddedTarget(
    request.base,
    variants.length > 0
      ? {
          mutate: (server) => {
            for (const v of variants) v.apply(server);
          },
        }
      : {},
  );
  // Decision (issue 38): the runner loads while the embedded server starts in its thread (measured:
  // the run's thread stood idle about 0.6 s of a 0.75 s run of one file, waiting for the server),
  // and only once the thread is made (startEmbeddedTarget makes it before its first await): loaded
  // beside the target's modules, the runner's held the thread back 0.1-0.2 s.
  void runnerModules().catch(() => {});
  return started;
}

const loadRunner = () =>
  Promise.all([import('../../suites/runner/run-suites.ts'), import('../../suites/runner/cleanup.ts'), import('../../targets/preflight.ts')]);
let loading: ReturnType<typeof loadRunner> | undefined;

/** The runner's modules, loaded once (a run against the embedded server starts loading them early). */
function runnerModules(): ReturnType<typeof loadRunner> {
  loading ??= loadRunner();
  return loading;
}

async function runAndReport(target: Target, request: RunRequest, log: (line: string) => void): Promise<number> {
  const { config } = target;
  log(
    `pmv6 run ${config.runId}: target ${config.target}${target.label ? ` (${target.label})` : ''}, seed ${config.seed}, depth ${config.depth ?? 'standard'}` +
      `${config.control ? ', control protocol on' : ', no control protocol: settings-dependent clauses are unverifiable'}`,
  );
  if (config.readOnly) log('read-only run: checks that would create, change or delete data are disabled');
  // Also under --quiet: the run checks less than over HTTP Basic.
  if (config.signIn === 'hmac')
    process.stderr.write(
      `pmv6 run: the target refused HTTP Basic for user "${forTerminal(scrub(config.user))}" and accepted the HMAC keys (it allows HMAC only${config.control ? ', as its settings say' : ', or the password is wrong'}): every request is signed with HMAC; the checks that need HTTP Basic are unverifiable\n`,
    );
  // Signals are handled from here: a Ctrl-C while the suites load still cleans up and exits 130.
  const stop = interruption();
  // A file still running after a stop is refused every request (RunStoppedError) and may reject
  // where no one awaits it any more: expected, never a stack trace (issue 36).
  process.on('unhandledRejection', (e) => {
    if ((e as Error)?.name === 'RunStoppedError' || (e as Error)?.name === 'OwnershipError') return;
    process.stderr.write(`pmv6 run: harness error after the run: ${forTerminal(scrub(String((e as Error)?.message ?? e).split('\n')[0] ?? ''))}\n`);
  });
  // Decision: the runner and the suites are loaded only once a run starts, so a bad flag, path or
  // target costs a fraction of the memory and of the start-up time.
  const [{ runSuites, hangBoundMs, interruptBoundMs }, { cleanupText, settingsAlarm }, { preflight }] = await runnerModules();
  stop.boundMs = interruptBoundMs();
  log(
    `a target that stops answering ends the run within ${Math.ceil(hangBoundMs(config.timeoutMs) / 1000)} s after its last answer (3 deadlines of --timeout in a row)`,
  );
  const journal = target.kind === 'embedded' ? undefined : await earlierRuns(target, request, log);
  const bar = progress(process.stdout, { quiet: request.quiet, clean: scrub });
  const result = await runSuites(config, {
    onModuleDone: bar.module,
    onTestDone: bar.test,
    onProgress: bar.tick,
    signal: stop.signal,
    ...(journal ? { journal } : {}),
  }).finally(() => {
    stop.release();
    journal?.close();
  });
  bar.done();
  // Settings not as before the run come first and loudly (also under --quiet): every user may be locked out.
  const alarm = forTerminal(settingsAlarm(result.settings));
  if (alarm) process.stderr.write(alarm);
  const cleanupLine = result.cleanup ? forTerminal(cleanupText(result.cleanup, result.settings)) : '';
  if (result.stopped !== undefined && !result.interrupted && !stop.received) {
    process.stderr.write(`pmv6 run: ${forTerminal(result.stopped)}: no verdict\n`);
    process.stderr.write(cleanupLine);
    // A suite file still waiting on the target must not keep the process alive.
    setTimeout(() => process.exit(2), 500).unref();
    return 2;
  }
  if (result.interrupted || stop.received) {
    const signal = stop.received ?? 'SIGINT';
    process.stderr.write(`pmv6 run: interrupted by ${signal}: no verdict\n`);
    process.stderr.write(cleanupLine);
    const code = signal === 'SIGTERM' ? 143 : 130;
    // A suite file still waiting on a hung target must not keep the process alive.
    setTimeout(() => process.exit(code), 500).unref();
    return code;
  }
  const verdict = nothingChecked(result, verdictOf(result, request.strict, request.expectations));
  // Outcome colours only on a terminal that has not asked for none (https://no-color.org).
  const colour = process.stdout.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
  const text = verdictText(result, verdict, { colour });
  process.stdout.write(scrub(request.quiet ? text.split('\n').slice(-2).join('\n') : text));
  // What an installation that allows HMAC only kept the run from checking, by clause (also under --quiet).
  if (config.signIn === 'hmac') {
    const ids = [...new Set(result.tests.filter((t) => t.outcome === 'skipped-unverifiable' && t.note?.includes(NEEDS_BASIC)).flatMap((t) => t.clauses))];
    if (ids.length > 0) process.stdout.write(`not checked, HTTP Basic refused (HMAC only): ${ids.sort().join(', ')}\n`);
  }
  // Cleanup is reported apart from the verdict (also under --quiet when something is left).
  if (!request.quiet || (result.cleanup?.leftovers.length ?? 0) > 0 || (result.cleanup?.unknown?.length ?? 0) > 0) process.stdout.write(cleanupLine);
  if (!request.quiet && result.requests !== undefined) process.stdout.write(`requests: ${result.requests} sent to the target\n`);
  if (request.reportDir) {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const cleanup = result.cleanup ? { deleted: result.cleanup.deleted.length, leftovers: result.cleanup.leftovers } : undefined;
    const doc = resultsDocument(result, verdict, { pmv6Version: pkg.version, targetVersion: target.version, ...(cleanup ? { cleanup } : {}) });
    const { writeReports } = await import('../../reporters/write-reports.ts');
    for (const file of await writeReports(request.reportDir, doc)) log(`report: ${file}`);
  }
  // A target that died or locked itself during the run is not a conformance verdict: asked
  // again, it fails the preflight, and the run says so in one line and exits 2.
  if (verdict.exitCode !== 0) {
    try {
      await preflight(config);
    } catch (e) {
      if (!(e instanceof TargetError)) throw e;
      process.stderr.write(`pmv6 run: the target failed during the run: ${forTerminal(e.message)}\n`);
      return 2;
    }
  }
  return verdict.exitCode;
}

/**
 * Before a run against an installation: what earlier runs left on it (journals, names), in one
 * line with the command that removes it, or removed first (--cleanup-first); then the run's own
 * journal, opened before anything is written (also into --report-dir).
 */
async function earlierRuns(target: Target, request: RunRequest, log: (line: string) => void): Promise<Journal | undefined> {
  const { config } = target;
  const { footprint, footprintLine, removeFootprint, removalText } = await import('../../suites/runner/leftovers.ts');
  const { pruneClean } = await import('../../suites/harness/journal/journal.ts');
  const limits = { requestMs: Math.min(config.timeoutMs, 5_000), until: Date.now() + 15_000 };
  if (request.cleanupFirst) {
    const removed = await removeFootprint(config, request.stateDir, limits);
    for (const line of removalText(removed).trimEnd().split('\n')) log(line);
  } else {
    const line = footprintLine(
      await footprint(config, request.stateDir, limits),
      `pmv6 cleanup --target ${config.target}${config.control ? ` --control ${config.control.url}` : ''}`,
    );
    // Also under --quiet: the target is not as a clean installation would be.
    if (line) process.stderr.write(`pmv6 run: ${forTerminal(scrub(line))}\n`);
  }
  if (config.readOnly) return undefined;
  pruneClean(request.stateDir);
  const { join } = await import('node:path');
  if (request.reportDir) (await import('node:fs')).mkdirSync(request.reportDir, { recursive: true });
  try {
    const journal = new Journal(
      request.stateDir,
      { run: config.runId, target: config.target, ...(config.control ? { control: config.control.url } : {}) },
      request.reportDir ? join(request.reportDir, 'journal.jsonl') : undefined,
    );
    log(`journal: ${journal.path}`);
    return journal;
  } catch (e) {
    // An unwritable state folder does not stop the run: pmv6 cleanup finds its objects by name.
    process.stderr.write(
      `pmv6 run: no journal: cannot write in ${forTerminal(request.stateDir)} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); set --state-dir or PMV6_STATE_DIR; pmv6 cleanup will find the run's objects by their names\n`,
    );
    return undefined;
  }
}

// SIGINT/SIGTERM during the run: stop it (the running check ends, the files' cleanup, the settings
// restore and the final sweep run), then exit 130/143. A second signal exits at once.
function interruption(): { signal: AbortSignal; received: NodeJS.Signals | undefined; boundMs: number | undefined; release(): void } {
  const controller = new AbortController();
  const state = {
    signal: controller.signal,
    received: undefined as NodeJS.Signals | undefined,
    boundMs: undefined as number | undefined,
    release() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
  function onSignal(signal: NodeJS.Signals): void {
    if (state.received) {
      process.stderr.write(`pmv6 run: ${signal} again: exiting without cleanup; objects named pmv6-<run>-… may be left on the target\n`);
      process.exit(signal === 'SIGTERM' ? 143 : 130);
    }
    state.received = signal;
    const within = state.boundMs === undefined ? '' : `, within ${Math.ceil(state.boundMs / 1000)} s`;
    process.stderr.write(
      `pmv6 run: ${signal}: stopping the run, putting the settings back and deleting what it created${within} (send it again to exit at once)\n`,
    );
    controller.abort();
  }
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return state;
}

async function listing(only: string[], skip: string[]): Promise<string> {
  // Loaded here: collecting the suites imports every suite file, which a run does only once it starts.
  const { declaredTests } = await import('../../suites/runner/inventory.ts');
  const tests = await declaredTests();
  const lines = tests.filter((t) => selectsIds(t.ids, { only, skip })).map((t) => `[${t.ids.join(', ')}] ${t.level} ${t.behaviour}  (${t.file})`);
  return `${lines.join('\n')}\n${lines.length} tests\n`;
}

function list(value: string | undefined, flag: string): string[] {
  if (value === undefined) return [];
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new UsageError(`${flag} needs a comma-separated list of areas or clause IDs`);
  for (const item of items) {
    if (clausesMatching([item]).length === 0) throw new UsageError(`${flag}: "${item}" is neither an area nor a clause ID (see pmv6 clauses)`);
  }
  return items;
}
