import { readFile, writeFile } from 'node:fs/promises';
import { UsageError } from '../../core/errors.ts';
import { registerSecret } from '../../core/redact.ts';
import { compareResults, comparisonText, DEFAULT_COMPARE } from '../../load/engine/compare.ts';
import {
  DEFAULT_MAX_REQUESTS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  type EngineOptions,
  type LoadResults,
  MAX_DURATION_MS,
  runLoad,
} from '../../load/engine/engine.ts';
import { renderLoadComparisonHtml } from '../../load/engine/report-html.ts';
import { loadScenario, parseDuration, parseThreshold, type Scenario, scenarioNames, selectsSome, type Threshold } from '../../load/engine/scenario.ts';
import { resultsText } from '../../load/engine/text.ts';
import type { Credentials } from '../../load/engine/types.ts';
import { newRunId } from '../../suites/harness/config.ts';
import type { BaseConfig, Target } from '../../targets/target.ts';
import type { UrlTargetOptions } from '../../targets/url.ts';
import { intOption, parse, urlOption } from './args.ts';
import { checkInputFile, checkOutputFile } from './paths.ts';
import { withTarget } from './with-target.ts';

const HELP = `pmv6 load: generate load from a scenario of load/scenarios/ and judge it by its thresholds

With no --target, starts the reference server in this process on an ephemeral loopback port,
seeded with --seed-passwords passwords (default 5000), and loads it.
\`pmv6 load merge FILE…\` merges the summaries of the k6 instances of a split test into one verdict.

Options:
  --scenario NAME         ${scenarioNames().join(', ')}
  --target URL            base URL of the installation (the API is at URL/index.php/api/v6/)
  --rate N                open model: N iterations per second (dropped iterations are counted)
  --vus N                 closed model: N virtual users, each starting its next iteration when
                          the last one ends
  --duration D            e.g. 30s, 2m (default: the scenario's; at most 10m)
  --max-requests N        stop issuing requests after N (default ${DEFAULT_MAX_REQUESTS})
  --threshold EXPR        extra threshold, [metric:]expr, metric default http_req_duration:
                          'p(95)<250', 'checks:rate>0.999', 'http_req_failed:rate<0.001',
                          'http_req_duration{name:passwords/count}:p(95)<100'
  --out FILE              write the results (percentiles per endpoint and page size) as JSON
  --out-json FILE         write the live metrics as they are measured, in k6's --out json format
  --baseline FILE         compare with an earlier --out file, per endpoint and page size
  --report FILE           with --baseline: write an HTML page of both runs' latency-percentile curves
  --budget PCT            a p50, p95 or p99 increase beyond PCT% (and --budget-ms) that is also
                          beyond run-to-run noise is a regression (default 20)
  --budget-ms MS          (default 1)
  --user U / --password P admin credentials          (env PMV6_USER / PMV6_PASSWORD)
  --hmac-public K / --hmac-private K                 (env PMV6_HMAC_PUBLIC / PMV6_HMAC_PRIVATE)
  --ca FILE / --insecure  trust this CA for an https target / accept any certificate
  --timeout MS            deadline of each whole request, head and body (default ${DEFAULT_TIMEOUT_MS})
  --max-response-bytes N  the most bytes read for one response; a larger one ends the run as a
                          target error (default ${DEFAULT_MAX_RESPONSE_BYTES})
  --seed-passwords N      passwords in the embedded server (default 5000)
  --body-sample N         parse and check one page body in N (default 50; 1 = every body);
                          status and headers are checked on every response
  --quiet                 no progress line

Exit codes: 0 every threshold held (and no regression), 1 a threshold failed or a regression
beyond the budget, 2 usage error or target error (unreachable, not v6, credentials rejected,
a response beyond --max-response-bytes).`;

const LOAD_OPTIONS = {
  scenario: { type: 'string' },
  target: { type: 'string' },
  rate: { type: 'string' },
  vus: { type: 'string' },
  duration: { type: 'string' },
  'max-requests': { type: 'string' },
  threshold: { type: 'string', multiple: true },
  out: { type: 'string' },
  'out-json': { type: 'string' },
  baseline: { type: 'string' },
  report: { type: 'string' },
  budget: { type: 'string' },
  'budget-ms': { type: 'string' },
  user: { type: 'string' },
  password: { type: 'string' },
  'hmac-public': { type: 'string' },
  'hmac-private': { type: 'string' },
  ca: { type: 'string' },
  insecure: { type: 'boolean', default: false },
  timeout: { type: 'string' },
  'max-response-bytes': { type: 'string' },
  'seed-passwords': { type: 'string' },
  'body-sample': { type: 'string' },
  quiet: { type: 'boolean', default: false },
} as const;

/** What `pmv6 load` was asked to do, every flag and file checked before any work. */
interface LoadRequest {
  scenario: Scenario;
  /** an installation; none: the seeded embedded server */
  url?: UrlTargetOptions;
  seedPasswords: number;
  base: BaseConfig;
  run: Omit<EngineOptions, 'target' | 'credentials' | 'scenario'>;
  out?: string;
  report?: string;
  baseline?: LoadResults;
  compare: { budget: number; minMs: number };
  quiet: boolean;
}

// parse → acquire a target → load it → report.
export async function load(argv: string[]): Promise<number> {
  if (argv[0] === 'merge') return (await import('../../load/operator/merge.ts')).mergeCommand(argv.slice(1));
  const request = await parseLoad(argv);
  if (typeof request === 'string') {
    process.stdout.write(request);
    return 0;
  }
  // The same preflight as pmv6 run for an installation: a dead target, no v6 API or refused
  // credentials is exit 2 before any load.
  return withTarget(
    'load',
    () => (request.url ? preflighted(request.base, request.url) : seeded(request.seedPasswords)),
    async (target) => report(await loadTarget(target, request), request),
  );
}

/** An installation (--target) after the preflight; loaded here, so that --help and a refused flag load no API client. */
async function preflighted(base: BaseConfig, url: UrlTargetOptions): Promise<Target> {
  const { urlTarget } = await import('../../targets/url.ts');
  return urlTarget(base, url);
}

/** The reference server filled for a load; loaded here, so that loading an installation does not load it. */
async function seeded(passwords: number): Promise<Target> {
  const { startSeededTarget } = await import('../../targets/seeded.ts');
  return startSeededTarget({ passwords });
}

/** The request, or the text to print for --help. */
async function parseLoad(argv: string[]): Promise<LoadRequest | string> {
  const { values } = parse(argv, LOAD_OPTIONS);
  if (values.help) return `${HELP}\n`;
  if (values.scenario === undefined) throw new UsageError(`--scenario is required: ${scenarioNames().join(', ')}`);
  let scenario: Scenario;
  try {
    scenario = loadScenario(values.scenario);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const rate = intOption('rate', values.rate, 1, 100_000);
  const vus = intOption('vus', values.vus, 1, 10_000);
  if (rate !== undefined && vus !== undefined) throw new UsageError('give --rate (open model) or --vus (closed model), not both');
  const durationMs = duration(values.duration);
  const maxRequests = intOption('max-requests', values['max-requests'], 1, 100_000_000);
  const timeoutMs = intOption('timeout', values.timeout, 1, 600_000);
  const maxResponseBytes = intOption('max-response-bytes', values['max-response-bytes'], 1024, 2 ** 40);
  const bodySample = intOption('body-sample', values['body-sample'], 1, 1_000_000);
  const seedPasswords = intOption('seed-passwords', values['seed-passwords'], 0, 1_000_000);
  const budget = values.budget === undefined ? DEFAULT_COMPARE.budget * 100 : Number(values.budget.replace(/%$/, ''));
  const budgetMs = values['budget-ms'] === undefined ? DEFAULT_COMPARE.minMs : Number(values['budget-ms']);
  if (!(budget >= 0) || !(budgetMs >= 0)) throw new UsageError('--budget and --budget-ms must be non-negative numbers');
  const extraThresholds = (values.threshold ?? []).map(threshold);
  for (const t of extraThresholds)
    if (!selectsSome(scenario, t)) throw new UsageError(`--threshold: ${t.key} selects none of the requests of ${scenario.name}`);
  if (values.report !== undefined && values.baseline === undefined)
    throw new UsageError('--report draws the comparison with a baseline: it needs --baseline FILE');
  if (values.out !== undefined) await checkOutputFile('--out', values.out);
  if (values['out-json'] !== undefined) await checkOutputFile('--out-json', values['out-json']);
  if (values.report !== undefined) await checkOutputFile('--report', values.report);
  if (values.ca !== undefined) await checkInputFile('--ca', values.ca, 1024 * 1024);
  const baseline = values.baseline === undefined ? undefined : await readBaseline(values.baseline);
  const ca =
    values.ca === undefined
      ? undefined
      : await readFile(values.ca, 'utf8').catch(() => {
          throw new UsageError(`--ca ${values.ca}: cannot read`);
        });
  const url = values.target === undefined ? undefined : { ...installation(values), signIn: scenario.auth };
  const tls = ca !== undefined || values.insecure ? { ...(ca !== undefined ? { ca } : {}), ...(values.insecure ? { insecure: true } : {}) } : undefined;
  return {
    scenario,
    ...(url ? { url } : {}),
    seedPasswords: seedPasswords ?? 5_000,
    base: { runId: newRunId(), seed: 0, readOnly: false, timeoutMs: timeoutMs ?? 10_000, ...(tls ? { tls } : {}) },
    run: {
      ...(rate !== undefined ? { rate } : {}),
      ...(vus !== undefined ? { vus } : {}),
      ...(durationMs !== undefined ? { durationMs } : {}),
      ...(maxRequests !== undefined ? { maxRequests } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(maxResponseBytes !== undefined ? { maxResponseBytes } : {}),
      ...(bodySample !== undefined ? { bodySampleEvery: bodySample } : {}),
      ...(ca !== undefined ? { ca } : {}),
      insecure: values.insecure,
      extraThresholds,
      ...(values['out-json'] !== undefined ? { liveJson: values['out-json'] } : {}),
    },
    ...(values.out !== undefined ? { out: values.out } : {}),
    ...(values.report !== undefined ? { report: values.report } : {}),
    ...(baseline ? { baseline } : {}),
    compare: { budget: budget / 100, minMs: budgetMs },
    quiet: values.quiet,
  };
}

function duration(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  let ms: number;
  try {
    ms = parseDuration(value);
  } catch (e) {
    throw new UsageError(`--duration: ${(e as Error).message}`);
  }
  if (ms <= 0 || ms > MAX_DURATION_MS) throw new UsageError('--duration must be above 0 and at most 10m');
  return ms;
}

function threshold(text: string): Threshold {
  const m = /^([a-z_]+(?:\{.*\})?):(.*)$/.exec(text);
  try {
    return m ? parseThreshold(m[1]!, m[2]!) : parseThreshold('http_req_duration', text);
  } catch (e) {
    throw new UsageError(`--threshold: ${(e as Error).message}`);
  }
}

async function readBaseline(file: string): Promise<LoadResults> {
  await checkInputFile('--baseline', file);
  let baseline: LoadResults;
  try {
    baseline = JSON.parse(await readFile(file, 'utf8')) as LoadResults;
  } catch (e) {
    throw new UsageError(`--baseline ${file}: ${(e as Error).message}`);
  }
  if (baseline.tool !== 'pmv6 load' || typeof baseline.endpoints !== 'object') throw new UsageError(`--baseline ${file} is not a pmv6 load results file`);
  return baseline;
}

function installation(values: {
  target?: string | undefined;
  user?: string | undefined;
  password?: string | undefined;
  'hmac-public'?: string | undefined;
  'hmac-private'?: string | undefined;
}): UrlTargetOptions {
  const env = process.env;
  const user = values.user ?? env['PMV6_USER'];
  const password = values.password ?? env['PMV6_PASSWORD'];
  if (!user || password === undefined) throw new UsageError('a --target needs --user and --password (or PMV6_USER and PMV6_PASSWORD)');
  const pub = values['hmac-public'] ?? env['PMV6_HMAC_PUBLIC'];
  const priv = values['hmac-private'] ?? env['PMV6_HMAC_PRIVATE'];
  // Hidden from every output from here on, used by this load or not.
  registerSecret(password, 'password');
  if (priv) registerSecret(priv, 'HMAC private key');
  return { target: urlOption('target', values.target)!, user, password, ...(pub && priv ? { hmac: { publicKey: pub, privateKey: priv } } : {}) };
}

async function loadTarget(target: Target, request: LoadRequest): Promise<LoadResults> {
  const { config } = target;
  const { scenario, run } = request;
  const err = process.stderr;
  const model = run.vus !== undefined ? `${run.vus} VUs` : run.rate !== undefined ? `${run.rate} iterations/s` : 'the scenario model';
  if (!request.quiet)
    err.write(`pmv6 load: ${scenario.name} against ${config.target} (${target.label ? `${target.label}, ` : ''}${scenario.auth}), ${model}\n`);
  const credentials: Credentials = { user: config.user, password: config.password, ...(config.hmac ? { hmac: config.hmac } : {}) };
  return runLoad({
    ...run,
    target: config.target,
    credentials,
    scenario,
    ...(request.quiet ? {} : { progress: (line: string) => err.write(`${line}\n`) }),
  });
}

async function report(results: LoadResults, request: LoadRequest): Promise<number> {
  const out = process.stdout;
  if (request.out !== undefined) await writeFile(request.out, `${JSON.stringify(results, null, 2)}\n`);
  out.write(`${resultsText(results)}\n`);
  let regression = false;
  if (request.baseline) {
    const c = compareResults(request.baseline, results, { ...DEFAULT_COMPARE, ...request.compare });
    out.write(`${comparisonText(c)}\n`);
    if (request.report !== undefined) await writeFile(request.report, renderLoadComparisonHtml(request.baseline, results, c));
    regression = c.regressions.length > 0;
  }
  return results.pass && !regression ? 0 : 1;
}
