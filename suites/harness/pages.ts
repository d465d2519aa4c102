import type { Exchange } from '../../core/exchange.ts';
import { parseLinkHeader, relMap } from '../../core/link.ts';
import { clip } from '../../core/redact.ts';
import { expectHeader, expectStatus, precondition, UnverifiableError, violation } from './assert.ts';
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

/** The items of a list page: a reply that is not 200 with a JSON array is a violation of the list's shape. */
export function listItems(ex: Exchange): unknown[] {
  expectStatus(ex, 200);
  if (!Array.isArray(ex.json)) violation(ex, 'a JSON array', typeof ex.json);
  return ex.json as unknown[];
}

/** How many items a list page holds (no field of the items is read). */
export function itemCount(ex: Exchange): number {
  return listItems(ex).length;
}

/**
 * The items of a list page, identified by their `id` as text ("3" and 3 are the same item).
 * The spec does not show the fields of list items (§2 Not shown; the product's users lists carry
 * string ids, product facts §7), so an id is the one field a check may lean on, and only as a
 * precondition: items without a number or string id leave the check unverifiable, never failed.
 */
export function itemIds(ex: Exchange): string[] {
  return listItems(ex).map((item) => {
    const id = (item as { id?: unknown } | null)?.id;
    if (typeof id === 'number' || (typeof id === 'string' && id !== '')) return String(id);
    return precondition(`the items of ${ex.request.url} carry no id to tell them apart (their fields are not shown): ${clip(JSON.stringify(item), 120)}`);
  });
}

/**
 * The same items, in any order: the spec states no order of a list, so pages are compared as
 * sets of ids (a repeated id still counts, so a page that repeats an item differs).
 */
export function sameItems(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const x = [...a].sort();
  const y = [...b].sort();
  return x.every((v, i) => v === y[i]);
}

/**
 * The rule of every page walk (issue 35): "A page number above the last page gives 404 Not
 * Found" (§4 rule 5), so no two pages of one list, read in one state at one page size, hold the
 * same items; a walk whose next page is one it already returned has looped, and one that does
 * not end within `PAGE_WALK_LIMIT` pages never ends. Gives the earlier page `ids` repeats (the
 * same items, not none), or undefined. Serves the walks of the relations, the model and
 * page-walk.prop.test.ts.
 */
export function repeatedPage(earlier: Iterable<readonly [number, readonly string[]]>, page: number, ids: readonly string[]): number | undefined {
  if (ids.length === 0) return undefined;
  for (const [n, other] of earlier) if (n !== page && sameItems(other, ids)) return n;
  return undefined;
}

/** Pages a walk follows at most: past them it "never ends" (a violation where it is seen). */
export const PAGE_WALK_LIMIT = 10_000;

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
