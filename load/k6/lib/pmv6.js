// Shared by the k6 scripts of load/k6/. Plain JS ES module with JSDoc types: real k6 runs it as is.
import http from 'k6/http';
import { check, fail } from 'k6';
import { hmac } from 'k6/crypto';
import encoding from 'k6/encoding';
import exec from 'k6/execution';

/**
 * @typedef {object} Scenario
 * @property {string} name
 * @property {string} description
 * @property {'basic' | 'hmac'} auth
 * @property {number[]} pageSizes
 * @property {number} [maxPages]
 * @property {{ executor: 'constant-arrival-rate', rate: number, timeUnit: string, duration: string, preAllocatedVUs: number, maxVUs: number } | { executor: 'constant-vus', vus: number, duration: string }} load
 * @property {Record<string, string[]>} thresholds
 */

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

/** @param {Scenario} scenario @returns {import('k6/options').Options} */
export function k6Options(scenario) {
  const load = scenario.load;
  const vus = __ENV['PMV6_VUS'];
  const rate = __ENV['PMV6_RATE'];
  const duration = __ENV['PMV6_DURATION'] || load.duration;
  /** @type {import('k6/options').Scenario} */
  const executor =
    vus !== undefined && vus !== ''
      ? { executor: 'constant-vus', vus: Number(vus), duration }
      : load.executor === 'constant-vus'
        ? { executor: 'constant-vus', vus: load.vus, duration }
        : {
            executor: 'constant-arrival-rate',
            rate: rate ? Number(rate) : load.rate,
            timeUnit: load.timeUnit,
            duration,
            preAllocatedVUs: load.preAllocatedVUs,
            maxVUs: load.maxVUs,
          };
  return {
    scenarios: { [scenario.name]: executor },
    thresholds: scenario.thresholds,
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
  if (t.auth === 'hmac' && (t.publicKey === '' || t.privateKey === '')) fail('the hmac scenario needs -e PMV6_HMAC_PUBLIC=… -e PMV6_HMAC_PRIVATE=…');
  if (t.auth === 'basic' && t.user === '') fail('set -e PMV6_USER=… -e PMV6_PASSWORD=…');
  return t;
}

/** product-facts §2.2: the signed URI is the path after `index.php/`, no leading slash, with ?query as sent. @param {string} url */
export function signedUri(url) {
  const rest = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '').replace(/#.*$/, '');
  const q = rest.indexOf('?');
  const at = rest.slice(0, q >= 0 ? q : undefined).indexOf('index.php/');
  return at >= 0 ? rest.slice(at + 'index.php/'.length) : rest.replace(/^\//, '');
}

/** @param {Target} t @param {string} url @param {string} body @returns {Record<string, string>} */
export function authHeaders(t, url, body) {
  if (t.auth === 'basic') return { Authorization: `Basic ${encoding.b64encode(`${t.user}:${t.password}`)}` };
  const timestamp = String(Math.floor(Date.now() / 1000));
  return {
    'X-Public-Key': t.publicKey,
    'X-Request-Timestamp': timestamp,
    'X-Request-Hash': hmac('sha256', t.privateKey, signedUri(url) + timestamp + body, 'hex'),
  };
}

/**
 * @param {Target} t
 * @param {'GET' | 'POST' | 'PUT' | 'DELETE'} method
 * @param {string} url
 * @param {{ body?: unknown, pageSize?: number, name: string }} opts
 */
export function send(t, method, url, opts) {
  const body = opts.body === undefined ? '' : JSON.stringify(opts.body);
  /** @type {Record<string, string>} */
  const headers = { 'Content-Type': JSON_CONTENT_TYPE, ...authHeaders(t, url, body) };
  if (opts.pageSize !== undefined) headers['X-Page-Size'] = String(opts.pageSize);
  const tags = { name: opts.name, ...(opts.pageSize !== undefined ? { page_size: String(opts.pageSize) } : {}) };
  return http.request(method, url, body === '' ? null : body, { headers, tags });
}

/** Link header entries as rel → URL (the first URL of each rel). @param {string | undefined} value */
export function links(value) {
  /** @type {Record<string, string>} */
  const out = {};
  if (!value) return out;
  const re = /<([^>]*)>\s*((?:;\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+\s*=\s*(?:"[^"]*"|[^;,\s]*)\s*)*)/g;
  let m;
  while ((m = re.exec(value)) !== null) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]*))/i.exec(m[2] || '');
    if (!rel) continue;
    for (const r of (rel[1] ?? rel[2] ?? '').toLowerCase().split(/\s+/)) {
      if (r !== '' && !(r in out)) out[r] = m[1] || '';
    }
  }
  return out;
}

/** @param {string} url @param {string} api */
function absolute(url, api) {
  if (/^https?:\/\//i.test(url)) return url;
  const origin = /^(https?:\/\/[^/]+)/i.exec(api);
  return url.startsWith('/') && origin ? origin[1] + url : `${api}/${url}`;
}

/** @param {import('k6/http').RefinedResponse<any>} res */
function jsonBody(res) {
  try {
    return JSON.parse(/** @type {string} */ (res.body));
  } catch {
    return undefined;
  }
}

/**
 * Pagination rules 1-3, 7: one page of a list with `numPages` pages at `pageSize`.
 * @param {import('k6/http').RefinedResponse<any>} res @param {number} page @param {number} numPages @param {number} pageSize
 */
function checkPage(res, page, numPages, pageSize) {
  const rel = links(res.headers['Link']);
  const items = jsonBody(res);
  const tags = { page_size: String(pageSize) };
  check(
    res,
    {
      'page: status 200': (r) => r.status === 200,
      'page: Link has rel="self"': () => 'self' in rel,
      'page: rel="prev" absent on the first page, present after it': () => (page === 1 ? !('prev' in rel) : 'prev' in rel),
      'page: rel="next" absent on the last page, present before it': () => (page >= numPages ? !('next' in rel) : 'next' in rel),
      'page: a single page has only rel="self"': () => numPages > 1 || Object.keys(rel).join() === 'self',
      'page: JSON array no longer than X-Page-Size': () => Array.isArray(items) && items.length <= pageSize && items.length > 0,
    },
    tags,
  );
  return rel;
}

/**
 * Count at `pageSize`, then walk the list by rel="next" from a start page chosen by the
 * iteration's number in the whole test, so that instances sharing a test walk different stretches.
 * @param {Scenario} scenario @param {Target} t
 */
export function walkPasswords(scenario, t) {
  const n = exec.scenario.iterationInTest;
  const sizes = scenario.pageSizes;
  const pageSize = sizes[n % sizes.length] ?? 20;
  const count = send(t, 'GET', `${t.api}/passwords/count.json`, { pageSize, name: 'passwords/count' });
  const c = jsonBody(count);
  const ok = check(count, {
    'count: status 200': (r) => r.status === 200,
    'count: num_items_per_page equals X-Page-Size': () => c !== undefined && c.num_items_per_page === pageSize,
    'count: num_pages = ceil(num_items / page size)': () =>
      c !== undefined && c.num_pages === Math.max(1, Math.ceil(c.num_items / pageSize)) || (c !== undefined && c.num_items === 0),
  });
  if (!ok || c === undefined) return;
  const numPages = Math.max(1, c.num_pages);
  const maxPages = scenario.maxPages ?? numPages;
  const round = Math.floor(n / sizes.length);
  const start = maxPages >= numPages ? 1 : ((round * maxPages) % numPages) + 1;
  let url = start === 1 ? `${t.api}/passwords.json` : `${t.api}/passwords/page/${start}.json`;
  let walked = 0;
  for (let page = start; walked < maxPages; page++) {
    const res = send(t, 'GET', url, { pageSize, name: page === 1 ? 'passwords' : 'passwords/page/{n}' });
    const rel = checkPage(res, page, numPages, pageSize);
    walked++;
    if (res.status !== 200 || !rel['next']) break;
    url = absolute(rel['next'], t.api);
  }
  if (start === 1 && maxPages >= numPages) {
    check(null, { 'walk: rel="next" reaches every page of the count': () => walked === numPages });
  }
}

/**
 * One round of writes with its own cleanup. Names carry the run tag from setup() and the
 * iteration's number in the whole test, unique across instances.
 * @param {Target} t @param {string} runTag
 */
export function mixedRound(t, runTag) {
  const label = `pmv6-load-${runTag}-${exec.scenario.iterationInTest}`;
  const project = send(t, 'POST', `${t.api}/projects.json`, { body: { name: label, parent_id: 0 }, name: 'projects' });
  const p = jsonBody(project);
  if (!check(project, { 'create project: 201 with an integer id': (r) => r.status === 201 && Number.isInteger(p?.id) })) return;
  const created = send(t, 'POST', `${t.api}/passwords.json`, {
    body: { name: label, project_id: p.id, username: 'load', password: `secret-${label}` },
    name: 'passwords',
  });
  const w = jsonBody(created);
  if (check(created, { 'create password: 201 with an integer id': (r) => r.status === 201 && Number.isInteger(w?.id) })) {
    const one = `${t.api}/passwords/${w.id}.json`;
    const shown = send(t, 'GET', one, { name: 'passwords/{id}' });
    check(shown, { 'show password: 200 with its name': (r) => r.status === 200 && jsonBody(r)?.name === label });
    const updated = send(t, 'PUT', one, { body: { name: `${label}-updated` }, name: 'passwords/{id}' });
    check(updated, { 'update password: 204': (r) => r.status === 204 });
    const page = send(t, 'GET', `${t.api}/passwords.json`, { pageSize: 20, name: 'passwords' });
    check(page, {
      'list: status 200': (r) => r.status === 200,
      'list: JSON array no longer than X-Page-Size': (r) => {
        const items = jsonBody(r);
        return Array.isArray(items) && items.length <= 20;
      },
      'list: Link has rel="self"': (r) => 'self' in links(r.headers['Link']),
    });
    const gone = send(t, 'DELETE', one, { name: 'passwords/{id}' });
    check(gone, { 'delete password: 204': (r) => r.status === 204 });
  }
  const removed = send(t, 'DELETE', `${t.api}/projects/${p.id}.json`, { name: 'projects/{id}' });
  check(removed, { 'delete project: 204': (r) => r.status === 204 });
}

/** The credentials work and the target speaks v6 before any load is sent. @param {Target} t */
export function preflight(t) {
  const res = send(t, 'GET', `${t.api}/version.json`, { name: 'version' });
  if (res.status !== 200) fail(`GET ${t.api}/version.json answered ${res.status}: wrong target or credentials`);
  return { runTag: `${Date.now().toString(36)}` };
}

/**
 * The verdict as JSON (PMV6_SUMMARY, default load-<scenario>.json) and one line per threshold.
 * @param {Scenario} scenario @param {any} data
 */
export function summary(scenario, data) {
  const out = __ENV['PMV6_SUMMARY'] || `load-${scenario.name}.json`;
  const lines = [];
  const metrics = data && data.metrics ? data.metrics : {};
  for (const name of Object.keys(metrics)) {
    const th = metrics[name].thresholds;
    if (!th) continue;
    for (const expr of Object.keys(th)) lines.push(`${th[expr].ok ? 'ok  ' : 'FAIL'} ${name} ${expr}`);
  }
  return { [out]: JSON.stringify({ scenario: scenario.name, ...data }, null, 2), stdout: `${scenario.name}\n${lines.join('\n')}\n` };
}
