import { performance } from 'node:perf_hooks';
import { DEFAULT_BODY_SAMPLE, ITERATIONS, type Io, type Method, type Reply, type SendOptions } from '../k6/lib/iterations.js';
import { signedUri } from '../../core/signed-uri.js';
import { basicAuthorization, hmacHeaders } from '../../suites/harness/signers.ts';
import { Http1Pool, ResponseTooLarge } from './http1.ts';
import { holds, parseDuration, type Scenario, type Threshold, parseThreshold } from './scenario.ts';
import { EndpointStats, latencyHistogram, percentileMs, round3, summarise, type LatencySummary } from './stats.ts';
import type { Credentials } from './types.ts';

export const MAX_DURATION_MS = 10 * 60_000;
export const DEFAULT_MAX_REQUESTS = 1_000_000;
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Far above a 1000-item page; a response beyond it ends the run as a target error. */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

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

export interface ThresholdResult {
  metric: string;
  expr: string;
  actual: number;
  ok: boolean;
}

export interface LoadResults {
  tool: 'pmv6 load';
  format: 1;
  scenario: string;
  target: string;
  auth: 'basic' | 'hmac';
  model: { executor: 'constant-arrival-rate'; rate: number; maxVUs: number } | { executor: 'constant-vus'; vus: number };
  startedAt: string;
  durationS: number;
  iterations: { started: number; completed: number; dropped: number; interrupted: number };
  requests: { total: number; failed: number; rps: number; bytes: number };
  http_req_duration: LatencySummary;
  checks: { passes: number; fails: number; byName: Record<string, { passes: number; fails: number }> };
  perSecond: Array<{ second: number; requests: number; failed: number; p95: number }>;
  endpoints: Record<string, EndpointResult>;
  /** failed exchanges by cause (no answer, timeout, connection error) */
  transportErrors: Record<string, number>;
  thresholds: ThresholdResult[];
  pass: boolean;
}

export class TargetError extends Error {
  override name = 'TargetError';
}

class Stopped extends Error {}

export async function runLoad(opts: EngineOptions): Promise<LoadResults> {
  const { scenario } = opts;
  const durationMs = Math.min(opts.durationMs ?? parseDuration(scenario.load.duration), MAX_DURATION_MS);
  const maxRequests = opts.maxRequests ?? DEFAULT_MAX_REQUESTS;
  const maxIterations = opts.iterations ?? Infinity;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const sampleEvery = Math.max(1, opts.bodySampleEvery ?? DEFAULT_BODY_SAMPLE);
  const model: LoadResults['model'] =
    opts.vus !== undefined
      ? { executor: 'constant-vus', vus: opts.vus }
      : opts.rate !== undefined
        ? { executor: 'constant-arrival-rate', rate: opts.rate, maxVUs: scenario.load.executor === 'constant-arrival-rate' ? scenario.load.maxVUs : Math.max(10, opts.rate) }
        : scenario.load.executor === 'constant-vus'
          ? { executor: 'constant-vus', vus: scenario.load.vus }
          : { executor: 'constant-arrival-rate', rate: ratePerSecond(scenario.load.rate, scenario.load.timeUnit), maxVUs: scenario.load.maxVUs };
  const concurrency = model.executor === 'constant-vus' ? model.vus : model.maxVUs;
  const base = opts.target.replace(/\/+$/, '');
  const api = `${base}/index.php/api/v6`;
  const creds = opts.credentials;
  if (scenario.auth === 'hmac' && !creds.hmac) throw new TargetError(`scenario ${scenario.name} signs with HMAC: give --hmac-public and --hmac-private (or PMV6_HMAC_PUBLIC / PMV6_HMAC_PRIVATE)`);
  const iterate = ITERATIONS[scenario.iteration];
  const basicLines = `authorization: ${basicAuthorization(creds.user, creds.password)}\r\ncontent-type: ${JSON_CONTENT_TYPE}\r\n`;
  const pool = new Http1Pool({
    origin: base,
    connections: concurrency,
    timeoutMs,
    maxResponseBytes: opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
    ...(opts.insecure ? { insecure: true } : {}),
  });

  const endpoints = new Map<string, EndpointStats>();
  const checks = new Map<string, { passes: number; fails: number }>();
  const transportErrors = new Map<string, number>();
  let requests = 0;
  let failed = 0;
  let bytes = 0;
  let pageResponses = 0;
  let stopped = false;
  let fatal: Error | undefined;
  let window = latencyHistogram();
  let windowRequests = 0;
  let windowFailed = 0;
  const perSecond: LoadResults['perSecond'] = [];

  function check(name: string, ok: boolean): boolean {
    let c = checks.get(name);
    if (c === undefined) checks.set(name, (c = { passes: 0, fails: 0 }));
    if (ok) c.passes++;
    else c.fails++;
    return ok;
  }

  // Basic authorization and a page size make the same lines on every request: built once per page size.
  const basicLinesBySize = new Map<number | undefined, string>();
  function headerLines(url: string, body: string, pageSize: number | undefined): string {
    const sizeLine = pageSize !== undefined ? `x-page-size: ${pageSize}\r\n` : '';
    if (scenario.auth === 'basic') {
      let lines = basicLinesBySize.get(pageSize);
      if (lines === undefined) basicLinesBySize.set(pageSize, (lines = basicLines + sizeLine));
      return lines;
    }
    const h = creds.hmac!;
    const signed = hmacHeaders({ publicKey: h.publicKey, privateKey: h.privateKey, uri: signedUri(url), timestamp: Math.floor(Date.now() / 1000), body });
    let lines = `content-type: ${JSON_CONTENT_TYPE}\r\n`;
    for (const [k, v] of Object.entries(signed)) lines += `${k}: ${v}\r\n`;
    return lines + sizeLine;
  }

  // Keyed by method, then name, then page size: the iterations pass constant strings, whose hash
  // V8 keeps, where a joined key would be a new string to flatten and hash on every request.
  const statsByRequest = new Map<string, Map<string, Map<number | undefined, EndpointStats>>>();
  function statsFor(method: Method, name: string, pageSize: number | undefined): EndpointStats {
    let byName = statsByRequest.get(method);
    if (byName === undefined) statsByRequest.set(method, (byName = new Map()));
    let bySize = byName.get(name);
    if (bySize === undefined) byName.set(name, (bySize = new Map()));
    let stats = bySize.get(pageSize);
    if (stats === undefined) {
      const key = `${method} ${name}${pageSize !== undefined ? ` [${pageSize}]` : ''}`;
      bySize.set(pageSize, (stats = new EndpointStats(method, name, pageSize)));
      endpoints.set(key, stats);
    }
    return stats;
  }

  function settle(stats: EndpointStats, t0: number, reply: Reply, size: number): Reply {
    const ms = performance.now() - t0;
    const ok = reply.status >= 200 && reply.status < 400;
    stats.record(ms, ok, size);
    window.recordValue(Math.max(1, Math.round(ms * 1000)));
    windowRequests++;
    bytes += size;
    if (!ok) {
      failed++;
      windowFailed++;
    }
    return reply;
  }

  function transportError(stats: EndpointStats, t0: number, name: string, e: unknown): Reply {
    if (e instanceof ResponseTooLarge && fatal === undefined) {
      fatal = e;
      stopped = true;
    }
    const cause = e instanceof Error ? e.name : 'Error';
    transportErrors.set(cause, (transportErrors.get(cause) ?? 0) + 1);
    check(`${name}: no transport error`, false);
    return settle(stats, t0, { status: 0, link: undefined, body: undefined }, 0);
  }

  // Decision: no named closures here; tsx (esbuild keepNames) wraps each one in a __name() call
  // every time it is created, which showed in the profile of the hot path.
  function send(method: Method, url: string, o: SendOptions): Promise<Reply> {
    if (!o.cleanup && (stopped || requests >= maxRequests)) return Promise.reject(new Stopped());
    requests++;
    const body = o.body === undefined ? '' : JSON.stringify(o.body);
    const lines = headerLines(url, body, o.pageSize);
    const stats = statsFor(method, o.name, o.pageSize);
    const t0 = performance.now();
    return new Promise((resolve) => {
      pool.send(method, url, lines, body, o.readBody, t0, (e, r) => resolve(e === undefined ? settle(stats, t0, r!, r!.size) : transportError(stats, t0, o.name, e)));
    });
  }

  const io: Io = {
    api,
    runTag: Date.now().toString(36),
    send,
    check,
    sampleBody: () => pageResponses++ % sampleEvery === 0,
  };

  const preflight = await send('GET', `${api}/version.json`, { name: 'version', readBody: true }).catch(() => undefined);
  if (!preflight || preflight.status !== 200) {
    pool.close();
    throw new TargetError(fatal?.message ?? `GET ${api}/version.json answered ${preflight?.status || 'nothing'}: not a v6 API at this URL, or the credentials are rejected`);
  }
  endpoints.clear();
  statsByRequest.clear();
  checks.clear();
  transportErrors.clear();
  requests = 0;
  failed = 0;
  bytes = 0;
  window = latencyHistogram();
  windowRequests = 0;
  windowFailed = 0;

  let started = 0;
  let completed = 0;
  let dropped = 0;
  let interrupted = 0;
  let inFlight = 0;
  const running = new Set<Promise<void>>();
  const startedAt = new Date();
  const t0 = performance.now();

  function launch(): Promise<void> {
    const n = started++;
    inFlight++;
    const p = iterate(io, scenario, n)
      .then(() => void completed++)
      .catch((e: unknown) => {
        if (e instanceof Stopped) interrupted++;
        else {
          check('iteration: no exception', false);
          interrupted++;
        }
      })
      .finally(() => {
        inFlight--;
        running.delete(p);
      });
    running.add(p);
    return p;
  }

  const ticker = setInterval(() => {
    const second = perSecond.length + 1;
    perSecond.push({ second, requests: windowRequests, failed: windowFailed, p95: percentileMs(window, 95) });
    const passes = [...checks.values()].reduce((a, c) => a + c.passes, 0);
    const total = [...checks.values()].reduce((a, c) => a + c.passes + c.fails, 0);
    opts.progress?.(
      `${String(second).padStart(4)}s  ${windowRequests} req/s  p95 ${percentileMs(window, 95).toFixed(1)} ms  ` +
        `iterations ${completed}/${started} dropped ${dropped}  failed ${failed}/${requests}  checks ${total === 0 ? '-' : ((100 * passes) / total).toFixed(2) + '%'}  in flight ${inFlight}`,
    );
    window = latencyHistogram();
    windowRequests = 0;
    windowFailed = 0;
  }, 1000);

  const end = t0 + durationMs;
  try {
    if (model.executor === 'constant-vus') {
      const loops = Array.from({ length: model.vus }, async () => {
        while (!stopped && performance.now() < end && requests < maxRequests && started < maxIterations) await launch();
      });
      await Promise.race([Promise.all(loops), sleep(durationMs)]);
    } else {
      const interval = 1000 / model.rate;
      let due = 0;
      while (!stopped && performance.now() < end && requests < maxRequests && started < maxIterations) {
        const now = performance.now();
        const target = Math.floor((now - t0) / interval) + 1;
        for (; due < target && started < maxIterations; due++) {
          if (inFlight >= model.maxVUs) dropped++;
          else launch();
        }
        await sleep(Math.max(1, Math.min(interval, end - now, t0 + due * interval - performance.now())));
      }
    }
    if (started >= maxIterations) await Promise.race([Promise.allSettled([...running]), sleep(Math.max(0, end - performance.now()))]);
    stopped = true;
    await Promise.race([Promise.allSettled([...running]), sleep(timeoutMs + 1000)]);
  } finally {
    clearInterval(ticker);
    stopped = true;
    pool.close();
  }
  if (fatal) throw new TargetError(fatal.message);
  const durationS = round3((performance.now() - t0) / 1000);

  const all = latencyHistogram();
  const endpointResults: Record<string, EndpointResult> = {};
  for (const [key, s] of [...endpoints.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    all.add(s.hist);
    endpointResults[key] = {
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
  const overall = summarise(all);
  const passes = [...checks.values()].reduce((a, c) => a + c.passes, 0);
  const fails = [...checks.values()].reduce((a, c) => a + c.fails, 0);

  const thresholds: ThresholdResult[] = [];
  const declared = [
    ...Object.entries(scenario.thresholds).flatMap(([metric, specs]) => specs.map((t) => parseThreshold(metric, t.threshold))),
    ...(opts.extraThresholds ?? []),
  ];
  for (const t of declared) {
    let actual: number;
    if (t.metric === 'http_req_duration') {
      const s = t.stat;
      actual =
        s.kind === 'percentile' ? percentileMs(all, s.p) : s.kind === 'avg' ? overall.mean : s.kind === 'med' ? overall.p50 : s.kind === 'min' ? overall.min : s.kind === 'max' ? overall.max : s.kind === 'count' ? overall.count : NaN;
    } else if (t.metric === 'http_req_failed') actual = t.stat.kind === 'count' ? failed : requests === 0 ? 0 : failed / requests;
    else if (t.metric === 'checks') actual = t.stat.kind === 'count' ? fails : passes + fails === 0 ? 1 : passes / (passes + fails);
    else actual = dropped;
    thresholds.push({ metric: t.metric, expr: t.expr, actual: round3(actual * 1000) / 1000, ok: Number.isFinite(actual) && holds(actual, t.op, t.value) });
  }

  return {
    tool: 'pmv6 load',
    format: 1,
    scenario: scenario.name,
    target: opts.target,
    auth: scenario.auth,
    model,
    startedAt: startedAt.toISOString(),
    durationS,
    iterations: { started, completed, dropped, interrupted },
    requests: { total: requests, failed, rps: round3(requests / durationS), bytes },
    http_req_duration: overall,
    checks: { passes, fails, byName: Object.fromEntries([...checks.entries()].sort(([a], [b]) => a.localeCompare(b))) },
    perSecond,
    endpoints: endpointResults,
    transportErrors: Object.fromEntries(transportErrors),
    thresholds,
    pass: thresholds.every((t) => t.ok),
  };
}

export function ratePerSecond(rate: number, timeUnit: string): number {
  return (rate * 1000) / parseDuration(timeUnit);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
