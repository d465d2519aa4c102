// A load run: parse the model → transport (./transport.ts) → preflight → iterations
// (./run-iterations.ts) → results and thresholds (./thresholds.ts).
import { TargetError } from '../../core/errors.ts';
import { DEFAULT_BODY_SAMPLE, ITERATIONS, sweep } from '../k6/lib/iterations.js';
import { JsonLinesOutput } from './live-json.ts';
import { RunMetrics, type Second } from './metrics.ts';
import { type IterationsRun, modelConcurrency, type RunModel, runIterations } from './run-iterations.ts';
import { modelDurationMs, parseDuration, parseThreshold, type Scenario, type Threshold } from './scenario.ts';
import { type LatencySummary, latencyHistogram, round3, summarise } from './stats.ts';
import { evaluateThresholds, type ThresholdResult } from './thresholds.ts';
import { createTransport } from './transport.ts';
import type { Credentials } from './types.ts';

export type { ThresholdResult };

export const MAX_DURATION_MS = 10 * 60_000;
export const DEFAULT_MAX_REQUESTS = 1_000_000;
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Far above a 1000-item page; a response beyond it ends the run as a target error. */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export interface EngineOptions {
  target: string;
  credentials: Credentials;
  scenario: Scenario;
  rate?: number;
  vus?: number;
  durationMs?: number;
  maxRequests?: number;
  /** start at most this many iterations (k6's shared-iterations bound), then end when they have */
  iterations?: number;
  extraThresholds?: Threshold[];
  ca?: string;
  insecure?: boolean;
  /** deadline of each whole request (queueing, connecting, head and body) */
  timeoutMs?: number;
  /** the most bytes read for one response */
  maxResponseBytes?: number;
  /** Parse and check one list-page body in this many (every count and write body is checked). */
  bodySampleEvery?: number;
  progress?: (line: string) => void;
  /** write the live metrics to this file as k6's `--out json=FILE` does (./live-json.ts) */
  liveJson?: string;
}

export interface EndpointResult extends LatencySummary {
  key: string;
  method: string;
  name: string;
  pageSize: number | null;
  errors: number;
  rps: number;
  bytes: number;
  /** uniform sample of latencies (ms), for the baseline comparison */
  samples: number[];
}

export interface LoadResults {
  tool: 'pmv6 load';
  format: 1;
  scenario: string;
  target: string;
  auth: 'basic' | 'hmac';
  model: RunModel;
  startedAt: string;
  durationS: number;
  iterations: { started: number; completed: number; dropped: number; interrupted: number };
  /** a writing run: what its end-of-run sweep found under the run's names, and deleted */
  swept?: { found: number; deleted: number; left: number | null; why?: string };
  requests: { total: number; failed: number; rps: number; bytes: number };
  http_req_duration: LatencySummary;
  checks: { passes: number; fails: number; byName: Record<string, { passes: number; fails: number }> };
  /** one row a second, the last one the run's remainder (`seconds` < 1) */
  perSecond: Second[];
  endpoints: Record<string, EndpointResult>;
  /** failed exchanges by cause (no answer, timeout, connection error) */
  transportErrors: Record<string, number>;
  /**
   * Requests sent a second time because the kept-alive connection they went out on closed before
   * any byte of an answer (the client's to absorb: not a failed request, not a transport error).
   */
  retried: number;
  thresholds: ThresholdResult[];
  pass: boolean;
}

export async function runLoad(opts: EngineOptions): Promise<LoadResults> {
  const { scenario } = opts;
  if (scenario.auth === 'hmac' && !opts.credentials.hmac) {
    throw new TargetError(`scenario ${scenario.name} signs with HMAC: give --hmac-public and --hmac-private (or PMV6_HMAC_PUBLIC / PMV6_HMAC_PRIVATE)`);
  }
  const model = runModel(opts);
  const durationMs = Math.min(opts.durationMs ?? modelDurationMs(scenario.load), MAX_DURATION_MS);
  const maxRequests = opts.maxRequests ?? DEFAULT_MAX_REQUESTS;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const metrics = new RunMetrics();
  const transport = createTransport(
    {
      target: opts.target,
      credentials: opts.credentials,
      auth: scenario.auth,
      connections: modelConcurrency(model),
      timeoutMs,
      maxResponseBytes: opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      maxRequests,
      sampleEvery: opts.bodySampleEvery ?? DEFAULT_BODY_SAMPLE,
      ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
      ...(opts.insecure ? { insecure: true } : {}),
    },
    metrics,
  );

  const api = transport.io.api;
  const preflight = await transport.send('GET', `${api}/version.json`, { name: 'version', readBody: true }).catch(() => undefined);
  if (preflight?.status !== 200) {
    transport.close();
    const answer = `GET ${api}/version.json answered ${preflight?.status || 'nothing'}`;
    throw new TargetError(transport.fatal?.message ?? `${answer}: not a v6 API at this URL, or the credentials are rejected`);
  }
  metrics.reset();
  const declared = [
    ...Object.entries(scenario.thresholds).flatMap(([metric, specs]) => specs.map((t) => parseThreshold(metric, t.threshold))),
    ...(opts.extraThresholds ?? []),
  ];
  const live = opts.liveJson === undefined ? undefined : new JsonLinesOutput(opts.liveJson, scenario.name, declared);
  metrics.live = live;

  let run: IterationsRun;
  try {
    run = await runIterations(
      ITERATIONS[scenario.iteration],
      scenario,
      model,
      { durationMs, maxIterations: opts.iterations ?? Infinity, maxRequests, timeoutMs },
      transport,
      metrics,
      opts.progress,
    );
    // After failed checks, interrupts and thresholds alike: the sweep's requests are cleanup.
    if (scenario.iteration === 'mixed' && !transport.fatal) run.swept = await sweep(transport.io);
  } finally {
    transport.close();
    metrics.live = undefined;
    live?.close();
  }
  if (transport.fatal) throw new TargetError(transport.fatal.message);
  return results(opts, scenario, model, metrics, run, declared, transport.retried);
}

/** The executor and its size: --vus or --rate from the command line over the scenario's own model. */
function runModel(opts: EngineOptions): RunModel {
  const load = opts.scenario.load;
  if (opts.vus !== undefined) return { executor: 'constant-vus', vus: opts.vus };
  if (opts.rate !== undefined) {
    return { executor: 'constant-arrival-rate', rate: opts.rate, maxVUs: 'maxVUs' in load ? load.maxVUs : Math.max(10, opts.rate) };
  }
  switch (load.executor) {
    case 'constant-vus':
      return { executor: 'constant-vus', vus: load.vus };
    case 'constant-arrival-rate':
      return { executor: 'constant-arrival-rate', rate: ratePerSecond(load.rate, load.timeUnit), maxVUs: load.maxVUs };
    case 'ramping-vus':
      return {
        executor: 'ramping-vus',
        startVUs: load.startVUs,
        stages: load.stages.map((s) => ({ durationMs: parseDuration(s.duration), target: s.target })),
      };
    case 'ramping-arrival-rate':
      return {
        executor: 'ramping-arrival-rate',
        startRate: ratePerSecond(load.startRate, load.timeUnit),
        stages: load.stages.map((s) => ({ durationMs: parseDuration(s.duration), target: ratePerSecond(s.target, load.timeUnit) })),
        maxVUs: load.maxVUs,
      };
  }
}

function results(
  opts: EngineOptions,
  scenario: Scenario,
  model: RunModel,
  metrics: RunMetrics,
  run: IterationsRun,
  declared: Threshold[],
  retried: number,
): LoadResults {
  const { durationS } = run;
  const all = latencyHistogram();
  const endpoints: Record<string, EndpointResult> = {};
  for (const [key, s] of [...metrics.endpoints.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    all.add(s.hist);
    endpoints[key] = {
      key,
      method: s.method,
      name: s.name,
      pageSize: s.pageSize ?? null,
      ...summarise(s.hist),
      errors: s.errors,
      rps: round3(s.count / durationS),
      bytes: s.bytes,
      samples: s.samples,
    };
  }
  const latency = summarise(all);
  const checks = metrics.checkTotals();
  const measured = {
    latencies: all,
    latency,
    requests: metrics.requests,
    failed: metrics.failed,
    checks,
    dropped: run.dropped,
    durationS,
    endpoints: [...metrics.endpoints.values()],
  };
  const thresholds = evaluateThresholds(declared, measured);
  return {
    tool: 'pmv6 load',
    format: 1,
    scenario: scenario.name,
    target: opts.target,
    auth: scenario.auth,
    model,
    startedAt: run.startedAt.toISOString(),
    durationS,
    iterations: { started: run.started, completed: run.completed, dropped: run.dropped, interrupted: run.interrupted },
    ...(run.swept ? { swept: run.swept } : {}),
    requests: { total: metrics.requests, failed: metrics.failed, rps: round3(metrics.requests / durationS), bytes: metrics.bytes },
    http_req_duration: latency,
    checks: { passes: checks.passes, fails: checks.fails, byName: Object.fromEntries([...metrics.checks.entries()].sort(([a], [b]) => a.localeCompare(b))) },
    perSecond: metrics.perSecond,
    endpoints,
    transportErrors: Object.fromEntries(metrics.transportErrors),
    retried,
    thresholds,
    pass: thresholds.every((t) => t.ok),
  };
}

export function ratePerSecond(rate: number, timeUnit: string): number {
  return (rate * 1000) / parseDuration(timeUnit);
}
