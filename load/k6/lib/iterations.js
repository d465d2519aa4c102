// The iterations of the load scenarios and their checks, written once. The k6 scripts import this
// file (through ./pmv6.js) and the native engine (load/engine/) runs the same code.
// Decision: no imports, and only syntax that k6 v0.48's Babel accepts (no object spread, `?.`,
// `??`, optional catch binding or class fields): users on older k6 installs run it unchanged.
// Each request goes through `io.send`, which returns the reply (k6) or a promise of it (engine);
// the iterations are async functions, so `await` serves both.

/**
 * @typedef {{ executor: 'constant-arrival-rate', rate: number, timeUnit: string, duration: string, preAllocatedVUs: number, maxVUs: number }} ArrivalRateLoad
 * @typedef {{ executor: 'constant-vus', vus: number, duration: string }} ConstantVusLoad
 * @typedef {{ duration: string, target: number }} Stage
 * @typedef {{ executor: 'ramping-arrival-rate', startRate: number, timeUnit: string, stages: Stage[], preAllocatedVUs: number, maxVUs: number }} RampingArrivalRateLoad
 * @typedef {{ executor: 'ramping-vus', startVUs: number, stages: Stage[] }} RampingVusLoad
 * @typedef {ArrivalRateLoad | ConstantVusLoad | RampingArrivalRateLoad | RampingVusLoad} LoadModel
 * @typedef {{ threshold: string, why: string }} ThresholdSpec
 */

/**
 * load/scenarios/<name>.json (schema: load/scenarios/scenario.schema.json).
 * @typedef {object} Scenario
 * @property {string} name
 * @property {string} description
 * @property {'walk' | 'mixed'} iteration
 * @property {'basic' | 'hmac'} auth
 * @property {number[]} pageSizes
 * @property {number} [maxPages]
 * @property {LoadModel} load
 * @property {Record<string, ThresholdSpec[]>} thresholds
 */

/**
 * What an iteration learns from one response: the status, the Link header (all values joined by
 * ", ") and the body when it was asked for (`readBody`).
 * @typedef {{ status: number, link: string | undefined, body: string | undefined }} Reply
 */

/**
 * @typedef {'GET' | 'POST' | 'PUT' | 'DELETE'} Method
 * @typedef {{ body?: unknown, pageSize?: number, name: string, readBody: boolean, cleanup?: boolean }} SendOptions
 */

/**
 * The engine's side of an iteration.
 * @typedef {object} Io
 * @property {string} api base URL of the API, `…/index.php/api/v6`
 * @property {string} runTag unique to the run; names of created data carry it
 * @property {(method: Method, url: string, o: SendOptions) => Reply | Promise<Reply>} send
 *   `cleanup: true` marks a request sent to undo what the iteration created, even after the end
 *   of the run.
 * @property {(name: string, ok: boolean, tags?: Record<string, string>) => boolean} check
 * @property {() => boolean} sampleBody whether to read and check the body of this list page
 */

/** Parse and check one list-page body in this many, unless told otherwise (every count and write body is read). */
export const DEFAULT_BODY_SAMPLE = 50;

/** The request names (k6 `name` tags, engine endpoint keys) of each iteration. */
export const NAMES = {
  version: 'version',
  count: 'passwords/count',
  firstPage: 'passwords',
  page: 'passwords/page/{n}',
  projects: 'projects',
  project: 'projects/{id}',
  passwords: 'passwords',
  password: 'passwords/{id}',
  sweep: '{kind}/search/{run prefix}',
};

/** @param {number} c */
function isSpace(c) {
  return c === 32 || c === 9;
}

/**
 * The pagination relations as the constant strings they equal: property keys V8 need not look up
 * in its string table on every page.
 * @param {string} r
 */
function knownRel(r) {
  switch (r) {
    case 'self':
      return 'self';
    case 'next':
      return 'next';
    case 'prev':
      return 'prev';
    case 'first':
      return 'first';
    case 'last':
      return 'last';
    default:
      return r;
  }
}

/** The pagination relations by length, and the parameter name `rel`: what `relAt` recognises. */
const RELS_OF_LENGTH = { 4: ['self', 'next', 'prev', 'last'], 5: ['first'], name: ['rel'] };

/**
 * Which of `candidates` (by default the pagination relation of the same length) `value` holds
 * from `start` to `end`, in any ASCII case, as its constant string; undefined for any other text
 * (which the general path of `links` then reads).
 * Decision: no slice and no lower-casing for the five relations every page carries.
 * @param {string} value @param {number} start @param {number} end @param {string[]} [candidates]
 * @returns {string | undefined}
 */
function relAt(value, start, end, candidates) {
  if (candidates === undefined) candidates = end - start === 4 ? RELS_OF_LENGTH[4] : end - start === 5 ? RELS_OF_LENGTH[5] : undefined;
  if (candidates === undefined) return undefined;
  for (let k = 0; k < candidates.length; k++) {
    const name = candidates[k];
    let i = 0;
    while (i < name.length && (value.charCodeAt(start + i) | 32) === name.charCodeAt(i)) i++;
    if (i === name.length) return name;
  }
  return undefined;
}

/**
 * Link header entries as rel → URL (the first URL of each rel): `<url>` then `; name=value`
 * parameters (token or quoted string) up to the next `<`. A character scan, not a regular
 * expression: it runs on every page of a walk, and the regular expression cost the engine
 * about 4 µs a page.
 * @param {string | undefined} value
 * @returns {Record<string, string>}
 */
export function links(value) {
  /** @type {Record<string, string>} */
  const out = {};
  if (!value) return out;
  const n = value.length;
  let i = 0;
  for (;;) {
    const lt = value.indexOf('<', i);
    if (lt < 0) break;
    const gt = value.indexOf('>', lt + 1);
    if (gt < 0) break;
    i = gt + 1;
    // where the value of the first rel parameter starts and ends; -1 when there is none
    let relStart = -1;
    let relEnd = -1;
    for (;;) {
      while (i < n && isSpace(value.charCodeAt(i))) i++;
      if (i >= n || value.charCodeAt(i) !== 59) break;
      i++;
      while (i < n && isSpace(value.charCodeAt(i))) i++;
      const nameStart = i;
      while (i < n) {
        const c = value.charCodeAt(i);
        if (c === 61 || c === 59 || c === 44 || c === 60 || isSpace(c)) break;
        i++;
      }
      const wanted = relStart < 0 && i - nameStart === 3 && relAt(value, nameStart, i, RELS_OF_LENGTH.name) !== undefined;
      while (i < n && isSpace(value.charCodeAt(i))) i++;
      let start = i;
      let end = i;
      if (i < n && value.charCodeAt(i) === 61) {
        i++;
        while (i < n && isSpace(value.charCodeAt(i))) i++;
        if (i < n && value.charCodeAt(i) === 34) {
          const q = value.indexOf('"', i + 1);
          start = i + 1;
          end = q < 0 ? n : q;
          i = end + 1;
        } else {
          start = i;
          while (i < n) {
            const c = value.charCodeAt(i);
            if (c === 59 || c === 44 || c === 60 || isSpace(c)) break;
            i++;
          }
          end = i;
        }
      }
      if (wanted) {
        relStart = start;
        relEnd = end;
      }
    }
    if (relStart < 0) continue;
    const known = relAt(value, relStart, relEnd);
    if (known !== undefined) {
      if (!Object.prototype.hasOwnProperty.call(out, known)) out[known] = value.slice(lt + 1, gt);
      continue;
    }
    const url = value.slice(lt + 1, gt);
    const lower = value.slice(relStart, relEnd).toLowerCase();
    const rels = lower.indexOf(' ') < 0 && lower.indexOf('\t') < 0 ? [lower] : lower.split(/\s+/);
    for (let k = 0; k < rels.length; k++) {
      const r = knownRel(rels[k]);
      if (r && !Object.prototype.hasOwnProperty.call(out, r)) out[r] = url;
    }
  }
  return out;
}

/** RFC 3986 appendix B: scheme, authority, path, query, fragment of a URI reference. */
const URI_PARTS = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/;

/**
 * RFC 3986 §5.2.4: the path with its "." and ".." segments removed.
 * @param {string} path
 */
function removeDotSegments(path) {
  /** @type {string[]} */
  const out = [];
  let input = path;
  while (input.length > 0) {
    if (input.indexOf('../') === 0) input = input.slice(3);
    else if (input.indexOf('./') === 0) input = input.slice(2);
    else if (input.indexOf('/./') === 0) input = input.slice(2);
    else if (input === '/.') input = '/';
    else if (input.indexOf('/../') === 0 || input === '/..') {
      input = `/${input.slice(input === '/..' ? 3 : 4)}`;
      out.pop();
    } else if (input === '.' || input === '..') input = '';
    else {
      const next = input.indexOf('/', input.charAt(0) === '/' ? 1 : 0);
      const end = next < 0 ? input.length : next;
      out.push(input.slice(0, end));
      input = input.slice(end);
    }
  }
  return out.join('');
}

/**
 * A Link target resolved against the URL of the response that carried it (RFC 8288 §3.2: "the
 * URI-Reference ... is resolved relative to the context", RFC 3986 §5.2.2), so `<3.json>` on
 * `…/passwords/page/2.json` is `…/passwords/page/3.json`. Decision: no URL class (k6 has none).
 * @param {string} ref @param {string} base an absolute URL
 */
export function resolveLink(ref, base) {
  const r = URI_PARTS.exec(ref);
  const b = URI_PARTS.exec(base);
  if (r === null || b === null) return ref;
  let scheme = r[1];
  let authority = r[2];
  let path = r[3];
  let query = r[4];
  if (scheme !== undefined) path = removeDotSegments(path);
  else {
    scheme = b[1];
    if (authority !== undefined) path = removeDotSegments(path);
    else {
      authority = b[2];
      if (path === '') {
        path = b[3];
        if (query === undefined) query = b[4];
      } else if (path.charAt(0) === '/') path = removeDotSegments(path);
      else {
        const merged = authority !== undefined && b[3] === '' ? `/${path}` : b[3].slice(0, b[3].lastIndexOf('/') + 1) + path;
        path = removeDotSegments(merged);
      }
    }
  }
  let out = scheme !== undefined ? `${scheme}:` : '';
  if (authority !== undefined) out += `//${authority}`;
  out += path;
  if (query !== undefined) out += `?${query}`;
  if (r[5] !== undefined) out += `#${r[5]}`;
  return out;
}

/** @param {string | undefined} text @returns {any} */
function json(text) {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (_notJson) {
    return undefined;
  }
}

/** @param {Record<string, string>} rel @param {string} name */
function has(rel, name) {
  return Object.prototype.hasOwnProperty.call(rel, name);
}

/** Scheme, authority and path of an absolute http(s) URL. */
const ABSOLUTE = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)/i;

/**
 * Whether `url` is under the API root `api` (`…/index.php/api/v6`): the same scheme and host, a
 * path below the root's, no "." or ".." segments (also %2e) and no backslash. Both engines send
 * credentials with every request, so a Link target elsewhere is never followed.
 * @param {string} url @param {string} api
 */
export function onTarget(url, api) {
  const u = ABSOLUTE.exec(url);
  const a = ABSOLUTE.exec(api);
  if (u === null || a === null) return false;
  if (u[1].toLowerCase() !== a[1].toLowerCase() || u[2].toLowerCase() !== a[2].toLowerCase() || u[2].indexOf('@') >= 0) return false;
  const path = u[3];
  if (/(^|\/)(\.|%2e){1,2}(\/|$)/i.test(path) || path.indexOf('\\') >= 0) return false;
  const root = a[3].replace(/\/+$/, '');
  return path.indexOf(`${root}/`) === 0;
}

/**
 * Pagination rules 1-3, 7 on one page of a list with `numPages` pages at `pageSize`; the body
 * only when it was read.
 * @param {Io} io @param {Reply} r @param {number} page @param {number} numPages @param {number} pageSize
 */
export function checkPage(io, r, page, numPages, pageSize) {
  const rel = links(r.link);
  const tags = { page_size: String(pageSize) };
  io.check('page: status 200', r.status === 200, tags);
  io.check('page: Link has rel="self"', has(rel, 'self'), tags);
  io.check('page: rel="prev" absent on the first page, present after it', page === 1 ? !has(rel, 'prev') : has(rel, 'prev'), tags);
  io.check('page: rel="next" absent on the last page, present before it', page >= numPages ? !has(rel, 'next') : has(rel, 'next'), tags);
  io.check('page: a single page has only rel="self"', numPages > 1 || Object.keys(rel).join() === 'self', tags);
  if (r.body !== undefined) {
    const items = json(r.body);
    io.check('page: JSON array no longer than X-Page-Size', Array.isArray(items) && items.length <= pageSize, tags);
  }
  return rel;
}

/**
 * Count at a page size, then walk the list by rel="next". Iteration `n` (unique in the whole
 * test, across k6 instances) takes the page sizes in turn and, when a walk is capped at
 * `maxPages`, starts where the previous walk at that size stopped, so instances walk different
 * stretches.
 * @param {Io} io @param {Scenario} scenario @param {number} n
 */
export async function walk(io, scenario, n) {
  const sizes = scenario.pageSizes;
  const pageSize = sizes[n % sizes.length] || 20;
  const count = await io.send('GET', `${io.api}/passwords/count.json`, { pageSize: pageSize, name: NAMES.count, readBody: true });
  const c = json(count.body);
  const counted = c !== null && typeof c === 'object' && typeof c.num_items === 'number';
  const ok = [
    io.check('count: status 200', count.status === 200),
    io.check('count: num_items_per_page equals X-Page-Size', counted && c.num_items_per_page === pageSize),
    io.check(
      'count: num_pages = ceil(num_items / page size)',
      counted && (c.num_pages === Math.max(1, Math.ceil(c.num_items / pageSize)) || c.num_items === 0),
    ),
  ];
  if (ok.indexOf(false) >= 0) return;
  const numPages = Math.max(1, c.num_pages);
  const maxPages = scenario.maxPages !== undefined ? scenario.maxPages : numPages;
  const start = maxPages >= numPages ? 1 : ((Math.floor(n / sizes.length) * maxPages) % numPages) + 1;
  let url = start === 1 ? `${io.api}/passwords.json` : `${io.api}/passwords/page/${start}.json`;
  let walked = 0;
  // A whole walk whose bodies are sampled (one in --body-sample, as single pages are) reads every
  // page's items: together they must be the count's number, each on one page only, at any size.
  const whole = start === 1 && maxPages >= numPages;
  const full = whole && io.sampleBody();
  /** @type {Record<string, number>} */
  const seen = {};
  let items = 0;
  let repeated = 0;
  let readable = full;
  for (let page = start; walked < maxPages; page++) {
    if (page > start && !io.check('walk: rel="next" stays on the target', onTarget(url, io.api))) break;
    const r = await io.send('GET', url, { pageSize: pageSize, name: page === 1 ? NAMES.firstPage : NAMES.page, readBody: full || io.sampleBody() });
    const rel = checkPage(io, r, page, numPages, pageSize);
    walked++;
    if (full) {
      const list = json(r.body);
      if (!Array.isArray(list)) readable = false;
      else
        for (let i = 0; i < list.length; i++) {
          const raw = list[i] !== null && typeof list[i] === 'object' ? list[i].id : undefined;
          const id = typeof raw === 'number' || typeof raw === 'string' ? String(raw) : undefined;
          items++;
          if (id !== undefined && seen[id] !== undefined) repeated++;
          if (id !== undefined) seen[id] = page;
        }
    }
    if (r.status !== 200 || !rel['next']) break;
    url = resolveLink(rel['next'], url);
  }
  if (whole) io.check('walk: rel="next" reaches every page of the count', walked === numPages);
  if (readable && walked === numPages) {
    io.check('walk: the pages hold as many items as the count', items === c.num_items);
    io.check('walk: no item on two pages', repeated === 0);
  }
}

/**
 * The id of a created object: an integer `id` in a 2XX answer's JSON object; undefined otherwise.
 * @param {Reply} r
 * @returns {number | undefined}
 */
function createdId(r) {
  const o = json(r.body);
  return r.status >= 200 && r.status < 300 && o !== null && typeof o === 'object' && Number.isInteger(o.id) ? o.id : undefined;
}

/**
 * A PUT or DELETE that succeeded: "PUT and DELETE requests that return no content answer 204 No
 * Content" (§4), so 204, or 200 with content.
 * @param {Reply} r
 */
function doneWithOrWithoutContent(r) {
  return r.status === 204 || (r.status === 200 && r.body !== undefined && r.body.trim() !== '');
}

/**
 * One round of writes that removes what it created, even when a check failed or the run ends in
 * the middle. Names carry the run tag and the iteration's number in the whole test.
 * @param {Io} io @param {Scenario} _scenario @param {number} n
 */
export async function mixed(io, _scenario, n) {
  const label = `pmv6-load-${io.runTag}-${n}`;
  const project = await io.send('POST', `${io.api}/projects.json`, { body: { name: label, parent_id: 0 }, name: NAMES.projects, readBody: true });
  const projectId = createdId(project);
  io.check('create project: 201 with an integer id', project.status === 201 && projectId !== undefined);
  if (projectId === undefined) return;
  try {
    const created = await io.send('POST', `${io.api}/passwords.json`, {
      body: { name: label, project_id: projectId, username: 'load', password: `secret-${label}` },
      name: NAMES.passwords,
      readBody: true,
    });
    const passwordId = createdId(created);
    io.check('create password: 201 with an integer id', created.status === 201 && passwordId !== undefined);
    if (passwordId === undefined) return;
    const one = `${io.api}/passwords/${passwordId}.json`;
    try {
      const shown = await io.send('GET', one, { name: NAMES.password, readBody: true });
      const s = json(shown.body);
      io.check('show password: 200 with its name', shown.status === 200 && s !== null && typeof s === 'object' && s.name === label);
      const updated = await io.send('PUT', one, { body: { name: `${label}-updated` }, name: NAMES.password, readBody: true });
      io.check('update password: 204, or 200 with content', doneWithOrWithoutContent(updated));
      const page = await io.send('GET', `${io.api}/passwords.json`, { pageSize: 20, name: NAMES.firstPage, readBody: true });
      const items = json(page.body);
      io.check('list: status 200', page.status === 200);
      io.check('list: JSON array no longer than X-Page-Size', Array.isArray(items) && items.length <= 20);
      io.check('list: Link has rel="self"', has(links(page.link), 'self'));
    } finally {
      const gone = await io.send('DELETE', one, { name: NAMES.password, readBody: true, cleanup: true });
      io.check('delete password: 204, or 200 with content', doneWithOrWithoutContent(gone));
    }
  } finally {
    const removed = await io.send('DELETE', `${io.api}/projects/${projectId}.json`, { name: NAMES.project, readBody: true, cleanup: true });
    io.check('delete project: 204, or 200 with content', doneWithOrWithoutContent(removed));
  }
}

/** Tries of one sweep search or delete before it counts as failed (connections reset, a 5XX). */
const SWEEP_TRIES = 4;

/**
 * The end of a run that writes, in both engines (k6: teardown): what its iterations left behind
 * under the run's names (a create answered without a usable id, a delete refused, an iteration
 * stopped mid-way) is found by searching the run's name prefix and deleted; each search and each
 * delete is tried up to SWEEP_TRIES times (issue 36: one reset connection no longer ends the
 * sweep). Then a last search of each kind says what is verifiably left; `left` is null when that
 * search failed every time (unknown, never "nothing"). Not a check: k6 counts no check of
 * teardown in its summary; each engine reports the counts itself.
 * @param {Io} io
 * @returns {Promise<{ found: number, deleted: number, left: number | null, why?: string }>}
 */
export async function sweep(io) {
  const prefix = `pmv6-load-${io.runTag}-`;
  /** @type {{ found: number, deleted: number, left: number | null, why?: string }} */
  const out = { found: 0, deleted: 0, left: 0 };
  const kinds = ['passwords', 'projects'];
  /** @param {string} kind @returns {Promise<{ items: any[] } | { why: string }>} */
  const search = async (kind) => {
    let why = '';
    for (let t = 0; t < SWEEP_TRIES; t++) {
      const r = await io.send('GET', `${io.api}/${kind}/search/${encodeURIComponent(prefix)}.json`, {
        pageSize: 1000,
        name: NAMES.sweep,
        readBody: true,
        cleanup: true,
      });
      const items = json(r.body);
      if (r.status === 200 && Array.isArray(items))
        return {
          items: items.filter(
            (o) => o !== null && typeof o === 'object' && typeof o.name === 'string' && o.name.indexOf(prefix) === 0 && Number.isInteger(o.id),
          ),
        };
      // A search past the last page, or of nothing, may answer 404 (product facts).
      if (r.status === 404) return { items: [] };
      why = `GET ${kind}/search answered ${r.status || 'nothing'}`;
    }
    return { why: `${why} (${SWEEP_TRIES} tries)` };
  };
  /** @param {string} kind @param {number} id */
  const remove = async (kind, id) => {
    for (let t = 0; t < SWEEP_TRIES; t++) {
      const d = await io.send('DELETE', `${io.api}/${kind}/${id}.json`, {
        name: kind === 'projects' ? NAMES.project : NAMES.password,
        readBody: true,
        cleanup: true,
      });
      if (d.status >= 200 && d.status < 300) return true;
      if (d.status === 404 || (d.status >= 400 && d.status < 500)) return false;
    }
    return false;
  };
  for (let k = 0; k < kinds.length; k++) {
    const kind = kinds[k];
    /** @type {Record<string, boolean>} */
    const seen = {};
    for (let round = 0; round < 10; round++) {
      const found = await search(kind);
      if (!('items' in found)) break;
      let fresh = 0;
      for (let i = 0; i < found.items.length; i++) {
        const o = found.items[i];
        if (seen[o.id]) continue;
        seen[o.id] = true;
        fresh++;
        out.found++;
        if (await remove(kind, o.id)) out.deleted++;
      }
      if (fresh === 0) break;
    }
  }
  // What is verifiably left: a last search of each kind.
  for (let k = 0; k < kinds.length; k++) {
    const found = await search(kinds[k]);
    if ('items' in found) {
      if (out.left !== null) out.left += found.items.length;
    } else {
      out.left = null;
      out.why = found.why;
    }
  }
  return out;
}

/** One line for a sweep's result, or '' when it found nothing and nothing is left. */
export function sweepLine(/** @type {{ found: number, deleted: number, left: number | null, why?: string }} */ s) {
  if (s.found === 0 && s.left === 0) return '';
  const left = s.left === null ? `what is left is unknown: ${s.why}` : `${s.left} left on the target (searched again)`;
  return `the iterations left ${s.found} objects under the run's names; the sweep deleted ${s.deleted}; ${left}`;
}

/** The iteration a scenario file names. */
export const ITERATIONS = { walk: walk, mixed: mixed };

/**
 * Every request an iteration of the scenario can send, as method, name and page size: the
 * groups in which both engines report requests.
 * @param {Scenario} scenario
 * @returns {Array<{ method: Method, name: string, pageSize: number | undefined }>}
 */
export function endpoints(scenario) {
  if (scenario.iteration === 'mixed') {
    return [
      { method: 'POST', name: NAMES.projects, pageSize: undefined },
      { method: 'POST', name: NAMES.passwords, pageSize: undefined },
      { method: 'GET', name: NAMES.password, pageSize: undefined },
      { method: 'PUT', name: NAMES.password, pageSize: undefined },
      { method: 'GET', name: NAMES.firstPage, pageSize: 20 },
      { method: 'DELETE', name: NAMES.password, pageSize: undefined },
      { method: 'DELETE', name: NAMES.project, pageSize: undefined },
      { method: 'GET', name: NAMES.sweep, pageSize: 1000 },
    ];
  }
  /** @type {Array<{ method: Method, name: string, pageSize: number | undefined }>} */
  const out = [];
  for (let i = 0; i < scenario.pageSizes.length; i++) {
    const size = scenario.pageSizes[i];
    out.push({ method: 'GET', name: NAMES.count, pageSize: size });
    out.push({ method: 'GET', name: NAMES.firstPage, pageSize: size });
    out.push({ method: 'GET', name: NAMES.page, pageSize: size });
  }
  return out;
}

/**
 * The k6 submetric of one endpoint and page size (its request count is in the k6 summary).
 * @param {{ method: string, name: string, pageSize: number | undefined }} e
 */
export function endpointSelector(e) {
  return `http_reqs{method:${e.method},name:${e.name}${e.pageSize !== undefined ? `,page_size:${e.pageSize}` : ''}}`;
}
