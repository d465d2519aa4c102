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
 * What a finding's reads of a list show, read anew, for `holdsBetweenCounts`'s second reading.
 *
 * - `read`: makes the finding's reads anew, as they were made (user, X-Page-Size), given the count
 *   read before them.
 * - `finding`: the finding a reading shows, undefined when it shows none.
 * - `same`: whether two readings show the same answers (status, Link header, items: `sameItems`).
 * - `first`: the reading the finding was seen in, when it was judged by the count given as
 *   `expected`: the reading made anew is compared with it, and the list is read once; without
 *   it, the list is read twice between the counts.
 */
export interface Reading<C, S, F> {
  read: (before: C) => Promise<S>;
  finding: (reading: S, before: C) => F | undefined;
  same: (a: S, b: S) => boolean;
  first?: S;
}

/**
 * What became of a finding read again: it stands (`finding`, as the reading made anew shows it),
 * or the count before could not be read (`uncounted`), or the reading anew shows none (`gone`),
 * or the list moved (`moved`: the readings or the counts differ).
 */
export type Held<F> = { finding: F } | { finding?: undefined; why: 'uncounted' | 'gone' | 'moved' };

/**
 * The rule (busy installations, issues 25 and 35): "a finding on a list stands only when, between
 * two equal counts, a second reading of the list shows the same answers". Other users write to
 * the lists the run reads, and the run's own write marks do not see them, so a finding that holds
 * reads of a list to each other (a page to its count, one walk to another, Basic to HMAC) is
 * reported only when the list's count read before and after its reads made anew is the same, the
 * reads made anew still show it, and a second reading shows the same answers (between two equal
 * counts a list can still move and come back: another user creates one item and deletes another;
 * measured: PAG-04 and SIZE-10 on a populated, busy installation). Ask it only when a finding is
 * about to be reported: a quiet server costs no request.
 *
 * - `count`: reads the list's count.json as the finding's reads were made (user, X-Page-Size);
 *   undefined when it cannot be read, and then the finding does not stand.
 * - `again`: a `Reading` (the rule above; gives a `Held`), or, for a check that reads no list
 *   twice, a function that makes the finding's reads anew and says whether it still holds.
 * - `same`: whether two counts agree (default: `===`, for `num_items` alone).
 * - `expected`: the count the finding was judged by, when it rests on one: the count before must
 *   agree with it too.
 *
 * Serves every list finding: the relations (`Relations.heldStill`, suites/relations), the
 * oracle's count-based findings (`ResponseOracle.confirmed`), every-list's `held` (per try) and
 * visibility's `idsOfList` (suites/pagination, suites/general).
 */
export async function holdsBetweenCounts<C, S, F>(
  count: () => Promise<C | undefined>,
  again: Reading<C, S, F>,
  opts?: { same?: (a: C, b: C) => boolean; expected?: C },
): Promise<Held<F>>;
export async function holdsBetweenCounts<C>(
  count: () => Promise<C | undefined>,
  again: () => Promise<boolean>,
  opts?: { same?: (a: C, b: C) => boolean; expected?: C },
): Promise<boolean>;
export async function holdsBetweenCounts<C, S, F>(
  count: () => Promise<C | undefined>,
  again: Reading<C, S, F> | (() => Promise<boolean>),
  opts: { same?: (a: C, b: C) => boolean; expected?: C } = {},
): Promise<Held<F> | boolean> {
  const same = opts.same ?? ((a: C, b: C) => a === b);
  const before = await count();
  const counted = before !== undefined && (opts.expected === undefined || same(before, opts.expected));
  if (typeof again === 'function') {
    if (!counted || !(await again())) return false;
    const after = await count();
    return after !== undefined && same(after, before);
  }
  if (before === undefined) return { why: 'uncounted' };
  if (!counted) return { why: 'moved' };
  const reading = await again.read(before);
  const finding = again.finding(reading, before);
  if (finding === undefined) return { why: 'gone' };
  const second = again.first ?? (await again.read(before));
  if (!again.same(reading, second)) return { why: 'moved' };
  const after = await count();
  return after !== undefined && same(after, before) ? { finding } : { why: 'moved' };
}
