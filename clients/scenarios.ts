/**
 * Scenarios: what a conforming server may answer, on demand, so a client's own tests can check
 * that the client copes. Switched by `pmv6 clients serve --scenario NAME` or by
 * `PUT {base}/__clients/scenario` (control.ts). Each applies to API requests only, optionally
 * only under one path (relative to /index.php/api/v6) and only for the next N requests.
 */
import { errorObject, JSON_CONTENT_TYPE, MESSAGES } from '../fixtures/reference-server/src/errors.ts';

export const SCENARIOS = {
  normal: 'the reference server as it is',
  'one-page': 'every list has one page: Link carries only rel="self", page 2 and above are 404 "The page number is too high", counts say one page',
  'exact-fill': 'every list is cut to a whole number of pages, so its last page is exactly full (a list shorter than one page becomes empty)',
  'page-too-high': 'every request of page 2 or above answers 404 "The page number is too high"',
  maintenance: 'every request answers 503 "This installation is in Maintenance Mode."',
  'api-off': 'every request answers 403 "API access is disabled"',
  unauthorized: 'every request answers 401 with the error object (type "Unauthorized")',
  'unsupported-media-type': 'every request answers 415 with the error object',
  'server-error': 'every request answers 500 with a JSON body describing the error',
  slow: 'every request is answered after delayMs (default 2000, at most 30000)',
  'page-size-refused': 'every request that carries X-Page-Size answers 400 with the error object',
  'proxy-502': 'every request answers 502 with an HTML page, as a proxy in front of the installation sends it',
  'proxy-503': 'every request answers 503 with an HTML page, as a proxy in front of the installation sends it',
  'proxy-504': 'every request answers 504 with an HTML page, as a proxy in front of the installation sends it',
  'error-extra-fields': 'every request answers 400 with an error object that has extra fields and a type no client knows',
  'connection-closed': 'every request gets 200 and the start of a body, then the connection closes mid-body',
} as const;

export type ScenarioName = keyof typeof SCENARIOS;

export interface ScenarioSetting {
  name: ScenarioName;
  /** Only requests whose API path starts with this (e.g. "/passwords"); default all. */
  path?: string;
  /** Only the next N matching requests, then back to normal; default until switched. */
  times?: number;
  /** For `slow`. */
  delayMs?: number;
}

export const SLOW_DEFAULT_MS = 2000;
export const SLOW_MAX_MS = 30_000;

export const SCENARIO_MESSAGES = {
  unsupportedMediaType: 'Content-Type must be "application/json; charset=utf-8"',
  pageSizeRefused: 'X-Page-Size is not accepted by this installation',
  extraFields: 'The request was refused by a rule of this installation',
} as const;

/** Scenario connection-closed: the start of a body, and the length it promised. */
export const CUT_BODY = '[{"id":1,"name":"pmv6-client-kit-cut","project":{"id":1,"na';
export const CUT_BODY_LENGTH = 4096;

const PROXY_TITLES = { 502: '502 Bad Gateway', 503: '503 Service Temporarily Unavailable', 504: '504 Gateway Time-out' } as const;

/** The error page of a proxy (nginx's, as it sends it), for the proxy-50x scenarios. */
function proxyPage(status: 502 | 503 | 504): CannedReply {
  const title = PROXY_TITLES[status];
  return {
    status,
    body: `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`,
    headers: { 'content-type': 'text/html', server: 'nginx' },
  };
}

/** A scenario from JSON (control protocol or flag); a string is the one-line reason it is refused. */
export function parseScenario(value: unknown): ScenarioSetting | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'the body must be a JSON object such as {"name":"one-page"}';
  const o = value as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!['name', 'path', 'times', 'delayMs'].includes(k)) return `unknown field "${k}" (name, path, times, delayMs)`;
  if (typeof o.name !== 'string' || !(o.name in SCENARIOS)) return `name must be one of ${Object.keys(SCENARIOS).join(', ')}`;
  const out: ScenarioSetting = { name: o.name as ScenarioName };
  if (o.path !== undefined) {
    if (typeof o.path !== 'string' || !o.path.startsWith('/') || o.path.length > 1000) return 'path must be a string starting with "/", e.g. "/passwords"';
    out.path = o.path;
  }
  if (o.times !== undefined) {
    if (typeof o.times !== 'number' || !Number.isInteger(o.times) || o.times < 1 || o.times > 1_000_000) return 'times must be an integer from 1 to 1000000';
    out.times = o.times;
  }
  if (o.delayMs !== undefined) {
    if (o.name !== 'slow') return 'delayMs applies to the scenario slow only';
    if (typeof o.delayMs !== 'number' || !Number.isInteger(o.delayMs) || o.delayMs < 0 || o.delayMs > SLOW_MAX_MS)
      return `delayMs must be an integer from 0 to ${SLOW_MAX_MS}`;
    out.delayMs = o.delayMs;
  }
  return out;
}

export function describeScenario(s: ScenarioSetting): string {
  const parts: string[] = [s.name];
  if (s.path !== undefined) parts.push(`path ${s.path}`);
  if (s.times !== undefined) parts.push(`${s.times} times`);
  if (s.delayMs !== undefined) parts.push(`${s.delayMs} ms`);
  return parts.join(', ');
}

export interface CannedReply {
  status: number;
  body: string;
  headers: Record<string, string>;
}

const canned = (status: number, message: string, headers: Record<string, string> = {}): CannedReply => ({
  status,
  body: JSON.stringify(errorObject(status, message)),
  headers: { 'content-type': JSON_CONTENT_TYPE, ...headers },
});

/** The page number of an API path (1 when it names no page), or undefined when it is not a number. */
export function pageNumber(apiPath: string): number | undefined {
  const m = /\/page\/([^/]+)\.json$/.exec(apiPath);
  if (!m) return 1;
  return /^[0-9]{1,9}$/.test(m[1]!) ? Math.max(Number(m[1]), 1) : undefined;
}

/** The answer a scenario gives in place of the server's, before the server sees the request; undefined = let it through. */
export function cannedReply(s: ScenarioSetting, apiPath: string, pageSizeHeader: unknown): CannedReply | undefined {
  switch (s.name) {
    case 'maintenance':
      return canned(503, MESSAGES.maintenance);
    case 'api-off':
      return canned(403, MESSAGES.apiDisabled);
    case 'unauthorized':
      return canned(401, MESSAGES.basicFailed, { 'www-authenticate': 'Basic realm="Password Manager API", charset="UTF-8"' });
    case 'unsupported-media-type':
      return canned(415, SCENARIO_MESSAGES.unsupportedMediaType);
    case 'server-error':
      return canned(500, MESSAGES.internal);
    case 'proxy-502':
      return proxyPage(502);
    case 'proxy-503':
      return proxyPage(503);
    case 'proxy-504':
      return proxyPage(504);
    case 'error-extra-fields':
      // Decision: 400 (a client error, §2's error object) with a type that is no status's
      // description and fields the spec does not list; a client reads the message and passes on
      // what it does not know.
      return {
        status: 400,
        body: JSON.stringify({
          error: true,
          type: 'Rule Violation',
          message: SCENARIO_MESSAGES.extraFields,
          code: 4711,
          details: { rule: 'pmv6-client-kit', fields: ['name'] },
          trace_id: 'pmv6-0000000000000000',
        }),
        headers: { 'content-type': JSON_CONTENT_TYPE },
      };
    case 'page-size-refused':
      return pageSizeHeader === undefined ? undefined : canned(400, SCENARIO_MESSAGES.pageSizeRefused);
    case 'page-too-high':
    case 'one-page': {
      const page = pageNumber(apiPath);
      return page !== undefined && page >= 2 && /\/page\/[^/]+\.json$/.test(apiPath) ? canned(404, MESSAGES.pageTooHigh) : undefined;
    }
    default:
      return undefined;
  }
}

export function pageTooHighReply(): CannedReply {
  return canned(404, MESSAGES.pageTooHigh);
}

interface Count {
  num_items: number;
  num_pages: number;
  num_items_per_page: number;
}

export function isCount(v: unknown): v is Count {
  const o = v as Record<string, unknown> | null;
  return (
    o !== null && typeof o === 'object' && [o.num_items, o.num_pages, o.num_items_per_page].every((n) => typeof n === 'number' && Number.isInteger(n) && n >= 0)
  );
}

/** The count as the scenario's list would have it. */
export function scenarioCount(name: 'one-page' | 'exact-fill', c: Count): Count {
  const size = c.num_items_per_page;
  if (size <= 0) return c;
  const items = name === 'one-page' ? Math.min(c.num_items, size) : Math.floor(c.num_items / size) * size;
  return { num_items: items, num_pages: Math.ceil(items / size), num_items_per_page: size };
}

/** `<url>; rel="x"` entries, in order. */
export function readLinkHeader(value: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const m of value.matchAll(/<([^>]*)>\s*;\s*rel="?([^",;]+)"?/g)) out.push([m[2]!, m[1]!]);
  return out;
}

export function pageUrl(selfUrl: string, page: number): string {
  return /\/page\/[^/?]+\.json/.test(selfUrl)
    ? selfUrl.replace(/\/page\/[^/?]+\.json/, `/page/${page}.json`)
    : selfUrl.replace(/\.json(?=\?|$)/, `/page/${page}.json`);
}

/** The Link header of page `page` of `pages` (spec §4 rules 1–3), from the self URL the server gave. */
export function linkHeader(selfUrl: string, page: number, pages: number): string {
  const rels: Array<[string, string]> = [['self', selfUrl]];
  if (pages > 1) {
    rels.push(['first', pageUrl(selfUrl, 1)]);
    if (page > 1) rels.push(['prev', pageUrl(selfUrl, page - 1)]);
    if (page < pages) rels.push(['next', pageUrl(selfUrl, page + 1)]);
    rels.push(['last', pageUrl(selfUrl, pages)]);
  }
  return rels.map(([rel, url]) => `<${url}>; rel="${rel}"`).join(', ');
}
