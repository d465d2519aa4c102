import { type Exchange, headerValue } from '../../core/exchange.ts';
import { expectErrorObject, expectResponse, expectSchema, expectStatus, ViolationError, violation } from '../harness/assert.ts';
import { PAGE_TOO_HIGH } from '../harness/checks.ts';
import { type ClauseTestContext, clauseTest } from '../harness/clause-test.ts';
import { inFlight } from '../harness/config.ts';
import { type Endpoint, kindsOf, label, listBase, notServed, PAGINATED, useEndpoints } from '../harness/endpoints.ts';
import { exclusiveReads } from '../harness/gate.ts';
import { ahead, inOrder } from '../harness/in-order.ts';
import { type Count, getPage, itemCount, itemIds, links, relSet, sameItems } from '../harness/pages.ts';
import { validate } from '../harness/schemas.ts';
import { useSession } from '../harness/session.ts';
import { testsSideBySide } from '../harness/suite-api.ts';
import { holdsBetweenCounts } from '../oracle/lists.ts';
import { oracleTest } from '../oracle/probe.ts';

// The pagination rules of §4 over every list of the endpoint table: §4's /passwords.json and the
// lists the product marks paginated (product facts §6). Decision: "which lists are paginated
// [is] not shown", so a product list is held to the rules when it shows it is paginated: it
// answers with a Link header or serves /count.json. A product list that answers 404 or 405 is
// not served; one without either mark is recorded as not paginated. Each list is grown by the
// run to 12 items where it can: three pages of 5 (first, middle, last), two exactly filled pages
// of 6, one exactly filled page of 12, one page without X-Page-Size. The response oracle
// (suites/oracle/) judges every page and count these tests fetch; the tests assert what needs
// the list as a whole. The exhaustive walks (page-walk.prop.test.ts) stay on passwords.
//
// Decision (issue 38: no serial tail): the file runs beside the other files. Its own lists (a
// project's passwords, the searches for the file's names, its user's lists, the log search) are
// written by no other file of the run, and are grown and read beside them. The lists every file
// writes to as the Admin (`SHARED`: all projects, passwords, personal passwords, favorites,
// users, groups) would move under a check on every read beside them, and a list that moved is
// left out of the check (`held`): its power would be lost. Their reads that are held to each
// other (a page to the count read before it, page 0 to page 1) are made in one short exclusive
// section (`section`), every check's at once; the reads judged each on its own (a count, page 1's
// Link header) are made beside the others. The log lists grow whatever is done (every action
// writes to them, §1 rule 5): the checks that hold reads to each other leave them out (`steady`).

testsSideBySide('after the lists are grown once (the shared probe), every test only reads them');
const s = useSession();
const calls = useEndpoints(s);
const SIZE = 5;
const GROW_TO = 12;
const MESSAGE = PAGE_TOO_HIGH;

/** The lists every file of the run writes to as the Admin: the whole installation's, named by no object of the file. */
const SHARED: ReadonlySet<Endpoint> = new Set(PAGINATED.filter((e) => !e.path.includes('{') && !e.path.startsWith('/log')));

interface List {
  endpoint: Endpoint;
  /** The list's path without .json, e.g. /projects/12/passwords. */
  base: string;
  /** The first page with X-Page-Size 5. */
  first: Exchange;
  /** Its count.json with X-Page-Size 5 (EP-12 checks it is served); the other checks need it. */
  countEx: Exchange;
  /** A shared list read in the section: the checks' first reads of it that ask the same share one request (`once`). */
  reads?: FirstReads;
}

interface FirstReads {
  /** False once the checks' first reads are in: a read made again (`held`) is always sent. */
  open: boolean;
  /** By the list's base and what is read of it. */
  byKey: Map<string, Promise<Exchange>>;
}

/** The read `key` of a list: one request for every check that asks it first in the section, else its own. */
function once(l: List, key: string, read: () => Promise<Exchange>): Promise<Exchange> {
  if (!l.reads?.open) return read();
  const at = `${l.base} ${key}`;
  let p = l.reads.byKey.get(at);
  if (p === undefined) l.reads.byKey.set(at, (p = read()));
  return p;
}

/** A page of the list with X-Page-Size (`getPage`), through `once`. */
const pageOf = (l: List, page: number | undefined, size: number) => once(l, `page ${page} size ${size}`, () => getPage(s.admin, l.base, page, size));

type Counted = List & { count: Count };

const isCounted = (l: List): l is Counted => l.countEx.response?.status === 200 && validate('count', l.countEx.json).length === 0;
const counted = (lists: readonly List[]): Counted[] => lists.flatMap((l) => (isCounted(l) ? [{ ...l, count: l.countEx.json as Count }] : []));

/** The lists whose count.json gave a count object: the checks that need the number of pages. */
async function countedLists(t: ClauseTestContext): Promise<Counted[]> {
  const out = counted(await paginatedLists(t));
  if (out.length === 0) t.unverifiable('no paginated list served a count object (EP-12)');
  return out;
}

/**
 * The lists whose reads can be held to each other. Decision: the action log is written by every
 * action (§1 rule 5), and an installation may log reads and have other users acting, so a log
 * list can grow between a count and a page, or between two pages, as it is read. Checks that
 * hold one read of a list to another leave the log lists out; the response oracle still judges
 * each of their replies alone (Link header and its form, count arithmetic, error objects).
 */
const steady = <L extends List>(all: L[]): L[] => all.filter((l) => !l.endpoint.path.startsWith('/log'));

/** How many times a check is made again on a list that moved under it before the list is left out. */
const TRIES = 3;
const numItems = (ex: Exchange) => (ex.response?.status === 200 ? (ex.json as Partial<Count> | undefined)?.num_items : undefined);

/**
 * Judges `got` (read from `l` by the check) with `judge`, and returns whether the list was
 * judged. Decision: on an installation in use, other users write to its lists while the run
 * reads them (the run's own files write to none of the file's own lists, and to the shared ones
 * not while the section holds the target), so a check that holds one read of a list to another
 * (a page to the count read before it, page 0 to the first page) may see the list move between
 * them. Its violation stands only when the list held still: the check is made again on a fresh
 * count and fresh reads, by the rule of `holdsBetweenCounts` (suites/oracle/lists.ts: between
 * two equal counts, a second reading shows the same answers, `shown`). A list that moved each
 * time is left out of the check after TRIES reads, never failed.
 */
async function held<L extends List, R>(l: L, got: R, reread: (l: L) => Promise<R>, judge: (l: L, got: R) => void, moving: Set<string>): Promise<boolean> {
  try {
    judge(l, got);
    return true;
  } catch (e) {
    if (!(e instanceof ViolationError)) throw e;
    // Decision: the finding stands when it held still twice. Between two equal counts other
    // users may have created one item and deleted another (seen once on the populated, busy
    // field installation: a last page of 3 items under a count that said 2, read twice alike).
    let stood: ViolationError | undefined;
    for (let attempt = 1; attempt <= TRIES + 1; attempt++) {
      const again = await holdsBetweenCounts(
        async () => {
          const countEx = await countOf(l.base);
          if (numItems(countEx) === undefined || validate('count', countEx.json).length > 0) return undefined;
          return { ...l, countEx, ...('count' in l ? { count: countEx.json as Count } : {}) } as L;
        },
        {
          read: reread,
          finding: (got, fresh) => {
            try {
              judge(fresh, got);
              return undefined;
            } catch (e2) {
              if (!(e2 instanceof ViolationError)) throw e2;
              return e2;
            }
          },
          same: (a, b) => shown(a) === shown(b),
        },
        { same: (a, b) => numItems(a.countEx) === numItems(b.countEx) },
      );
      if (again.finding && stood) throw again.finding;
      if (again.finding) {
        stood = again.finding;
        continue;
      }
      // A count that cannot be read leaves the first finding standing (EP-12 judges the count itself).
      if (again.why === 'uncounted') throw e;
      if (again.why === 'gone') return true;
    }
    moving.add(label(l.endpoint));
    return false;
  }
}

/**
 * What a check's reading shows of a list, to tell two readings apart: for each answer in it, its
 * status, Link header and its items' ids (a page) or its JSON (a count, an error).
 */
function shown(got: unknown): string {
  const out: string[] = [];
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    if ('request' in v && ('response' in v || 'error' in v)) {
      const ex = v as Exchange;
      const json = Array.isArray(ex.json) ? ex.json.map((item) => (item as { id?: unknown } | null)?.id) : ex.json;
      out.push(JSON.stringify([ex.response?.status ?? ex.error, headerValue(ex.response?.headers, 'link') ?? null, json ?? null]));
      return;
    }
    for (const x of Object.values(v)) visit(x);
  };
  visit(got);
  return out.join('\n');
}

/** Records the lists a check left out because they moved while read. */
function leftOut(t: ClauseTestContext, moving: Set<string>, judged: number): void {
  if (moving.size === 0) return;
  t.observe(`lists left out: they moved while read ${TRIES + 1} times (other users write to them)`, [...moving]);
  if (judged === 0) t.unverifiable(`every list moved while read (other users write to them): ${[...moving].join(', ')}`);
}

/** Reads every list with `read`, `ahead` of the checks, judges each read with `held`, and records the lists left out. */
async function heldEach<L extends List, R>(
  t: ClauseTestContext,
  lists: readonly L[],
  read: (l: L) => Promise<R>,
  judge: (l: L, got: R) => void,
): Promise<void> {
  const moving = new Set<string>();
  let judged = 0;
  for await (const [l, got] of each(lists, read)) if (await held(l, got, read, judge, moving)) judged++;
  leftOut(t, moving, judged);
}

/**
 * A check that holds reads of a list to each other, made on every list it picks: on the file's own
 * lists beside the other files, on the shared ones in the section (`section`).
 */
interface Check<L extends List, R> {
  /** The lists it judges, of those given. */
  pick: (lists: List[]) => L[];
  read: (l: L) => Promise<R>;
  /** How `held` reads the list again (default: `read`). */
  reread?: (l: L) => Promise<R>;
  judge: (l: L, got: R) => void;
  /** Judged on its read alone, without `held` (SIZE-11: a refusal of X-Page-Size 4 or 2000 is seen in one answer). */
  alone?: true;
  /** Why the check cannot be verified when it judged no list; absent: it judged every list it picked. */
  none?: string;
  /** It needs the lists' counts: unverifiable when no list served a count object (EP-12). */
  counts?: true;
}

/** What a check found on the lists it judged: a violation, or how many it judged and which moved. */
interface Judged {
  judged: number;
  moving: Set<string>;
  violation?: ViolationError;
}

type AnyCheck = Check<List, unknown>;

/**
 * The checks whose tests have begun: the section makes the reads of each one that has begun when
 * it opens (the tests of the file begin together, and the section waits for the probe); a check
 * that begins later gets a section of its own (`sectionFor`).
 */
const asked = new Set<AnyCheck>();

/** Judges one read of a list by the check; whether the list was judged. */
function judgeOne<L extends List, R>(c: Check<L, R>, l: L, got: R, moving: Set<string>): Promise<boolean> {
  if (c.alone) {
    c.judge(l, got);
    return Promise.resolve(true);
  }
  return held(l, got, c.reread ?? c.read, c.judge, moving);
}

/** Makes the check on the file's own lists (beside the others), then takes its outcome on the shared ones from the section. */
async function judgeAll<L extends List, R>(t: ClauseTestContext, c: Check<L, R>): Promise<void> {
  asked.add(c as unknown as AnyCheck);
  const moving = new Set<string>();
  let judged = 0;
  for await (const [l, got] of each(c.pick((await probed()).own), c.read)) if (await judgeOne(c, l, got, moving)) judged++;
  const shared = await sectionFor(c as unknown as AnyCheck);
  if (shared.violation) throw shared.violation;
  judged += shared.judged;
  for (const m of shared.moving) moving.add(m);
  await (c.counts ? countedLists(t) : paginatedLists(t));
  leftOut(t, moving, judged);
  if (judged === 0 && c.none) t.unverifiable(c.none);
}

const sized = { headers: { 'X-Page-Size': String(SIZE) } };

/**
 * After the probe the file reads without writing, so the reads of every list are independent of
 * each other: --concurrency of them go out ahead of the checks, which take the answers in the
 * lists' order, as one after another would (`each` for a loop of checks, which stops sending at
 * the first violation; `all` for the answers at once).
 */
const each = <T, R>(items: readonly T[], fn: (item: T) => Promise<R>): AsyncGenerator<[T, R]> => ahead(items, inFlight(s.config), fn);
const all = <T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> => inOrder(items, inFlight(s.config), fn);

async function countOf(base: string): Promise<Exchange> {
  return s.admin.get(`${base}/count.json`, sized);
}

/** What the probe found: the file's own lists, read; the shared lists' bases, read in the section; why others were left out. */
interface Probed {
  own: List[];
  shared: Array<[Endpoint, string]>;
  notes: Record<string, string>;
}

let probing: Promise<Probed> | undefined;
const probed = () => (probing ??= probe());

async function probe(): Promise<Probed> {
  const own: List[] = [];
  const shared: Array<[Endpoint, string]> = [];
  const notes: Record<string, string> = {};
  // Growing one list adds to others (a favorite project is a project too), so every list is
  // grown first and probed afterwards. The subjects are made side by side (the file's shared
  // objects first, `subjects`); the counts are read side by side, then every list short of
  // GROW_TO items grows, side by side: a list grown by another's growth may end with more.
  const bases: Array<[Endpoint, string]> = [];
  // --read-only: the lists that need no object of the run are still checked, as they are.
  const probed = PAGINATED.map((endpoint) =>
    s.config.readOnly && (kindsOf(endpoint).length > 0 || endpoint.fresh) ? 'read-only run, and the list needs an object of the run' : endpoint,
  );
  for (const [i, subject] of (await calls.subjects(probed)).entries()) {
    const endpoint = PAGINATED[i]!;
    if (typeof subject === 'string') notes[label(endpoint)] = `not probed: ${subject}`;
    else bases.push([endpoint, listBase(endpoint, subject)]);
  }
  const before = await all(bases, ([, base]) => countOf(base));
  const why = await all([...bases.keys()], async (i) => {
    const [endpoint] = bases[i]!;
    const n = (before[i]!.json as Partial<Count> | undefined)?.num_items;
    if (before[i]!.response?.status !== 200 || typeof n !== 'number' || n >= GROW_TO || !endpoint.grow || s.config.readOnly) return undefined;
    return calls.grow(endpoint, GROW_TO - n);
  });
  for (const [i, [endpoint]] of bases.entries()) if (why[i]) notes[label(endpoint)] = `not grown: ${why[i]}`;
  const mine = bases.filter(([endpoint]) => !SHARED.has(endpoint));
  shared.push(...bases.filter(([endpoint]) => SHARED.has(endpoint)));
  const read = await all(mine, ([, base]) => readList(base));
  for (const [i, [endpoint, base]] of mine.entries()) {
    const l = served(endpoint, base, read[i]!, notes);
    if (l) own.push(l);
  }
  return { own, shared, notes };
}

/** A list's count and first page, with X-Page-Size 5: what the checks start from. */
async function readList(base: string): Promise<{ countEx: Exchange; first: Exchange }> {
  const [countEx, first] = await Promise.all([countOf(base), getPage(s.admin, base, undefined, SIZE)]);
  return { countEx, first };
}

/** The list, when it is served as a paginated list; else undefined, the reason in `notes`. */
function served(endpoint: Endpoint, base: string, { countEx, first }: { countEx: Exchange; first: Exchange }, notes: Record<string, string>): List | undefined {
  if (notServed(endpoint, first)) {
    notes[label(endpoint)] = `not served: ${first.response?.status}`;
    return undefined;
  }
  const hasLink = headerValue(first.response?.headers, 'link') !== undefined;
  const countServed = countEx.response?.status === 200 && validate('count', countEx.json).length === 0;
  if (endpoint.source === 'product' && !hasLink && !countServed) {
    notes[label(endpoint)] = `not paginated: no Link header, count.json answered ${countEx.response?.status ?? countEx.error}`;
    return undefined;
  }
  return { endpoint, base, first, countEx };
}

/** The shared lists as read in the section, and what every check found on them there. */
interface Section {
  lists: List[];
  judged: Map<AnyCheck, Judged>;
  notes: Record<string, string>;
}

let sectioned: Promise<Section> | undefined;
/** The section, opened by the first test that needs the shared lists, for every check begun by then. */
const section = () => (sectioned ??= readShared(asked));

/** What the check found on the shared lists: in the section, or in one of its own when it began after the section opened. */
async function sectionFor(c: AnyCheck): Promise<Judged> {
  return (await section()).judged.get(c) ?? (await readShared(new Set([c]))).judged.get(c)!;
}

/**
 * The shared lists' reads, every check's at once, in one exclusive section: nothing else of the
 * run in flight, so they move only by the installation's other users, whom `held` allows for.
 * Their counts and first pages are read there again: the probe's were read while the other
 * files wrote to them. The section opens once the probe has ended (it must not wait on a request
 * the probe started: suites/harness/gate.ts).
 */
async function readShared(asked: ReadonlySet<AnyCheck>): Promise<Section> {
  const { shared } = await probed();
  const checks = [...asked];
  return exclusiveReads(async () => {
    const notes: Record<string, string> = {};
    const read = await all(shared, ([, base]) => readList(base));
    const reads: FirstReads = { open: true, byKey: new Map() };
    const lists = shared.flatMap(([endpoint, base], i) => {
      const l = served(endpoint, base, read[i]!, notes);
      return l ? [{ ...l, reads }] : [];
    });
    const judged = new Map(checks.map((c) => [c, { judged: 0, moving: new Set<string>() } as Judged]));
    const pairs = checks.flatMap((c) => c.pick(lists).map((l) => [c, l] as const));
    // Every check's first reads at once, then the judgments, each with its reads made again where it needs them.
    const got = await all(pairs, ([c, l]) => c.read(l));
    reads.open = false;
    await all([...pairs.keys()], async (i) => {
      const [c, l] = pairs[i]!;
      const found = judged.get(c)!;
      if (found.violation) return;
      try {
        if (await judgeOne(c, l, got[i], found.moving)) found.judged++;
      } catch (e) {
        if (!(e instanceof ViolationError)) throw e;
        found.violation ??= e;
      }
    });
    return { lists, judged, notes };
  });
}

let listing: Promise<List[]> | undefined;

/** Every list held to the rules: the file's own, then the shared ones as read in the section. */
function paginatedLists(t: ClauseTestContext): Promise<List[]> {
  listing ??= (async () => {
    const { own, notes } = await probed();
    const shared = await section();
    const out = [...own, ...shared.lists];
    t.observe(
      'lists held to the pagination rules',
      out.map(
        (l) =>
          `${label(l.endpoint)}: ${(l.countEx.json as Partial<Count> | undefined)?.num_items ?? '?'} items${SHARED.has(l.endpoint) ? ' (read in the section)' : ''}`,
      ),
    );
    const left = { ...notes, ...shared.notes };
    if (Object.keys(left).length > 0) t.observe('lists left out', left);
    if (out.length === 0) t.unverifiable('no list of the table was served as a paginated list');
    return out;
  })();
  return listing;
}

const where = (l: Counted, page: number | string) => `${label(l.endpoint)}, page ${page} of ${l.count.num_pages} (X-Page-Size ${SIZE})`;

clauseTest('PAG-01', 'send a Link header with every paginated list of the endpoint table', async (t) => {
  for (const l of await paginatedLists(t)) {
    expectStatus(l.first, 200);
    links(l.first);
  }
});

// §4: "A count endpoint `/<resource>/count.json` exists for resources that are paginated".
clauseTest(['EP-12', 'RES-11'], 'serve /count.json with a count object of integers for every paginated list of the endpoint table', async (t) => {
  for (const l of await paginatedLists(t)) {
    expectStatus(l.countEx, 200);
    expectSchema(l.countEx, 'count');
  }
});

clauseTest('PAG-02', 'write each Link entry of every paginated list as <URL>; rel="name"', async (t) => {
  for (const l of await paginatedLists(t)) {
    const map = links(l.first);
    if (map.size === 0) violation(l.first, `at least one Link entry (${label(l.endpoint)})`, 'none');
    const outsideUrls = (headerValue(l.first.response?.headers, 'link') ?? '').replace(/<[^>]*>/g, '<>');
    const bare = [...outsideUrls.matchAll(/;\s*rel\s*=\s*([^"\s;,][^;,]*)/gi)].map((m) => `rel=${m[1]!.trim()}`);
    if (bare.length > 0) violation(l.first, `rel="<name>", the name in quotes (${label(l.endpoint)})`, bare.join(', '));
  }
});

clauseTest('PAG-03', 'omit rel="prev" on the first page of every paginated list', async (t) => {
  const lists = await paginatedLists(t);
  for await (const [l, one] of each(lists, (l) => getPage(s.admin, l.base, 1, SIZE))) {
    for (const ex of [l.first, one]) {
      if (links(ex).has('prev')) violation(ex, `no rel="prev" (${label(l.endpoint)}, first page)`, `rels ${relSet(ex).join(', ')}`);
    }
  }
});

const LAST_PAGE_NO_NEXT: Check<Counted, Exchange> = {
  pick: (lists) => steady(counted(lists)),
  read: (l) => pageOf(l, Math.max(1, l.count.num_pages), SIZE),
  judge: (l, ex) => {
    const last = Math.max(1, l.count.num_pages);
    if (links(ex).has('next')) violation(ex, `no rel="next" (${where(l, last)})`, `rels ${relSet(ex).join(', ')}`);
  },
  counts: true,
};

clauseTest('PAG-04', 'omit rel="next" on the last page of every paginated list', async (t) => {
  await judgeAll(t, LAST_PAGE_NO_NEXT);
});

const ONE_PAGE_OF_1000: Check<Counted, Exchange> = {
  pick: (lists) => steady(counted(lists)).filter((l) => l.count.num_items > 0 && l.count.num_items <= 1000),
  read: (l) => pageOf(l, undefined, 1000),
  judge: (l, ex) => {
    if (l.count.num_items > 1000) return;
    if (relSet(ex).join() !== 'self')
      violation(ex, `only rel="self" (${label(l.endpoint)}, ${l.count.num_items} items, X-Page-Size 1000)`, `rels ${relSet(ex).join(', ') || 'none'}`);
  },
  none: 'no list held from 1 to 1000 items',
  counts: true,
};

clauseTest('PAG-05', 'return only rel="self" on every paginated list whose items fit on one page', async (t) => {
  await judgeAll(t, ONE_PAGE_OF_1000);
});

clauseTest('PAG-06', 'return only rel="self" on every paginated list of the table that is empty', async (t) => {
  const empty = (await countedLists(t)).filter((l) => l.count.num_items === 0);
  t.observe(
    'empty lists',
    empty.map((l) => label(l.endpoint)),
  );
  if (empty.length === 0) t.unverifiable('no list of the table was empty');
  for (const l of empty) {
    if (relSet(l.first).join() !== 'self')
      violation(l.first, `only rel="self" (${label(l.endpoint)}, no items)`, `rels ${relSet(l.first).join(', ') || 'none'}`);
  }
});

const MIDDLE_PAGE: Check<Counted, Exchange> = {
  pick: (lists) => steady(counted(lists)).filter((l) => l.count.num_pages >= 3),
  read: (l) => pageOf(l, 2, SIZE),
  judge: (l, ex) => {
    if (l.count.num_pages < 3) return;
    const rels = relSet(ex);
    if (rels.join() !== 'first,last,next,prev,self') violation(ex, `rels first, last, next, prev, self (${where(l, 2)})`, `rels ${rels.join(', ') || 'none'}`);
  },
  none: 'no list had three pages of 5',
  counts: true,
};

clauseTest('PAG-07', 'send self, prev, next, first and last on a middle page of every paginated list with three pages or more', async (t) => {
  await judgeAll(t, MIDDLE_PAGE);
});

const firstPages = (l: List, none: Promise<Exchange>) =>
  Promise.all([none, pageOf(l, 1, SIZE), pageOf(l, 0, SIZE)]).then(([none, one, zero]) => ({ none, one, zero }));

const FIRST_PAGES: Check<List, { none: Exchange; one: Exchange; zero: Exchange }> = {
  pick: (lists) => steady(lists),
  // The first page read with the list stands for "no page"; read again, the three go out at once.
  read: (l) => firstPages(l, Promise.resolve(l.first)),
  reread: (l) => firstPages(l, pageOf(l, undefined, SIZE)),
  judge: (l, { none, one, zero }) => {
    const first = itemIds(one);
    for (const [page, ex] of [
      ['none', none],
      [0, zero],
    ] as const) {
      if (!sameItems(itemIds(ex), first))
        violation(ex, `the items of page 1 (${first.join(', ')}) for page ${page} of ${label(l.endpoint)}`, `items ${itemIds(ex).join(', ')}`);
    }
  },
};

clauseTest('PAG-09', 'return the first page for no page, page 0 and page 1 of every paginated list', async (t) => {
  await judgeAll(t, FIRST_PAGES);
});

const ABOVE_LAST: Check<Counted, Exchange> = {
  pick: (lists) => steady(counted(lists)),
  read: (l) => pageOf(l, Math.max(1, l.count.num_pages) + 1, SIZE),
  judge: (_, ex) => void expectErrorObject(ex, { status: 404, message: MESSAGE }),
  counts: true,
};

clauseTest('PAG-11', 'answer a page above the last of every paginated list with 404 and "The page number is too high"', async (t) => {
  await judgeAll(t, ABOVE_LAST);
});

const PAGE_SIZES: Check<Counted, Exchange[]> = {
  pick: counted,
  read: (l) => Promise.all((l.count.num_pages >= 2 ? [1, 2] : [1]).map((page) => pageOf(l, page, SIZE))),
  judge: (l, exs) => {
    const { num_items: n, num_pages: pages } = l.count;
    for (const [j, page] of (pages >= 2 ? [1, 2] : [1]).entries()) {
      const ex = exs[j]!;
      expectResponse(ex);
      const want = page < pages ? SIZE : n - (pages - 1) * SIZE;
      const got = itemCount(ex);
      if (n > 0 && got !== want) violation(ex, `${want} items (${where(l, page)}, ${n} items in all)`, `${got} items`);
    }
  },
  counts: true,
};

clauseTest(['EP-13', 'SIZE-03'], 'serve /page/<page>.json of every paginated list with X-Page-Size items on each page but the last', async (t) => {
  await judgeAll(t, PAGE_SIZES);
});

clauseTest('SIZE-09', "compute num_items_per_page and num_pages of every paginated list's count.json from X-Page-Size", async (t) => {
  for (const l of await countedLists(t)) {
    const { num_items: n, num_pages: pages, num_items_per_page: per } = l.count;
    if (per !== SIZE) violation(l.countEx, `num_items_per_page ${SIZE} (${label(l.endpoint)})`, `num_items_per_page ${per}`);
    // Decision (as in page-walk.prop.test.ts): with no data, num_pages may be 0 or 1.
    const ok = n === 0 ? pages === 0 || pages === 1 : pages === Math.ceil(n / SIZE);
    if (!ok) violation(l.countEx, `num_pages ceil(${n} / ${SIZE}) (${label(l.endpoint)})`, `num_pages ${pages}`);
  }
});

const LAST_PAGE_ITEMS: Check<Counted, Exchange> = {
  pick: (lists) => steady(counted(lists)).filter((l) => l.count.num_items > 0),
  read: (l) => pageOf(l, Math.max(1, l.count.num_pages), SIZE),
  judge: (l, ex) => {
    const { num_items: n, num_pages: pages } = l.count;
    const got = itemCount(ex);
    if (n > 0 && got !== n - (pages - 1) * SIZE)
      violation(ex, `${n - (pages - 1) * SIZE} items on the last page (${where(l, pages)}, count.json: ${n} items)`, `${got} items`);
  },
  counts: true,
};

clauseTest('SIZE-10', "agree in every paginated list's count.json with the items its last page holds", async (t) => {
  await judgeAll(t, LAST_PAGE_ITEMS);
});

/** The smallest page size from 5 up that fills the last of two or more pages exactly, if any. */
function exactFill(n: number): number | undefined {
  for (let size = 5; size * 2 <= n && size <= 1000; size++) if (n % size === 0) return size;
  return undefined;
}

const EXACT_LAST_PAGE: Check<Counted, Exchange | undefined> = {
  pick: (lists) => steady(counted(lists)).filter((l) => exactFill(l.count.num_items) !== undefined),
  read: async (l) => {
    const size = exactFill(l.count.num_items);
    return size === undefined ? undefined : pageOf(l, l.count.num_items / size, size);
  },
  judge: (l, ex) => {
    const size = exactFill(l.count.num_items);
    if (ex === undefined || size === undefined) return;
    const last = l.count.num_items / size;
    const rels = relSet(ex);
    if (rels.includes('next'))
      violation(ex, `no rel="next" on the exactly filled last page ${last} (${label(l.endpoint)}, X-Page-Size ${size})`, `rels ${rels.join(', ')}`);
    if (rels.join() !== 'first,last,prev,self')
      violation(ex, `rels first, last, prev, self on the last page ${last} (${label(l.endpoint)}, X-Page-Size ${size})`, `rels ${rels.join(', ') || 'none'}`);
  },
  none: 'no list held a number of items that fills two pages or more exactly',
  counts: true,
};

clauseTest(['PAG-04', 'PAG-07'], 'omit next and send self, prev, first and last on an exactly filled last page of every paginated list', async (t) => {
  await judgeAll(t, EXACT_LAST_PAGE);
});

const fits = (l: Counted) => l.count.num_items >= 5 && l.count.num_items <= 1000;

const EXACT_ONE_PAGE: Check<Counted, Exchange | undefined> = {
  pick: (lists) => steady(counted(lists)).filter(fits),
  read: async (l) => (fits(l) ? pageOf(l, 1, l.count.num_items) : undefined),
  judge: (l, ex) => {
    const n = l.count.num_items;
    if (ex !== undefined && relSet(ex).join() !== 'self')
      violation(ex, `only rel="self" (${label(l.endpoint)}, ${n} items, X-Page-Size ${n})`, `rels ${relSet(ex).join(', ') || 'none'}`);
  },
  none: 'no list held from 5 to 1000 items',
  counts: true,
};

clauseTest('PAG-05', 'return only rel="self" on every paginated list that fills exactly one page', async (t) => {
  await judgeAll(t, EXACT_ONE_PAGE);
});

/** count.json of a list without X-Page-Size, when it answers with a count object. */
async function defaultCount(base: string, l?: List): Promise<{ ex: Exchange; count: Count } | undefined> {
  const get = () => s.admin.get(`${base}/count.json`);
  const ex = await (l ? once(l, 'count', get) : get());
  return ex.response?.status === 200 && validate('count', ex.json).length === 0 ? { ex, count: ex.json as Count } : undefined;
}

// Without X-Page-Size the page size is the default (§4 rule 6); the count without X-Page-Size
// says which, and the first page must agree with it (§4 rule 8 read the other way round).
const DEFAULT_FIRST_PAGE: Check<List, { c: { ex: Exchange; count: Count } | undefined; pages: Exchange[] }> = {
  pick: (lists) => steady(lists),
  read: async (l) => {
    const [c, ...pages] = await Promise.all([
      defaultCount(l.base, l),
      ...[`${l.base}.json`, `${l.base}/page/1.json`].map((path) => once(l, path, () => s.admin.get(path))),
    ]);
    return { c, pages };
  },
  judge: (l, { c, pages: exs }) => {
    if (!c) return;
    const { num_items: n, num_items_per_page: per } = c.count;
    const pages: string[][] = [];
    for (const ex of exs) {
      const ids = itemIds(ex);
      links(ex);
      if (ids.length !== Math.min(n, per))
        violation(
          ex,
          `${Math.min(n, per)} items on the first page without X-Page-Size (${label(l.endpoint)}; count.json: ${n} items, ${per} a page)`,
          `${ids.length} items`,
        );
      if (pages[0] && !sameItems(pages[0], ids))
        violation(ex, `the items of ${l.base}.json on page 1 (${label(l.endpoint)}, no X-Page-Size)`, `items ${ids.join(', ')}`);
      pages.push(ids);
    }
  },
};

clauseTest(
  ['SIZE-10', 'PAG-01', 'PAG-09'],
  "agree without X-Page-Size in every paginated list's first page, with no page and page 1, with its count.json",
  async (t) => {
    await judgeAll(t, DEFAULT_FIRST_PAGE);
  },
);

// The log lists are left out of the checks above that hold reads to each other, but a large
// X-Page-Size must be honoured there too (the log is often the only list past 100 items).
// Decision: the log only grows while the run reads it (every action writes to it, §1 rule 5;
// nothing of the API removes entries), so a first page read after its count holds at least
// min(X-Page-Size, that count) items, and never more than X-Page-Size, whatever else is logged.
clauseTest('SIZE-03', 'return as many items as a large X-Page-Size asks for on the first page of the log lists', async (t) => {
  let judged = 0;
  const logs = (await countedLists(t)).filter((l) => l.endpoint.path.startsWith('/log'));
  const size = 1000;
  for await (const [l, { c, ex }] of each(logs, async (l) => {
    const c = await s.admin.get(`${l.base}/count.json`, { headers: { 'X-Page-Size': String(size) } });
    return { c, ex: await getPage(s.admin, l.base, 1, size) };
  })) {
    if (c.response?.status !== 200 || validate('count', c.json).length > 0) continue;
    const before = (c.json as Count).num_items;
    const got = itemCount(ex);
    const least = Math.min(size, before);
    if (got < least || got > size)
      violation(
        ex,
        `between ${least} and ${size} items with X-Page-Size ${size} (${label(l.endpoint)}, ${before} entries counted just before)`,
        `${got} items`,
      );
    judged++;
  }
  if (judged === 0) t.unverifiable('no log list served a count object (EP-12)');
});

// The same rules over HMAC: a page with X-Page-Size, and a page above the last.
clauseTest(['SIZE-03', 'PAG-11'], 'serve X-Page-Size and the page-too-high 404 over HMAC too', async (t) => {
  const hmac = await s.adminHmac();
  if (!hmac) return t.unverifiable('no HMAC keys: give --hmac-public and --hmac-private, or --control');
  // A list that other users write to may grow past the count read before its pages: both
  // findings stand only when the list held still (`held`), as in the checks above.
  const lists = steady(await countedLists(t));
  const moving = new Set<string>();
  const read = (l: Counted) => Promise.all([getPage(hmac, l.base, 1, SIZE), getPage(hmac, l.base, Math.max(1, l.count.num_pages) + 1, SIZE)]);
  for (const l of lists) {
    const got = await read(l);
    if (got[0].response?.status === 401) t.unverifiable('HMAC was not accepted (AUTH-03)');
    const judge = (l: Counted, [first, above]: Exchange[]) => {
      const n = itemCount(first!);
      if (n !== Math.min(SIZE, l.count.num_items))
        violation(first!, `${Math.min(SIZE, l.count.num_items)} items with X-Page-Size ${SIZE} over HMAC (${label(l.endpoint)})`, `${n} items`);
      expectErrorObject(above!, { status: 404, message: MESSAGE });
    };
    if (await held(l, got, read, judge, moving)) return;
  }
  leftOut(t, moving, 0);
});

clauseTest('SIZE-01', 'put 20 items a page by default on every paginated list, as its count.json says', async (t) => {
  const settings = await s.control!.getSettings();
  if (settings.num_items_lists !== 20) t.unverifiable(`NUM_ITEMS_LISTS is ${settings.num_items_lists}, not the default 20`);
  const lists = await paginatedLists(t);
  for await (const [l, c] of each(lists, (l) => defaultCount(l.base))) {
    if (c && c.count.num_items_per_page !== 20)
      violation(c.ex, `num_items_per_page 20 without X-Page-Size (${label(l.endpoint)})`, `num_items_per_page ${c.count.num_items_per_page}`);
  }
});

const DEFAULT_ABOVE_LAST: Check<List, Exchange | undefined> = {
  pick: (lists) => steady(lists),
  read: async (l) => {
    const c = await defaultCount(l.base, l);
    return c ? s.admin.get(`${l.base}/page/${Math.max(1, c.count.num_pages) + 1}.json`) : undefined;
  },
  judge: (_, ex) => void (ex && expectErrorObject(ex, { status: 404, message: MESSAGE })),
};

clauseTest('PAG-11', 'answer a page above the last without X-Page-Size on every paginated list with 404 and "The page number is too high"', async (t) => {
  await judgeAll(t, DEFAULT_ABOVE_LAST);
});

// "Its value is an unsigned integer from 5 to 1000 inclusive" (SHOULD: the reply outside the
// range is not stated). The oracle judges the counts; a page of 4 items shows 4 was honoured.
// Judged on its reads alone, as before the file ran beside the others; the page of a shared list
// is read in the section (counted at 5 items or more, a list that held 4 when read beside the
// other files would be a false alarm).
const BELOW_5_ABOVE_1000: Check<Counted, { counts: Exchange[]; page: Exchange | undefined }> = {
  pick: counted,
  read: async (l) => {
    const [page, ...counts] = await Promise.all([
      l.count.num_items < 5 ? undefined : s.admin.get(`${l.base}.json`, { headers: { 'X-Page-Size': '4' } }),
      ...['4', '2000'].map((value) => s.admin.get(`${l.base}/count.json`, { headers: { 'X-Page-Size': value } })),
    ]);
    return { counts, page };
  },
  judge: (l, { counts, page }) => {
    for (const [j, value] of ['4', '2000'].entries()) {
      const c = counts[j]!;
      const per = (c.json as Partial<Count> | undefined)?.num_items_per_page;
      if (c.response?.status === 200 && per === Number(value))
        violation(c, `X-Page-Size ${value} refused or not honoured (${label(l.endpoint)})`, `num_items_per_page ${per}`);
    }
    if (page?.response?.status === 200 && Array.isArray(page.json) && page.json.length === 4)
      violation(page, `X-Page-Size 4 refused or not honoured (${label(l.endpoint)}, ${l.count.num_items} items)`, 'a page of 4 items');
  },
  alone: true,
  counts: true,
};

clauseTest('SIZE-11', 'not honour X-Page-Size 4 or 2000 in any paginated list or count', async (t) => {
  await judgeAll(t, BELOW_5_ABOVE_1000);
});

// NUM_ITEMS_LISTS 5 makes every list of 12 items three pages long without X-Page-Size: the first,
// middle and last pages of every list at the default size (the oracle judges their relations),
// and every list's count.json says 5.
// It changes a setting: it runs on its own, after the tests above.
clauseTest(
  'SIZE-02',
  'use NUM_ITEMS_LISTS 5 as the page size of every paginated list and count without X-Page-Size, on every page',
  async (t) => {
    const lists = steady(await countedLists(t));
    await s.withSettings({ num_items_lists: 5 }, async () => {
      // Decision (issue 38: a section lasts as long as its chain): the last page the count read
      // before the section gives is read beside the count; only a count that names another last
      // page sends one more read, so the pages judged are always the count's own.
      const read = async (l: Counted) => {
        const page = (n: number) => s.admin.get(n === 1 ? `${l.base}.json` : `${l.base}/page/${n}.json`);
        const guess = Math.max(1, Math.ceil(l.count.num_items / 5));
        const [c, ...guessed] = await Promise.all([defaultCount(l.base), ...[...new Set([1, guess])].map(page)]);
        const last = Math.max(1, Math.ceil((c?.count.num_items ?? l.count.num_items) / 5));
        if (last === guess) return { c, pages: guessed };
        return { c, pages: last === 1 ? [guessed[0]!] : [guessed[0]!, await page(last)] };
      };
      await heldEach(t, lists, read, (l, { c, pages }) => {
        if (c && c.count.num_items_per_page !== 5)
          violation(
            c.ex,
            `num_items_per_page 5 without X-Page-Size (NUM_ITEMS_LISTS 5; ${label(l.endpoint)})`,
            `num_items_per_page ${c.count.num_items_per_page}`,
          );
        const n = c?.count.num_items ?? l.count.num_items;
        const last = Math.max(1, Math.ceil(n / 5));
        for (const [j, page] of [...new Set([1, last])].entries()) {
          const ex = pages[j]!;
          const want = n === 0 ? 0 : page < last ? 5 : n - (last - 1) * 5;
          const got = itemCount(ex);
          if (got !== want)
            violation(ex, `${want} items on page ${page} of ${last} without X-Page-Size (NUM_ITEMS_LISTS 5; ${label(l.endpoint)}, ${n} items)`, `${got} items`);
        }
      });
    });
  },
  { afterOthers: true },
);

// Every page and count fetched in this file, whatever test fetched it, held to the rules the response
// oracle judges on every response (suites/oracle/).
oracleTest(
  ['PAG-08', 'GEN-06', 'GEN-03', 'GEN-04', 'STAT-05', 'SIZE-09', 'SIZE-10', 'RES-11'],
  'every page and count of every paginated list fetched in this file',
);
