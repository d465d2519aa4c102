/**
 * One request as the kit received it: the raw request target, the headers as sent (names in
 * lower case, repeated headers kept as arrays) and the body the server read (bounded by the
 * reference server's body limit; held only until the checks ran).
 */
import type { IncomingHttpHeaders } from 'node:http';

export interface ReceivedRequest {
  /** Order of arrival, from 1. */
  seq: number;
  /** Arrival, ms since the epoch (the kit's clock). */
  at: number;
  method: string;
  /** The request target exactly as received (path and query, not decoded). */
  rawUrl: string;
  /** The origin the client used (scheme://host), for curl lines. */
  origin: string;
  headers: IncomingHttpHeaders;
  /** The body's bytes; undefined when the server answered before reading it. */
  body: Buffer | undefined;
}

export function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** The request target without its query. */
export function pathOf(rawUrl: string): string {
  const q = rawUrl.indexOf('?');
  return q < 0 ? rawUrl : rawUrl.slice(0, q);
}
