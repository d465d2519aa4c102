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
