// The k6 side of the scripts of load/k6/: options, target, signing and the k6 `Io` that runs the
// iterations of ./iterations.js. Plain JS with JSDoc types, in the syntax k6 v0.48 accepts.

import { check, fail } from 'k6';
import { hmac } from 'k6/crypto';
import encoding from 'k6/encoding';
import exec from 'k6/execution';
import http from 'k6/http';
import { Counter } from 'k6/metrics';
import { signedUri } from '../../../core/signed-uri.js';
import { DEFAULT_BODY_SAMPLE, endpointSelector, endpoints, ITERATIONS, onTarget, sweep, sweepLine } from './iterations.js';
import { instanceOf, summaryOutputs } from './summary.js';

/** @typedef {import('./iterations.js').Scenario} Scenario */

/**
 * @typedef {object} Target
 * @property {string} api
 * @property {'basic' | 'hmac'} auth
 * @property {string} user
 * @property {string} password
 * @property {string} publicKey
 * @property {string} privateKey
 */

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The milliseconds of a k6 duration ("1m30s", "500ms").
 * @param {string} text
 */
function durationMs(text) {
  /** @type {Record<string, number>} */
  const unit = { ms: 1, s: 1000, m: 60000, h: 3600000 };
  let ms = 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let m = re.exec(text);
  while (m !== null) {
    ms += Number(m[1]) * unit[m[2]];
    m = re.exec(text);
  }
  return ms;
}

/**
 * The stages that fit in `limit` ms (PMV6_DURATION), the last one cut at the value it reaches
 * then, as the native engine cuts a ramp at --duration.
 * @param {number} start @param {import('./iterations.js').Stage[]} stages @param {number} limit
 */
function stagesWithin(start, stages, limit) {
  /** @type {Array<{ duration: string, target: number }>} */
  const out = [];
  let at = 0;
  let from = start;
  for (let i = 0; i < stages.length && at < limit; i++) {
    const d = durationMs(stages[i].duration);
    const span = Math.min(d, limit - at);
    // k6 takes whole targets only: a cut stage ends at the nearest one.
    out.push({ duration: `${span}ms`, target: span === d ? stages[i].target : Math.round(from + ((stages[i].target - from) * span) / d) });
    at += d;
    from = stages[i].target;
  }
  if (at < limit) out.push({ duration: `${limit - at}ms`, target: from });
  return out;
}

/** @param {Scenario} scenario @returns {import('k6/options').Options} */
export function k6Options(scenario) {
  const load = scenario.load;
  const vus = __ENV['PMV6_VUS'];
  const rate = __ENV['PMV6_RATE'];
  let length = 0;
  if (load.executor === 'ramping-vus' || load.executor === 'ramping-arrival-rate')
    for (let i = 0; i < load.stages.length; i++) length += durationMs(load.stages[i].duration);
  const duration = __ENV['PMV6_DURATION'] || (load.executor === 'ramping-vus' || load.executor === 'ramping-arrival-rate' ? `${length}ms` : load.duration);
  /** @type {import('k6/options').Scenario} */
  let executor;
  if (vus !== undefined && vus !== '') executor = { executor: 'constant-vus', vus: Number(vus), duration: duration };
  else if (load.executor === 'constant-vus') executor = { executor: 'constant-vus', vus: load.vus, duration: duration };
  else if (load.executor === 'ramping-vus' && !rate) {
    executor = { executor: 'ramping-vus', startVUs: load.startVUs, stages: stagesWithin(load.startVUs, load.stages, durationMs(duration)) };
  } else if (load.executor === 'ramping-arrival-rate' && !rate) {
    executor = {
      executor: 'ramping-arrival-rate',
      startRate: load.startRate,
      timeUnit: load.timeUnit,
      stages: stagesWithin(load.startRate, load.stages, durationMs(duration)),
      preAllocatedVUs: load.preAllocatedVUs,
      maxVUs: load.maxVUs,
    };
  } else {
    executor = {
      executor: 'constant-arrival-rate',
      rate: rate ? Number(rate) : load.executor === 'constant-arrival-rate' ? load.rate : 1,
      timeUnit: load.executor === 'constant-arrival-rate' ? load.timeUnit : '1s',
      duration: duration,
      preAllocatedVUs: 'preAllocatedVUs' in load ? load.preAllocatedVUs : 1,
      maxVUs: 'maxVUs' in load ? load.maxVUs : Math.max(10, Number(rate)),
    };
  }
  /** @type {Record<string, import('k6/options').Scenario>} */
  const scenarios = {};
  scenarios[scenario.name] = executor;
  /** @type {Record<string, string[]>} */
  const thresholds = {};
  for (const metric of Object.keys(scenario.thresholds)) thresholds[metric] = scenario.thresholds[metric].map((t) => t.threshold);
  // Decision: a threshold that always holds on each endpoint's request count is what makes k6
  // report requests per endpoint and page size in its summary (the native engine's grouping).
  const groups = endpoints(scenario);
  for (let i = 0; i < groups.length; i++) thresholds[endpointSelector(groups[i])] = ['count>=0'];
  return {
    scenarios: scenarios,
    thresholds: thresholds,
    insecureSkipTLSVerify: __ENV['PMV6_INSECURE'] === '1',
    summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
  };
}

/** @param {Scenario} scenario @returns {Target} */
export function target(scenario) {
  const base = (__ENV['PMV6_TARGET'] || '').replace(/\/+$/, '');
  if (!/^https?:\/\//.test(base)) fail('set PMV6_TARGET to the base URL of the installation: -e PMV6_TARGET=https://tpm.example.com');
  const t = {
    api: `${base}/index.php/api/v6`,
    auth: scenario.auth,
    user: __ENV['PMV6_USER'] || '',
    password: __ENV['PMV6_PASSWORD'] || '',
    publicKey: __ENV['PMV6_HMAC_PUBLIC'] || '',
    privateKey: __ENV['PMV6_HMAC_PRIVATE'] || '',
  };
  return t;
}

/**
 * The credentials are there. Decision: judged in setup(), not at init: `k6 archive` (the
 * k6-operator's initializer) runs the init code without the system environment, where the
 * credentials are, and must succeed without them.
 * @param {Target} t
 */
function requireCredentials(t) {
  if (t.auth === 'hmac' && (t.publicKey === '' || t.privateKey === ''))
    fail('the hmac scenario needs PMV6_HMAC_PUBLIC=… PMV6_HMAC_PRIVATE=… in the environment');
  if (t.auth === 'basic' && t.user === '') fail('set PMV6_USER=… PMV6_PASSWORD=… in the environment');
}

/** @param {Target} t @param {string} url @param {string} body @param {Record<string, string>} headers */
function addAuthHeaders(t, url, body, headers) {
  if (t.auth === 'basic') {
    headers['Authorization'] = `Basic ${encoding.b64encode(`${t.user}:${t.password}`)}`;
    return;
  }
  const timestamp = String(Math.floor(Date.now() / 1000));
  headers['X-Public-Key'] = t.publicKey;
  headers['X-Request-Timestamp'] = timestamp;
  headers['X-Request-Hash'] = hmac('sha256', t.privateKey, signedUri(url) + timestamp + body, 'hex');
}

/**
 * @param {Target} t
 * @param {import('./iterations.js').Method} method
 * @param {string} url
 * @param {{ body?: unknown, pageSize?: number, name: string, readBody?: boolean }} opts
 * @param {any} [responseCallback] which statuses are not failures (k6's default: 200 to 399)
 */
export function send(t, method, url, opts, responseCallback) {
  const body = opts.body === undefined ? '' : JSON.stringify(opts.body);
  /** @type {Record<string, string>} */
  const headers = { 'Content-Type': JSON_CONTENT_TYPE };
  addAuthHeaders(t, url, body, headers);
  /** @type {Record<string, string>} */
  const tags = { name: opts.name };
  if (opts.pageSize !== undefined) {
    headers['X-Page-Size'] = String(opts.pageSize);
    tags['page_size'] = String(opts.pageSize);
  }
  /** @type {import('k6/http').Params} */
  const params = { headers: headers, tags: tags };
  if (opts.readBody === false) params.responseType = 'none';
  if (responseCallback !== undefined) params.responseCallback = responseCallback;
  return http.request(method, url, body === '' ? null : body, params);
}

/**
 * Requests sent a second time because the first got no HTTP answer (k6 status 0: the connection
 * closed or reset under it). Decision (issue 39): a transport error on an idempotent request is
 * the client's to absorb, as the native engine does; the first attempt is not a failed request
 * (`http_req_failed`), the second is judged as any request, and the summary counts them here.
 * A POST (a create) is never sent twice.
 */
const retried = new Counter('pmv6_retried');
/** @type {Record<string, boolean>} */
const IDEMPOTENT = { GET: true, PUT: true, DELETE: true };
/** Any status but the default failures (status 0, 4xx, 5xx): the first attempt of a request that may be sent again. */
const FIRST_ATTEMPT = http.expectedStatuses(0, { min: 200, max: 399 });

/**
 * `send`, once more on a transport error when the method is idempotent.
 * @param {Target} t @param {import('./iterations.js').Method} method @param {string} url
 * @param {{ body?: unknown, pageSize?: number, name: string, readBody?: boolean }} opts
 */
function sendAbsorbing(t, method, url, opts) {
  if (!IDEMPOTENT[method]) return send(t, method, url, opts);
  const first = send(t, method, url, opts, FIRST_ATTEMPT);
  if (first.status !== 0) return first;
  retried.add(1);
  return send(t, method, url, opts);
}

/** @type {import('./iterations.js').Io | undefined} */
let vuIo;

/**
 * This VU's `Io`: k6 requests and checks; one list-page body in PMV6_BODY_SAMPLE is read and checked.
 * @param {Target} t @param {string} runTag @returns {import('./iterations.js').Io}
 */
function io(t, runTag) {
  if (vuIo !== undefined && vuIo.runTag === runTag) return vuIo;
  const every = Math.max(1, Number(__ENV['PMV6_BODY_SAMPLE'] || DEFAULT_BODY_SAMPLE));
  let pages = 0;
  vuIo = {
    api: t.api,
    runTag: runTag,
    send(method, url, o) {
      // Credentials go only below the API root: a URL elsewhere is not sent (status 0, a failed check).
      if (!onTarget(url, t.api)) {
        this.check(`${o.name}: request on the target`, false);
        return { status: 0, link: undefined, body: undefined };
      }
      const res = sendAbsorbing(t, method, url, o);
      // as the native engine: a request with no HTTP answer is also a failed check
      if (res.status === 0) this.check(`${o.name}: no transport error`, false);
      return { status: res.status, link: res.headers['Link'], body: o.readBody && typeof res.body === 'string' ? res.body : undefined };
    },
    check(name, ok, tags) {
      /** @type {Record<string, () => boolean>} */
      const sets = {};
      sets[name] = () => ok;
      check(null, sets, tags);
      return ok;
    },
    sampleBody() {
      return pages++ % every === 0;
    },
  };
  return vuIo;
}

/**
 * One iteration of the scenario's kind; its number in the whole test is unique across instances.
 * @param {Scenario} scenario @param {Target} t @param {{ runTag: string }} data
 */
export function iterate(scenario, t, data) {
  return ITERATIONS[scenario.iteration](io(t, data.runTag), scenario, exec.scenario.iterationInTest);
}

/** The credentials work and the target speaks v6 before any load is sent. @param {Target} t */
export function preflight(t) {
  requireCredentials(t);
  // The count of requests sent again shows in every summary, 0 included.
  retried.add(0);
  const res = send(t, 'GET', `${t.api}/version.json`, { name: 'version' });
  if (res.status !== 200) fail(`GET ${t.api}/version.json answered ${res.status}: wrong target or credentials`);
  // Decision: each instance of a split test runs its own setup(); its instance number keeps two
  // that start in the same millisecond from sharing names (and sweeping each other's objects).
  const who = instanceOf();
  return { runTag: Date.now().toString(36) + (who.instance ? `i${who.instance.replace(/[^a-z0-9]/gi, '')}` : '') };
}

/**
 * The verdict: a text summary, the threshold lines and one JSON line on stdout, and a file named
 * per instance (./summary.js).
 * @param {Scenario} scenario @param {any} data
 */
export function summary(scenario, data) {
  return summaryOutputs(scenario.name, data);
}

/**
 * What every k6 script exports for its scenario. k6 reads `options`, `setup`, the default
 * function and `handleSummary` from the entry script itself, so a script opens its scenario at
 * init and re-exports these.
 * @param {Scenario} scenario
 */
export function scenarioScript(scenario) {
  const t = target(scenario);
  return {
    options: k6Options(scenario),
    setup: () => preflight(t),
    /** @param {{ runTag: string }} data */
    run: async (data) => {
      await iterate(scenario, t, data);
    },
    /** A run that writes sweeps what it left behind. @param {{ runTag: string }} data */
    teardown: async (data) => {
      if (scenario.iteration !== 'mixed') return;
      const line = sweepLine(await sweep(io(t, data.runTag)));
      if (line) /** @type {any} */ (globalThis).console.warn(`pmv6: ${line}`);
    },
    /** @param {any} data */
    handleSummary: (data) => summary(scenario, data),
  };
}
