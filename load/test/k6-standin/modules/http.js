import { syncRequest } from './state.js';

function canonical(name) {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, d, c) => d + c.toUpperCase());
}

export function request(method, url, body, params = {}) {
  const headers = { ...(params.headers ?? {}) };
  const payload = body === null || body === undefined ? '' : String(body);
  const started = Date.now();
  const res = syncRequest({ method, url, headers, body: payload, tags: params.tags ?? {} });
  const out = {};
  for (const [k, v] of Object.entries(res.headers)) out[canonical(k)] = Array.isArray(v) ? v.join(', ') : v;
  return {
    status: res.status,
    body: res.body,
    headers: out,
    url,
    error: res.error ?? '',
    error_code: res.error ? 1 : 0,
    request: { method, url, headers, body: payload, cookies: {} },
    timings: { duration: Date.now() - started },
    json(selector) {
      const v = JSON.parse(res.body);
      return selector === undefined ? v : v?.[selector];
    },
  };
}

export const get = (url, params) => request('GET', url, null, params);
export const post = (url, body, params) => request('POST', url, body, params);
export const put = (url, body, params) => request('PUT', url, body, params);
export const del = (url, body, params) => request('DELETE', url, body, params);
export const batch = (reqs) => reqs.map((r) => (Array.isArray(r) ? request(r[0], r[1], r[2] ?? null, r[3]) : request(r.method, r.url, r.body ?? null, r.params)));

export default { request, get, post, put, del, batch };
