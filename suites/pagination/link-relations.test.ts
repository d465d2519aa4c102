import { headerValue } from '../../core/exchange.ts';
import { expectErrorObject, expectSchema, expectStatus, ViolationError, violation } from '../harness/assert.ts';
import { PAGE_TOO_HIGH } from '../harness/checks.ts';
import { type ClauseTestContext, clauseTest } from '../harness/clause-test.ts';
import type { ApiClient } from '../harness/client.ts';
import { aloneWhenShared, ownOrAdminList } from '../harness/own-list.ts';
import { type Count, getPage, itemIds, links, linkTarget, relSet, sameItems } from '../harness/pages.ts';
import { useSession } from '../harness/session.ts';
import { beforeAll } from '../harness/suite-api.ts';

// Decision: beside other files on a list of the run's own; on the Admin's list, which other files
// write, each check has the target to itself (`alone`), as a file that runs alone would.
const s = useSession();
const SIZE = 5;
const LIST = '/passwords';
/** Walked whole only when the list is of the run's own, or this short. */
const MAX_WALK_PAGES = 50;
let count: Count;
/** Who reads the list: a user who sees a project of the run's own only, else the Admin. */
let viewer: ApiClient;
/** Why the list is the Admin's, which anyone may write while it is read; undefined when it is the run's own. */
let shared: string | undefined;

// At least four pages of 5 so that first, middle and last pages all exist: a list of the run's
// own (only the run writes it, however much the installation holds and whoever else uses it),
// else the Admin's topped up to four pages.
beforeAll(async () => {
  const list = await ownOrAdminList(s, 4 * SIZE - 1, 'link-relations', { topUp: true });
  viewer = list.viewer;
  shared = list.shared;
  count = expectSchema(await viewer.get(`${LIST}/count.json`, { headers: { 'X-Page-Size': String(SIZE) } }), 'count') as Count;
});

const alone = <A extends unknown[]>(check: (...args: A) => Promise<void>) => aloneWhenShared(() => shared !== undefined, check);
const readCount = async () => expectSchema(await viewer.get(`${LIST}/count.json`, { headers: { 'X-Page-Size': String(SIZE) } }), 'count') as Count;
/** How many times a check on the Admin's list is made again while the list moves before it is left unjudged. */
const TRIES = 3;

/**
 * Runs a check that holds pages to the count read before them. On the Admin's list (`shared`)
 * other users may write while it is read, so a violation stands only when the list held still:
 * the check is made again on a fresh count, and it stands when the count read after it says
 * what that count said (as every-list's `held`). A list that moved each time leaves the check
 * unverifiable. On the run's own list a violation stands at once.
 */
async function heldToCount(t: ClauseTestContext, check: (count: Count) => Promise<void>): Promise<void> {
  try {
    await check(count);
  } catch (e) {
    if (!(e instanceof ViolationError) || shared === undefined) throw e;
    for (let attempt = 1; attempt <= TRIES; attempt++) {
      const before = await readCount();
      try {
        await check(before);
        return;
      } catch (e2) {
        if (!(e2 instanceof ViolationError) || (await readCount()).num_items === before.num_items) throw e2;
      }
    }
    t.unverifiable(`the Admin's list moved while read ${TRIES + 1} times (other users write to it; ${shared})`);
  }
}

const pageUrl = (n: number) => new RegExp(`/index\\.php/api/v6/passwords(/page/${n})?\\.json$`);

clauseTest(
  ['EP-02', 'EP-04', 'PAG-01'],
  'answer GET /passwords.json with 200, a JSON array and a Link header',
  alone(async () => {
    const ex = await getPage(viewer, LIST, undefined, SIZE);
    itemIds(ex);
    links(ex);
  }),
);

clauseTest(
  'PAG-02',
  'write each Link entry as <URL>; rel="name"',
  alone(async () => {
    for (const page of [1, 2, count.num_pages]) {
      const ex = await getPage(viewer, LIST, page, SIZE);
      const map = links(ex);
      if (map.size === 0) violation(ex, 'at least one Link entry', 'none');
      // RFC 8288 also admits rel=name as a bare token; §4 writes the name in quotes, rel="<name>".
      const outsideUrls = (headerValue(ex.response?.headers, 'link') ?? '').replace(/<[^>]*>/g, '<>');
      const bare = [...outsideUrls.matchAll(/;\s*rel\s*=\s*([^"\s;,][^;,]*)/gi)].map((m) => `rel=${m[1]!.trim()}`);
      if (bare.length > 0) violation(ex, 'rel="<name>", the name in quotes', bare.join(', '));
    }
  }),
);

clauseTest(
  'GEN-06',
  'end every URL of the Link header in .json',
  alone(async () => {
    const ex = await getPage(viewer, LIST, 2, SIZE);
    for (const [rel, url] of links(ex)) {
      if (!new URL(linkTarget(ex, url)).pathname.endsWith('.json')) violation(ex, `rel="${rel}" URL ending in .json`, url);
    }
  }),
);

clauseTest(
  'PAG-03',
  'omit rel="prev" on the first page',
  alone(async () => {
    const ex = await getPage(viewer, LIST, 1, SIZE);
    if (links(ex).has('prev')) violation(ex, 'no rel="prev" on page 1', `rels ${relSet(ex).join(', ')}`);
  }),
);

clauseTest(
  'PAG-04',
  'omit rel="next" on the last page',
  alone(async (t) => {
    await heldToCount(t, async (count) => {
      const ex = await getPage(viewer, LIST, count.num_pages, SIZE);
      if (links(ex).has('next')) violation(ex, `no rel="next" on the last page (${count.num_pages})`, `rels ${relSet(ex).join(', ')}`);
    });
  }),
);

clauseTest(
  'PAG-07',
  'send self, prev, next, first and last on a middle page',
  alone(async () => {
    const ex = await getPage(viewer, LIST, 2, SIZE);
    const rels = relSet(ex);
    if (rels.join() !== 'first,last,next,prev,self') violation(ex, 'rels first, last, next, prev, self on page 2', `rels ${rels.join(', ') || 'none'}`);
  }),
);

clauseTest(
  'PAG-05',
  'return only rel="self" when the result has one page',
  alone(async (t) => {
    if (count.num_items > 1000) t.unverifiable(`the target holds more than 1000 passwords: no single page exists for the Admin (${shared})`);
    const ex = await getPage(viewer, LIST, undefined, 1000);
    const rels = relSet(ex);
    if (rels.join() !== 'self') violation(ex, 'only rel="self"', `rels ${rels.join(', ') || 'none'}`);
  }),
);

clauseTest(
  'PAG-06',
  'return only rel="self" when the result has no data',
  alone(async () => {
    const user = await s.user('normal user');
    const ex = await getPage(user.client, LIST, undefined, SIZE);
    const ids = itemIds(ex);
    if (ids.length !== 0) violation(ex, 'no passwords for a new Normal user', `${ids.length} passwords`);
    const rels = relSet(ex);
    if (rels.join() !== 'self') violation(ex, 'only rel="self"', `rels ${rels.join(', ') || 'none'}`);
  }),
);

clauseTest(
  'PAG-08',
  'point self, prev, next, first and last at the pages their names say',
  alone(async (t) => {
    await heldToCount(t, (count) => pointsRight(count));
  }),
);

async function pointsRight(count: Count): Promise<void> {
  const page = 2;
  const ex = await getPage(viewer, LIST, page, SIZE);
  const map = links(ex);
  const expected: Record<string, number> = { self: page, prev: page - 1, next: page + 1, first: 1, last: count.num_pages };
  for (const [rel, n] of Object.entries(expected)) {
    const url = map.get(rel);
    if (!url) violation(ex, `rel="${rel}"`, 'missing');
    const followed = await viewer.get('', { url: linkTarget(ex, url), headers: { 'X-Page-Size': String(SIZE) } });
    const direct = await getPage(viewer, LIST, n, SIZE);
    if (!sameItems(itemIds(followed), itemIds(direct))) {
      violation(
        followed,
        `rel="${rel}" of page ${page} to hold the items of page ${n}`,
        `items ${itemIds(followed).join(', ')} (page ${n} holds ${itemIds(direct).join(', ')})`,
      );
    }
  }
}

clauseTest(
  'PAG-09',
  'return the first page for no page, page 0 and page 1',
  alone(async () => {
    const first = itemIds(await getPage(viewer, LIST, 1, SIZE));
    for (const page of [undefined, 0]) {
      const ex = await getPage(viewer, LIST, page, SIZE);
      if (!sameItems(itemIds(ex), first)) violation(ex, `the items of page 1 (${first.join(', ')})`, `items ${itemIds(ex).join(', ')}`);
    }
  }),
);

clauseTest(
  'PAG-11',
  'answer a page above the last with 404 and "The page number is too high"',
  alone(async (t) => {
    await heldToCount(t, async (count) => {
      for (const page of [count.num_pages + 1, count.num_pages + 1000]) {
        const ex = await getPage(viewer, LIST, page, SIZE);
        expectErrorObject(ex, { status: 404, message: PAGE_TOO_HIGH });
      }
    });
  }),
);

clauseTest(
  ['EP-05', 'EP-13'],
  'answer GET /passwords/page/<page>.json with 200 OK and that page of the list',
  alone(async () => {
    const ex = await getPage(viewer, LIST, 2, SIZE);
    const ids = itemIds(ex);
    if (ids.length !== SIZE) violation(ex, `${SIZE} items on page 2 of ${count.num_pages}`, `${ids.length} items`);
    const self = links(ex).get('self');
    if (self && !pageUrl(2).test(new URL(linkTarget(ex, self)).pathname)) violation(ex, 'rel="self" naming page 2', self);
  }),
);

clauseTest(
  ['EP-06', 'EP-12', 'RES-11'],
  'answer GET /passwords/count.json with 200 OK and a count object of integers',
  alone(async () => {
    const ex = await viewer.get(`${LIST}/count.json`);
    expectStatus(ex, 200);
    expectSchema(ex, 'count');
  }),
);

clauseTest(
  'SIZE-10',
  'agree in count.json with the items and pages a walk along rel="next" returns',
  alone(async (t) => {
    if (count.num_pages > MAX_WALK_PAGES)
      t.unverifiable(`the Admin's list has ${count.num_pages} pages of ${SIZE}: a walk would grow with the data (${shared})`);
    await heldToCount(t, async (count) => {
      const seen: string[] = [];
      let ex = await getPage(viewer, LIST, undefined, SIZE);
      let pages = 0;
      for (;;) {
        pages++;
        seen.push(...itemIds(ex));
        const next = links(ex).get('next');
        if (!next || pages > count.num_pages + 1) break;
        ex = await viewer.get('', { url: linkTarget(ex, next), headers: { 'X-Page-Size': String(SIZE) } });
      }
      if (new Set(seen).size !== seen.length) violation(ex, 'every item once along rel="next"', `${seen.length - new Set(seen).size} repeated items`);
      if (seen.length !== count.num_items || pages !== count.num_pages) {
        violation(ex, `${count.num_items} items on ${count.num_pages} pages (count.json)`, `${seen.length} items on ${pages} pages`);
      }
    });
  }),
);
