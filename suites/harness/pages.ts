import type { Exchange } from '../../core/exchange.ts';
import { parseLinkHeader, relMap } from '../../core/link.ts';
import { clip } from '../../core/redact.ts';
import { expectHeader, expectStatus, UnverifiableError, violation } from './assert.ts';
import { API_PREFIX, type ApiClient, isUnder } from './client.ts';

export const RELS = ['self', 'prev', 'next', 'first', 'last'] as const;

// The Link header of a paginated response as rel → URL; a missing or malformed header is a
// violation of the clause under test.
export function links(ex: Exchange): Map<string, string> {
  const value = expectHeader(ex, 'link', undefined, 'a Link header');
  const parsed = parseLinkHeader(value);
  if (parsed.errors.length > 0) violation(ex, 'Link entries of the form <URL>; rel="name"', `malformed Link header: ${parsed.errors.join('; ')}`);
  const out = new Map<string, string>();
  for (const [rel, urls] of relMap(parsed.entries)) {
    if (urls.length > 1) violation(ex, `one rel="${rel}" entry`, `${urls.length} rel="${rel}" entries`);
    out.set(rel, urls[0]!);
  }
  return out;
}

export function relSet(ex: Exchange): string[] {
  return [...links(ex).keys()].filter((r) => (RELS as readonly string[]).includes(r)).sort();
}

// Items of a list page, identified by id; a body that is not an array of objects with ids is a
// violation of the list's shape.
export function itemIds(ex: Exchange): number[] {
  expectStatus(ex, 200);
  if (!Array.isArray(ex.json)) violation(ex, 'a JSON array', typeof ex.json);
  return (ex.json as Array<{ id?: unknown }>).map((item) => {
    if (typeof item?.id !== 'number') violation(ex, 'list items with an integer id', clip(JSON.stringify(item), 200));
    return item.id as number;
  });
}

/**
 * The same items, in any order: the spec states no order of a list, so pages are compared as
 * sets of ids (a repeated id still counts, so a page that repeats an item differs).
 */
export function sameItems(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  const x = [...a].sort((p, q) => p - q);
  const y = [...b].sort((p, q) => p - q);
  return x.every((v, i) => v === y[i]);
}

/** The API root (`{target}/index.php/api/v6`) of the request that got `ex`. */
function apiRootOf(ex: Exchange): string {
  const u = ex.request.url;
  const at = u.indexOf(`${API_PREFIX}/`);
  return at < 0 ? u : u.slice(0, at + API_PREFIX.length);
}

/**
 * A Link target as an absolute URL: resolved against the URL of the request that got it (RFC
 * 8288 §3.2). A target outside the API root the request went to (another origin, another base
 * path) is never followed: the harness's credentials go only to the target. The test cannot make
 * its check (UnverifiableError); the oracle reports the Link under PAG-08 with the exchange.
 */
export function linkTarget(ex: Exchange, url: string): string {
  let href: string;
  try {
    href = new URL(url, ex.request.url).href;
  } catch {
    throw new UnverifiableError(`the Link URL <${clip(url, 200)}> of ${clip(ex.request.url, 200)} does not resolve; not followed`);
  }
  const root = apiRootOf(ex);
  if (!isUnder(href, root)) {
    throw new UnverifiableError(
      `the Link URL <${clip(url, 200)}> of ${clip(ex.request.url, 200)} is outside the target (${root}/); not followed (PAG-08 reports it)`,
    );
  }
  return href;
}

export async function getPage(client: ApiClient, list: string, page: number | undefined, size: number): Promise<Exchange> {
  const path = page === undefined ? `${list}.json` : `${list}/page/${page}.json`;
  return client.get(path, { headers: { 'X-Page-Size': String(size) } });
}

export interface Count {
  num_items: number;
  num_pages: number;
  num_items_per_page: number;
}
