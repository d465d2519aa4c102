import fc from 'fast-check';
import type { Exchange } from '../../core/exchange.ts';
import { expectSchema, expectStatus, violation } from '../harness/assert.ts';
import { type ClauseTestContext, clauseTest } from '../harness/clause-test.ts';
import type { ApiClient } from '../harness/client.ts';
import { inFlight } from '../harness/config.ts';
import { inOrder, together } from '../harness/in-order.ts';
import { ownPasswordList } from '../harness/own-list.ts';
import { type Count, itemCount, itemIds, links, linkTarget, relSet, sameItems } from '../harness/pages.ts';
import { checkProperty } from '../harness/property.ts';
import { useSession } from '../harness/session.ts';
import { testsSideBySide } from '../harness/suite-api.ts';

// Decision (issue 38: a run lasts as long as its longest chain): every test only reads the lists
// of its own the file made once (`datasets`), which no one else writes, so the tests run side by
// side, and the reads of one property run that do not depend on each other go side by side too.
testsSideBySide('every test only reads the lists of its own, made once (datasets)');
const s = useSession();
const LIST = '/passwords';
// Dataset sizes around the page sizes the property favours (5..12): empty, one item, one full
// page, one more than a page, and several pages.
const DATASETS = [0, 1, 5, 6, 13, 31] as const;
const RUNS = 20;

interface Dataset {
  n: number;
  ids: number[];
  /** A Normal user who can access this dataset's project and nothing else. */
  client: ApiClient;
}

type Prepared = { ok: true; sets: Map<number, Dataset> } | { ok: false; reason: string };
let prepared: Promise<Prepared> | undefined;

// Each dataset is a list of the run's own (ownPasswordList): n passwords seen by a user who sees nothing else.
function datasets(): Promise<Prepared> {
  prepared ??= (async (): Promise<Prepared> => {
    const sets = new Map<number, Dataset>();
    // The datasets side by side: each is a project and a user of its own.
    const owns = await together(DATASETS.map((n) => ownPasswordList(s, n, `walker-${n}`)));
    for (const [i, n] of DATASETS.entries()) {
      const own = owns[i]!;
      if (typeof own === 'string') return { ok: false, reason: own };
      sets.set(n, { n, ids: own.ids, client: own.client });
    }
    return { ok: true, sets };
  })();
  return prepared;
}

async function ready(t: ClauseTestContext): Promise<Map<number, Dataset>> {
  const p = await datasets();
  if (!p.ok) t.unverifiable(p.reason);
  return p.sets;
}

const pageSize = fc.oneof(fc.integer({ min: 5, max: 12 }), fc.integer({ min: 5, max: 1000 }));
const scenario = fc.record({ n: fc.constantFrom(...DATASETS), size: pageSize });
type Scenario = { n: number; size: number };
const EXAMPLES: Array<[Scenario]> = [[{ n: 0, size: 5 }], [{ n: 5, size: 5 }], [{ n: 6, size: 5 }], [{ n: 31, size: 5 }], [{ n: 31, size: 1000 }]];

/** Pages the spec's rules give: ceil(n / size), and one (empty) page when there is no data. */
const expectedPages = (n: number, size: number) => Math.max(1, Math.ceil(n / size));

const headers = (size: number) => ({ 'X-Page-Size': String(size) });

/**
 * Decision (issue 38: through 100 ms a run lasts as long as its requests): the tests draw their
 * scenarios from one seed and read lists no one writes, so they asked for the same pages again
 * and again (about 150 identical reads a run). A read by a dataset's user of one address with one
 * X-Page-Size is sent once, and its answer judged by every test that asks for it; a read that got
 * no answer is not kept. PAG-08 reads each page twice on purpose: its reads are its own (`fresh`).
 */
const answers = new WeakMap<ApiClient, Map<string, Promise<Exchange>>>();

function once(client: ApiClient, size: number, at: { path: string } | { url: string }): Promise<Exchange> {
  let mine = answers.get(client);
  if (mine === undefined) {
    mine = new Map();
    answers.set(client, mine);
  }
  const key = `${size} ${'url' in at ? `url ${at.url}` : at.path}`;
  const kept = mine.get(key);
  if (kept !== undefined) return kept;
  const got = fresh(client, size, at);
  const forget = () => {
    if (mine.get(key) === got) mine.delete(key);
  };
  mine.set(key, got);
  got.then((ex) => ex.response === undefined && forget(), forget);
  return got;
}

function fresh(client: ApiClient, size: number, at: { path: string } | { url: string }): Promise<Exchange> {
  return 'url' in at ? client.get('', { url: at.url, headers: headers(size) }) : client.get(at.path, { headers: headers(size) });
}

function follow(client: ApiClient, from: Exchange, url: string, size: number, read = once): Promise<Exchange> {
  return read(client, size, { url: linkTarget(from, url) });
}

/** The first page, then rel="next" until a page has none; stops one page past the expected last. */
async function walk(client: ApiClient, n: number, size: number): Promise<Exchange[]> {
  const limit = expectedPages(n, size) + 1;
  const pages = [await once(client, size, { path: `${LIST}.json` })];
  for (;;) {
    const last = pages[pages.length - 1]!;
    itemIds(last);
    const next = links(last).get('next');
    if (next === undefined || pages.length >= limit) return pages;
    pages.push(await follow(client, last, next, size));
  }
}

function page(client: ApiClient, n: number, size: number, read = once): Promise<Exchange> {
  return read(client, size, { path: n === 1 ? `${LIST}.json` : `${LIST}/page/${n}.json` });
}

function expectRels(ex: Exchange, want: { has: string[]; lacks: string[] } | 'self only', where: string): void {
  const rels = relSet(ex);
  if (want === 'self only') {
    if (rels.join() !== 'self') violation(ex, `only rel="self" (${where})`, `rels ${rels.join(', ') || 'none'}`);
    return;
  }
  const absent = want.has.filter((r) => !rels.includes(r));
  const extra = want.lacks.filter((r) => rels.includes(r));
  if (absent.length > 0 || extra.length > 0) {
    const expected = [want.has.length ? `rels ${want.has.join(', ')}` : '', want.lacks.length ? `no rel ${want.lacks.join(', ')}` : '']
      .filter(Boolean)
      .join(' and ');
    violation(ex, `${expected} (${where})`, `rels ${rels.join(', ') || 'none'}`);
  }
}

const where = (pageNo: number, n: number, size: number) => `page ${pageNo} of ${expectedPages(n, size)}; ${n} items, X-Page-Size ${size}`;

clauseTest('SIZE-10', 'walk rel="next" to every item once, in as many pages as count.json says for the same X-Page-Size', async (t) => {
  const sets = await ready(t);
  const property = fc.asyncProperty(scenario, async ({ n, size }) => {
    const { ids, client } = sets.get(n)!;
    // The count beside the walk: no one writes the list.
    const [pages, countEx] = await together([walk(client, n, size), once(client, size, { path: `${LIST}/count.json` })]);
    const seen = pages.flatMap((ex) => itemIds(ex));
    const lastEx = pages[pages.length - 1]!;
    const what = `${n} items, X-Page-Size ${size}`;

    const repeated = seen.filter((id, i) => seen.indexOf(id) !== i);
    if (repeated.length > 0) violation(lastEx, `every item once along rel="next" (${what})`, `items ${[...new Set(repeated)].join(', ')} more than once`);
    const missing = ids.filter((id) => !seen.includes(String(id)));
    const foreign = seen.filter((id) => !ids.map(String).includes(id));
    if (missing.length > 0 || foreign.length > 0) {
      violation(
        lastEx,
        `the ${n} passwords of the user's one project along rel="next" (${what})`,
        `${missing.length} missing, ${foreign.length} others (${foreign.slice(0, 10).join(', ')})`,
      );
    }

    expectStatus(countEx, 200);
    const c = expectSchema(countEx, 'count') as Count;
    // Decision: with no data, num_pages may be 0 (ceil(0 / size)) or 1 (the empty first page).
    const pagesOk = n === 0 ? c.num_pages === 0 || c.num_pages === 1 : c.num_pages === pages.length;
    if (c.num_items !== seen.length || c.num_items_per_page !== size || !pagesOk) {
      violation(
        countEx,
        `num_items ${seen.length}, num_pages ${n === 0 ? '0 or 1' : pages.length}, num_items_per_page ${size}: what the walk along rel="next" returned for X-Page-Size ${size}`,
        `num_items ${c.num_items}, num_pages ${c.num_pages}, num_items_per_page ${c.num_items_per_page}`,
      );
    }
  });
  await checkProperty(t, property, { numRuns: RUNS, examples: EXAMPLES });
});

clauseTest('SIZE-03', 'put X-Page-Size items on every page but the last, and the rest on the last', async (t) => {
  const sets = await ready(t);
  const property = fc.asyncProperty(scenario, async ({ n, size }) => {
    const { client } = sets.get(n)!;
    const last = expectedPages(n, size);
    const pages = await inOrder(
      Array.from({ length: last }, (_, i) => i + 1),
      inFlight(s.config),
      (p) => page(client, p, size),
    );
    for (let p = 1; p <= last; p++) {
      const ex = pages[p - 1]!;
      const want = p < last ? size : n - (last - 1) * size;
      const got = itemCount(ex);
      if (got !== want) violation(ex, `${want} items on ${where(p, n, size)}`, `${got} items`);
    }
  });
  await checkProperty(t, property, { numRuns: RUNS, examples: EXAMPLES });
});

clauseTest('PAG-03', 'omit rel="prev" on the first page, asked for with no page and with page 1', async (t) => {
  const sets = await ready(t);
  const property = fc.asyncProperty(scenario, async ({ n, size }) => {
    const { client } = sets.get(n)!;
    for (const ex of await together([once(client, size, { path: `${LIST}.json` }), once(client, size, { path: `${LIST}/page/1.json` })])) {
      expectRels(ex, { has: ['self'], lacks: ['prev'] }, where(1, n, size));
    }
  });
  await checkProperty(t, property, { numRuns: RUNS, examples: EXAMPLES });
});

clauseTest('PAG-04', 'omit rel="next" on the last page', async (t) => {
  const sets = await ready(t);
  const property = fc.asyncProperty(scenario, async ({ n, size }) => {
    const last = expectedPages(n, size);
    expectRels(await page(sets.get(n)!.client, last, size), { has: ['self'], lacks: ['next'] }, where(last, n, size));
  });
  await checkProperty(t, property, { numRuns: RUNS, examples: EXAMPLES });
});

const onePage = fc
  .constantFrom(...DATASETS.filter((n) => n > 0))
  .chain((n) => fc.record({ n: fc.constant(n), size: fc.integer({ min: Math.max(5, n), max: 1000 }) }));

clauseTest('PAG-05', 'return only rel="self" when all items fit on one page', async (t) => {
  const sets = await ready(t);
  const property = fc.asyncProperty(onePage, async ({ n, size }) => {
    expectRels(await page(sets.get(n)!.client, 1, size), 'self only', where(1, n, size));
  });
  await checkProperty(t, property, { numRuns: RUNS, examples: [[{ n: 1, size: 5 }], [{ n: 5, size: 5 }], [{ n: 31, size: 31 }]] });
});

clauseTest('PAG-06', 'return only rel="self" for a user who sees no passwords, whatever X-Page-Size', async (t) => {
  const sets = await ready(t);
  const property = fc.asyncProperty(pageSize, async (size) => {
    expectRels(await page(sets.get(0)!.client, 1, size), 'self only', where(1, 0, size));
  });
  await checkProperty(t, property, { numRuns: 10, examples: [[5], [1000]] });
});

// Datasets and page sizes that give at least three pages, and one of their middle pages.
const middlePage = fc
  .record({ n: fc.constantFrom(13, 31), size: fc.integer({ min: 5, max: 12 }) })
  .filter(({ n, size }) => expectedPages(n, size) >= 3)
  .chain(({ n, size }) => fc.record({ n: fc.constant(n), size: fc.constant(size), at: fc.integer({ min: 2, max: expectedPages(n, size) - 1 }) }));

clauseTest('PAG-07', 'send self, prev, next, first and last on every middle page', async (t) => {
  const sets = await ready(t);
  const property = fc.asyncProperty(middlePage, async ({ n, size, at }) => {
    expectRels(await page(sets.get(n)!.client, at, size), { has: ['self', 'prev', 'next', 'first', 'last'], lacks: [] }, where(at, n, size));
  });
  await checkProperty(t, property, { numRuns: RUNS, examples: [[{ n: 13, size: 5, at: 2 }], [{ n: 31, size: 5, at: 6 }]] });
});

clauseTest('PAG-08', 'point self, prev, next, first and last of every page at the pages their names say', async (t) => {
  const sets = await ready(t);
  const property = fc.asyncProperty(scenario, async ({ n, size }) => {
    const { client } = sets.get(n)!;
    const last = expectedPages(n, size);
    // Each page read twice (directly, and again for its links) and each link followed, every
    // read side by side with the others at its step (no one writes the list); judged in order.
    const pages = [...Array.from({ length: last }, (_, i) => i + 1), ...Array.from({ length: last }, (_, i) => i + 1)];
    const read = await inOrder(pages, inFlight(s.config), (p) => page(client, p, size, fresh));
    const direct = read.slice(0, last).map((ex) => itemIds(ex));
    const target: Record<string, (p: number) => number> = { self: (p) => p, prev: (p) => p - 1, next: (p) => p + 1, first: () => 1, last: () => last };
    const toFollow = read.slice(last).flatMap((ex, i) =>
      [...links(ex)].flatMap(([rel, url]) => {
        const to = target[rel]?.(i + 1);
        return to === undefined || to < 1 || to > last ? [] : [{ p: i + 1, ex, rel, url, to }];
      }),
    );
    const followed = await inOrder(toFollow, inFlight(s.config), ({ ex, url }) => follow(client, ex, url, size, fresh));
    for (const [j, { p, rel, to }] of toFollow.entries()) {
      const got = followed[j]!;
      const want = direct[to - 1]!;
      if (!sameItems(itemIds(got), want)) {
        violation(got, `rel="${rel}" of ${where(p, n, size)} pointing at page ${to} (items ${want.join(', ')})`, `items ${itemIds(got).join(', ')}`);
      }
    }
  });
  await checkProperty(t, property, { numRuns: 12, examples: EXAMPLES });
});
