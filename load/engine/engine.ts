import { performance } from 'node:perf_hooks';
import { Agent, type Dispatcher } from 'undici';
import { parseLinkHeader, relMap } from '../../suites/harness/link.ts';
import { basicAuthorization, hmacHeaders, signedUri } from '../../suites/harness/signers.ts';
import { holds, parseDuration, type Scenario, type Threshold, parseThreshold } from './scenario.ts';
import { EndpointStats, latencyHistogram, percentileMs, round3, summarise, type LatencySummary } from './stats.ts';
import type { Credentials } from './types.ts';

export const MAX_DURATION_MS = 10 * 60_000;
export const DEFAULT_MAX_REQUESTS = 1_000_000;
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export interface EngineOptions {
  target: string;
  credentials: Credentials;
  scenario: Scenario;
  rate?: number;
  vus?: number;
  durationMs?: number;
  maxRequests?: number;
  extraThresholds?: Threshold[];
  ca?: string;
  insecure?: boolean;
  timeoutMs?: number;
  /** Parse and check one page body in this many (every count and write body is checked). */
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
  thresholds: ThresholdResult[];
  pass: boolean;
}

export class TargetError extends Error {
  override name = 'TargetError';
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string | undefined;
}

class Stopped extends Error {}

export async function runLoad(opts: EngineOptions): Promise<LoadResults> {
  const { scenario } = opts;
  const durationMs = Math.min(opts.durationMs ?? parseDuration(scenario.load.duration), MAX_DURATION_MS);
  const maxRequests = opts.maxRequests ?? DEFAULT_MAX_REQUESTS;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const sampleEvery = Math.max(1, opts.bodySampleEvery ?? 50);
  const model: LoadResults['model'] =
    opts.vus !== undefined
      ? { executor: 'constant-vus', vus: opts.vus }
      : opts.rate !== undefined
        ? { executor: 'constant-arrival-rate', rate: opts.rate, maxVUs: scenario.load.executor === 'constant-arrival-rate' ? scenario.load.maxVUs : Math.max(10, opts.rate) }
        : scenario.load.executor === 'constant-vus'
          ? { executor: 'constant-vus', vus: scenario.load.vus }
          : { executor: 'constant-arrival-rate', rate: ratePerSecond(scenario.load.rate, scenario.load.timeUnit), maxVUs: scenario.load.maxVUs };
  const concurrency = model.executor === 'constant-vus' ? model.vus : model.maxVUs;
  const api = `${opts.target.replace(/\/+$/, '')}/index.php/api/v6`;
  const creds = opts.credentials;
  if (scenario.auth === 'hmac' && !creds.hmac) throw new TargetError(`scenario ${scenario.name} signs with HMAC: give --hmac-public and --hmac-private (or PMV6_HMAC_PUBLIC / PMV6_HMAC_PRIVATE)`);
  const basic = basicAuthorization(creds.user, creds.password);
  const dispatcher: Dispatcher = new Agent({
    connections: concurrency,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 30_000,
    ...(opts.ca || opts.insecure ? { connect: { ...(opts.ca ? { ca: opts.ca } : {}), ...(opts.insecure ? { rejectUnauthorized: false } : {}) } } : {}),
  });

  const endpoints = new Map<string, EndpointStats>();
  const checks = new Map<string, { passes: number; fails: number }>();
  let requests = 0;
  let failed = 0;
  let bytes = 0;
  let pageResponses = 0;
  let stopped = false;
  let window = latencyHistogram();
  let windowRequests = 0;
  let windowFailed = 0;
  const perSecond: LoadResults['perSecond'] = [];

  function check(name: string, ok: boolean): boolean {
    const c = checks.get(name) ?? { passes: 0, fails: 0 };
    if (ok) c.passes++;
    else c.fails++;
    checks.set(name, c);
    return ok;
  }

  function authHeaders(url: string, body: string): Record<string, string> {
    if (scenario.auth === 'basic') return { authorization: basic };
    const h = creds.hmac!;
    return hmacHeaders({ publicKey: h.publicKey, privateKey: h.privateKey, uri: signedUri(url), timestamp: Math.floor(Date.now() / 1000), body });
  }

  async function send(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    o: { body?: unknown; pageSize?: number; name: string; readBody: boolean; cleanup?: boolean },
  ): Promise<Reply> {
    if (!o.cleanup && (stopped || requests >= maxRequests)) throw new Stopped();
    requests++;
    const body = o.body === undefined ? '' : JSON.stringify(o.body);
    const headers: Record<string, string> = { 'content-type': JSON_CONTENT_TYPE, ...authHeaders(url, body) };
    if (o.pageSize !== undefined) headers['x-page-size'] = String(o.pageSize);
    const key = `${method} ${o.name}${o.pageSize !== undefined ? ` [${o.pageSize}]` : ''}`;
    let stats = endpoints.get(key);
    if (!stats) endpoints.set(key, (stats = new EndpointStats(method, o.name, o.pageSize)));
    const t0 = performance.now();
    let reply: Reply;
    let size = 0;
    try {
      const r = await exchange(dispatcher, url, method, headers, body, o.readBody);
      size = r.size;
      reply = r;
    } catch {
      reply = { status: 0, headers: {}, text: undefined };
      check(`${o.name}: no transport error`, false);
    }
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

  function json(text: string | undefined): unknown {
    try {
      return text === undefined ? undefined : JSON.parse(text);
    } catch {
      return undefined;
    }
  }

  /** Pagination rules 1-3, 7 on one page of `numPages`; the body only when sampled. */
  function checkPage(r: Reply, page: number, numPages: number, pageSize: number, sampled: boolean): Map<string, string[]> {
    const rel = relMap(parseLinkHeader(r.headers['link']).entries);
    check('page: status 200', r.status === 200);
    check('page: Link has rel="self"', rel.has('self'));
    check('page: rel="prev" absent on the first page, present after it', page === 1 ? !rel.has('prev') : rel.has('prev'));
    check('page: rel="next" absent on the last page, present before it', page >= numPages ? !rel.has('next') : rel.has('next'));
    check('page: a single page has only rel="self"', numPages > 1 || [...rel.keys()].join() === 'self');
    if (sampled) {
      const items = json(r.text);
      check('page: JSON array no longer than X-Page-Size', Array.isArray(items) && items.length > 0 && items.length <= pageSize);
    }
    return rel;
  }

  async function walk(n: number): Promise<void> {
    const sizes = scenario.pageSizes;
    const pageSize = sizes[n % sizes.length] ?? 20;
    const count = await send('GET', `${api}/passwords/count.json`, { pageSize, name: 'passwords/count', readBody: true });
    const c = json(count.text) as { num_items?: number; num_pages?: number; num_items_per_page?: number } | undefined;
    const ok =
      check('count: status 200', count.status === 200) &&
      check('count: num_items_per_page equals X-Page-Size', c?.num_items_per_page === pageSize) &&
      check(
        'count: num_pages = ceil(num_items / page size)',
        typeof c?.num_items === 'number' && (c.num_pages === Math.max(1, Math.ceil(c.num_items / pageSize)) || c.num_items === 0),
      );
    if (!ok || !c) return;
    const numPages = Math.max(1, c.num_pages ?? 1);
    const maxPages = scenario.maxPages ?? numPages;
    const start = maxPages >= numPages ? 1 : ((Math.floor(n / sizes.length) * maxPages) % numPages) + 1;
    let url = start === 1 ? `${api}/passwords.json` : `${api}/passwords/page/${start}.json`;
    let walked = 0;
    for (let page = start; walked < maxPages; page++) {
      const sampled = pageResponses++ % sampleEvery === 0;
      const r = await send('GET', url, { pageSize, name: page === 1 ? 'passwords' : 'passwords/page/{n}', readBody: sampled });
      const rel = checkPage(r, page, numPages, pageSize, sampled);
      walked++;
      const next = rel.get('next')?.[0];
      if (r.status !== 200 || next === undefined) break;
      url = new URL(next, `${api}/`).href;
    }
    if (start === 1 && maxPages >= numPages) check('walk: rel="next" reaches every page of the count', walked === numPages);
  }

  const runTag = Date.now().toString(36);
  async function mixed(n: number): Promise<void> {
    const label = `pmv6-load-${runTag}-${n}`;
    const project = await send('POST', `${api}/projects.json`, { body: { name: label, parent_id: 0 }, name: 'projects', readBody: true });
    const p = json(project.text) as { id?: number } | undefined;
    if (!check('create project: 201 with an integer id', project.status === 201 && Number.isInteger(p?.id))) return;
    try {
      const created = await send('POST', `${api}/passwords.json`, {
        body: { name: label, project_id: p!.id, username: 'load', password: `secret-${label}` },
        name: 'passwords',
        readBody: true,
      });
      const w = json(created.text) as { id?: number } | undefined;
      if (!check('create password: 201 with an integer id', created.status === 201 && Number.isInteger(w?.id))) return;
      const one = `${api}/passwords/${w!.id}.json`;
      try {
        const shown = await send('GET', one, { name: 'passwords/{id}', readBody: true });
        check('show password: 200 with its name', shown.status === 200 && (json(shown.text) as { name?: string } | undefined)?.name === label);
        const updated = await send('PUT', one, { body: { name: `${label}-updated` }, name: 'passwords/{id}', readBody: true });
        check('update password: 204', updated.status === 204);
        const page = await send('GET', `${api}/passwords.json`, { pageSize: 20, name: 'passwords', readBody: true });
        const items = json(page.text);
        check('list: status 200', page.status === 200);
        check('list: JSON array no longer than X-Page-Size', Array.isArray(items) && items.length <= 20);
        check('list: Link has rel="self"', relMap(parseLinkHeader(page.headers['link']).entries).has('self'));
      } finally {
        const gone = await sendAnyway('DELETE', one, 'passwords/{id}');
        check('delete password: 204', gone.status === 204);
      }
    } finally {
      const removed = await sendAnyway('DELETE', `${api}/projects/${p!.id}.json`, 'projects/{id}');
      check('delete project: 204', removed.status === 204);
    }
  }

  /** Cleanup is sent even after the end of the run or the request bound: at most two per iteration in flight. */
  function sendAnyway(method: 'DELETE', url: string, name: string): Promise<Reply> {
    return send(method, url, { name, readBody: true, cleanup: true });
  }

  const iterate = scenario.name === 'mixed' ? mixed : walk;

  const preflight = await send('GET', `${api}/version.json`, { name: 'version', readBody: true }).catch(() => undefined);
  if (!preflight || preflight.status !== 200) {
    await dispatcher.close();
    throw new TargetError(`GET ${api}/version.json answered ${preflight?.status || 'nothing'}: not a v6 API at this URL, or the credentials are rejected`);
  }
  endpoints.clear();
  checks.clear();
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
    const p = iterate(n)
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
        while (!stopped && performance.now() < end && requests < maxRequests) await launch();
      });
      await Promise.race([Promise.all(loops), sleep(durationMs)]);
    } else {
      const interval = 1000 / model.rate;
      let due = 0;
      while (performance.now() < end && requests < maxRequests) {
        const now = performance.now();
        const target = Math.floor((now - t0) / interval) + 1;
        for (; due < target; due++) {
          if (inFlight >= model.maxVUs) dropped++;
          else launch();
        }
        await sleep(Math.max(1, Math.min(interval, end - now, t0 + due * interval - performance.now())));
      }
    }
    stopped = true;
    await Promise.race([Promise.allSettled([...running]), sleep(timeoutMs + 1000)]);
  } finally {
    clearInterval(ticker);
    stopped = true;
    await dispatcher.close().catch(() => undefined);
  }
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
    ...Object.entries(scenario.thresholds).flatMap(([metric, exprs]) => exprs.map((e) => parseThreshold(metric, e))),
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
    thresholds,
    pass: thresholds.every((t) => t.ok),
  };
}

export function ratePerSecond(rate: number, timeUnit: string): number {
  return (rate * 1000) / parseDuration(timeUnit);
}

/** One request through undici's dispatch handler: no stream objects; the body is kept only when asked for. */
function exchange(
  dispatcher: Dispatcher,
  url: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  headers: Record<string, string>,
  body: string,
  keep: boolean,
): Promise<Reply & { size: number }> {
  const origin = /^https?:\/\/[^/?#]+/i.exec(url)?.[0];
  const u = origin === undefined ? new URL(url) : { origin, pathname: url.slice(origin.length) || '/', search: '' };
  return new Promise((resolve, reject) => {
    let status = 0;
    let resHeaders: Reply['headers'] = {};
    let size = 0;
    const chunks: Buffer[] = [];
    dispatcher.dispatch(
      { origin: u.origin, path: u.pathname + u.search, method, headers, ...(body === '' ? {} : { body }) },
      {
        onRequestStart() {},
        onResponseStart(_c, statusCode, h) {
          status = statusCode;
          resHeaders = h;
        },
        onResponseData(_c, chunk) {
          size += chunk.length;
          if (keep) chunks.push(chunk);
        },
        onResponseEnd() {
          resolve({ status, headers: resHeaders, text: keep ? Buffer.concat(chunks, size).toString('utf8') : undefined, size });
        },
        onResponseError(_c, err) {
          reject(err);
        },
      },
    );
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
