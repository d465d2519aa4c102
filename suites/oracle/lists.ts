import { PAGINATED } from '../harness/endpoints.ts';

/** What an API path is, for the pagination rules: a page of a paginated list, or its count. */
export interface ListAddress {
  /** The endpoint table's path of the list, e.g. /projects/{project}/passwords.json. */
  template: string;
  /** The list's path without .json, e.g. /projects/12/passwords. */
  base: string;
  kind: 'page' | 'count';
  /** The page asked for: undefined when none (the list URL itself), else the text between /page/ and .json. */
  page?: string;
  /** 'spec' for §4's /passwords, 'product' for the product's lists (paginated when they show it). */
  source: 'spec' | 'product';
  /** The log grows while it is read (every action, every 401): its count is never cached. */
  volatile: boolean;
}

const ID = '\\d+';
const SEARCH = '[^/]+?';

function compile(template: string): RegExp {
  const stem = template.replace(/\.json$/, '');
  const body = stem
    .split(/(\{[a-z_]+\})/)
    .map((part) => (part === '{search}' ? `(?:${SEARCH})` : /^\{[a-z_]+\}$/.test(part) ? ID : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^(${body})(?:/page/([^/]*)|/(count))?\\.json$`);
}

const LISTS = PAGINATED.map((e) => ({ template: e.path, source: e.source, re: compile(e.path), volatile: e.path.startsWith('/log') }));

/** The list a path (relative to /index.php/api/v6, no query) addresses, or undefined. */
export function listAddress(path: string): ListAddress | undefined {
  for (const l of LISTS) {
    const m = l.re.exec(path);
    if (!m) continue;
    const out: ListAddress = { template: l.template, base: m[1]!, kind: m[3] ? 'count' : 'page', source: l.source, volatile: l.volatile };
    if (m[2] !== undefined) out.page = m[2];
    return out;
  }
  return undefined;
}

/** The page number a /page/N.json (or the list URL, page 1) stands for; undefined when it is not a whole number from 0 up. */
export function pageNumber(page: string | undefined): number | undefined {
  if (page === undefined) return 1;
  if (!/^\d{1,9}$/.test(page)) return undefined;
  return Math.max(1, Number(page));
}

/**
 * "A finding on a list stands only when it holds again between two equal counts" (busy
 * installations, issue 25): other users write to the lists the run reads, and the run's own write
 * marks do not see them, so a finding that holds reads of a list to each other (a page to its
 * count, one walk to another, Basic to HMAC) is reported only when `again` (the finding's reads
 * made anew) still shows it and the list's count read before and after `again` is the same. Ask
 * it only when a finding is about to be reported: a quiet server costs no request.
 *
 * - `count`: reads the list's count.json as the finding's reads were made (user, X-Page-Size);
 *   undefined when it cannot be read, and then the finding does not stand.
 * - `again`: makes the finding's reads anew; true when the finding still holds.
 * - `same`: whether two counts agree (default: `===`, for `num_items` alone).
 * - `expected`: the count the finding was judged by, when it rests on one: the count before must
 *   agree with it too.
 *
 * Serves `Relations.heldStill` (suites/relations) and the oracle's count-based findings
 * (`ResponseOracle.confirmed`); a check that retries (every-list's `held`) can call it per try.
 */
export async function holdsBetweenCounts<C>(
  count: () => Promise<C | undefined>,
  again: () => Promise<boolean>,
  opts: { same?: (a: C, b: C) => boolean; expected?: C } = {},
): Promise<boolean> {
  const same = opts.same ?? ((a: C, b: C) => a === b);
  const before = await count();
  if (before === undefined || (opts.expected !== undefined && !same(before, opts.expected))) return false;
  if (!(await again())) return false;
  const after = await count();
  return after !== undefined && same(after, before);
}
