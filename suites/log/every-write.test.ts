import type { Exchange } from '../../core/exchange.ts';
import { clip } from '../../core/redact.ts';
import { violation } from '../harness/assert.ts';
import { isSuccess } from '../harness/checks.ts';
import { type ClauseTestContext, clauseTest } from '../harness/clause-test.ts';
import { type Endpoint, type EndpointData, kindsOf, label, notServed, useEndpoints, WRITING } from '../harness/endpoints.ts';
import { exclusive } from '../harness/gate.ts';
import { useSession } from '../harness/session.ts';
import { countDrift, DRIFT_PAIRS, LOG_PAGE_SIZE, logCount, logPage, logSearch, mentions, originMarks, saysApi, saysWeb, WHOLE_LOG } from './log-reader.ts';

// "Every action caused by an API request is written to the action log": every writing entry of
// the endpoint table (POST, PUT, DELETE) is called once as the Admin on objects the run made for
// it, and the log's count is read just before and after it. The entries that appeared on the
// log's first page are the call's entries (the product lists the log newest first). A product
// path that answers 404 or 405, or refuses the product's payload, is left out.

const s = useSession();
const calls = useEndpoints(s);

interface Write {
  endpoint: Endpoint;
  ex: Exchange;
  /** New log entries, less what reading the count adds by itself. */
  added: number;
  /** Entries on the log's first page after the call that were not there before it. */
  entries: unknown[];
  /** The objects the call named or made. */
  subject: EndpointData;
}

let writes: Promise<Write[]> | undefined;
const everyWrite = (t: ClauseTestContext) => (writes ??= writeEach(t));

/**
 * Whether reading the log adds nothing: then a page and the count are read side by side (either
 * order reads the same log). Otherwise they are read one after the other, the page before the
 * count before a call and after it after, so each count discounts only its own read. Decision:
 * a page read between two counts that agree shows it, tried at most DRIFT_PAIRS times while other
 * users' entries land between them (as countDrift); the page and the second count are then the
 * log before the first call.
 */
async function readsAddNothing(drift: number, count: number, base: string): Promise<LogRead | undefined> {
  if (drift !== 0) return undefined;
  let before = count;
  for (let pair = 0; pair < DRIFT_PAIRS; pair++) {
    const page = await logPage(s, undefined, base);
    const after = await logCount(s, base);
    if (after === before) return { page, count: after };
    before = after;
  }
  return undefined;
}

interface LogRead {
  page: Awaited<ReturnType<typeof logPage>>;
  count: number;
}

/**
 * The log search for the file's search text, when it is a list of the file's own: served, and
 * holding the entries of the objects the file made for its calls (their names hold the text).
 */
async function ownSearch(search: string): Promise<string | undefined> {
  const base = logSearch(search);
  const ex = await s.admin.get(`${base}/count.json`, { headers: { 'X-Page-Size': String(LOG_PAGE_SIZE) } });
  const n = (ex.json as { num_items?: unknown } | undefined)?.num_items;
  return ex.response?.status === 200 && typeof n === 'number' && n > 0 ? base : undefined;
}

/**
 * Decision (issue 38: no serial tail): the file runs beside the others. Its writes are counted on
 * a list of its own, the log search for its search text (`ownSearch`), which the writes of other
 * files never add to; a write that added nothing there (its entry may not hold the name: the
 * fields are not shown) is made again on fresh objects and counted on the whole log with the
 * target to itself (the gate's exclusive section), as the file did when it ran alone. Without
 * such a search every write is counted that way.
 */
async function writeEach(t: ClauseTestContext): Promise<Write[]> {
  await logPage(s);
  // Every call's objects are made before the first count, side by side.
  const subjects = await calls.subjects(WRITING);
  const search = subjects.find((d): d is EndpointData => typeof d !== 'string')?.search;
  const own = search === undefined ? undefined : await ownSearch(search);
  t.observe('writes counted on', own ? `the log search for the file's search text (${own})` : 'the whole log, with the target to itself');
  const left: Record<string, string> = {};
  let out: Write[];
  let again: Endpoint[] = [];
  if (own === undefined) out = await exclusive(() => windows(WRITING, subjects, WHOLE_LOG, left));
  else {
    const counted = await windows(WRITING, subjects, own, left);
    out = counted.filter((w) => w.added >= 1);
    again = counted.filter((w) => w.added < 1).map((w) => w.endpoint);
  }
  if (again.length > 0) {
    const fresh = await calls.subjects(again);
    out.push(...(await exclusive(() => windows(again, fresh, WHOLE_LOG, left))));
    t.observe('writes counted on the whole log (their entries were not found by the log search for the names they hold)', again.map(label));
  }
  if (Object.keys(left).length > 0) t.observe('writes left out', left);
  if (out.length === 0) t.unverifiable('no writing endpoint of the table succeeded');
  const order = new Map(WRITING.map((e, i) => [e, i]));
  return out.sort((a, b) => order.get(a.endpoint)! - order.get(b.endpoint)!);
}

/**
 * Each endpoint called once on its subject, the log (`base`: the whole log or a list of the
 * file's own) read just before and after it. Between two calls the file sends nothing to the
 * log's list, so when reading adds nothing the log read after a call is the log before the next
 * one.
 */
async function windows(
  endpoints: readonly Endpoint[],
  subjects: ReadonlyArray<EndpointData | string>,
  base: string,
  left: Record<string, string>,
): Promise<Write[]> {
  const { drift, count } = await countDrift(s, base);
  let last = await readsAddNothing(drift, count, base);
  const quiet = last !== undefined;
  // The log's first page and count, side by side when reading adds nothing, else in this order.
  const readLog = async (order: 'page first' | 'count first'): Promise<LogRead> => {
    if (quiet) {
      const [page, count] = await Promise.all([logPage(s, undefined, base), logCount(s, base)]);
      return { page, count };
    }
    if (order === 'page first') {
      const page = await logPage(s, undefined, base);
      return { page, count: await logCount(s, base) };
    }
    const count = await logCount(s, base);
    return { page: await logPage(s, undefined, base), count };
  };
  const out: Write[] = [];
  for (const [i, endpoint] of endpoints.entries()) {
    const subject = subjects[i]!;
    if (typeof subject === 'string') {
      left[label(endpoint)] = subject;
      continue;
    }
    // Nothing was sent since the last reading of the log: its page (read after its count) is the
    // page before this call; when reading may add entries, only a fresh count follows it.
    const { page: pageBefore, count: before } = quiet && last ? last : last ? { page: last.page, count: await logCount(s, base) } : await readLog('page first');
    const seen = new Set(pageBefore.entries.map((e) => JSON.stringify(e)));
    const ex = await calls.call(s.admin, endpoint, subject);
    last = await readLog('count first');
    const { page: pageAfter, count: after } = last;
    if (notServed(endpoint, ex) || !isSuccess(ex)) {
      left[label(endpoint)] = `answered ${ex.response?.status ?? ex.error}`;
      continue;
    }
    const entries = pageAfter.entries.filter((e) => !seen.has(JSON.stringify(e)));
    out.push({ endpoint, ex, added: after - before - drift, entries, subject });
  }
  return out;
}

clauseTest('LOG-01', 'write each successful POST, PUT and DELETE of the endpoint table to the action log', async (t) => {
  const missing = (await everyWrite(t)).filter((w) => w.added < 1);
  t.observe('writes checked', (await everyWrite(t)).length);
  if (missing.length > 0) {
    violation(missing[0]!.ex, 'a new log entry for every successful write', missing.map((w) => `${label(w.endpoint)}: ${w.added} new entries`).join('; '));
  }
});

clauseTest('LOG-02', 'record how the log marks each write of the endpoint table as coming from the API', async (t) => {
  const found = (await everyWrite(t)).filter((w) => w.entries.length > 0);
  if (found.length === 0) t.unverifiable("no write left a new entry on the log's first page (LOG-01)");
  const unmarked = found.filter((w) => !w.entries.some((e) => originMarks(e).some(([, v]) => saysApi(v))));
  t.observe(
    'origins',
    Object.fromEntries(
      found.map((w) => [
        label(w.endpoint),
        originMarks(w.entries[0])
          .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
          .join(', ') || 'none',
      ]),
    ),
  );
  if (unmarked.length > 0) {
    violation(
      unmarked[0]!.ex,
      'a log entry that says the write came from the API',
      unmarked.map((w) => `${label(w.endpoint)}: ${clip(JSON.stringify(w.entries[0]), 200)}`).join('; '),
    );
  }
});

clauseTest('LOG-05', 'not mark any write of the endpoint table made through the API as coming from the web interface', async (t) => {
  const found = (await everyWrite(t)).filter((w) => w.entries.length > 0);
  if (found.length === 0) t.unverifiable("no write left a new entry on the log's first page (LOG-01)");
  // Other users act while a run goes on: an entry of theirs from the web interface can appear
  // beside a write's own. A write is marked web when its new entries say web and none says API.
  const saysOnly = (e: unknown, says: (v: unknown) => boolean, not: (v: unknown) => boolean) => originMarks(e).some(([, v]) => says(v) && !not(v));
  const web = found.filter((w) => w.entries.some((e) => saysOnly(e, saysWeb, saysApi)) && !w.entries.some((e) => originMarks(e).some(([, v]) => saysApi(v))));
  if (web.length > 0) {
    violation(
      web[0]!.ex,
      'no log entry of an API write whose origin says the web interface',
      web.map((w) => `${label(w.endpoint)}: ${JSON.stringify(w.entries[0]).slice(0, 200)}`).join('; '),
    );
  }
});

/** An entry without what tells two writings of one action apart: its id and its time. */
function withoutIdAndTime(entry: unknown): string {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return JSON.stringify(entry);
  return JSON.stringify(Object.entries(entry).filter(([k]) => k !== 'id' && !/date|time/i.test(k)));
}

/**
 * The new entries of a write that are about its own objects: they name the file's search text
 * (every name the file gives holds it) or the id of an object the call named or made. Other
 * users' entries on a busy installation name neither. An entry that names the path of the
 * file's log search is a read of that list the server recorded (what counts as an action is
 * not shown), not the write's.
 */
function about(w: Write, entry: unknown): boolean {
  if (mentions(entry, logSearch(w.subject.search))) return false;
  if (mentions(entry, w.subject.search)) return true;
  const made = (w.ex.json as { id?: unknown } | undefined)?.id;
  const objects = kindsOf(w.endpoint).flatMap((kind) => (w.subject.ids[kind] === undefined ? [] : [{ kind, id: w.subject.ids[kind]! }]));
  if (w.endpoint.creates && typeof made === 'number') objects.push({ kind: w.endpoint.creates, id: made });
  return objects.some((o) => mentions(entry, '\u0000', o));
}

// "Every action caused by an API request is written to the action log": one action, one entry.
// Decision: between the log read before a write and the one after it the run sends the write,
// its read-back and two reads of the log's count; two new entries about the write's own objects
// that are alike but for their id and time are one action written twice. Other users' entries
// name none of the run's objects; reads the server may log differ by their path.
clauseTest('LOG-06', 'write each successful POST, PUT and DELETE of the endpoint table to the action log once', async (t) => {
  const writes = await everyWrite(t);
  const twice = writes.flatMap((w) => {
    const seen = new Set<string>();
    const doubled = w.entries.filter((e) => about(w, e)).find((e) => seen.size === seen.add(withoutIdAndTime(e)).size);
    return doubled === undefined ? [] : [{ w, doubled }];
  });
  t.observe('writes checked', writes.length);
  if (twice.length > 0) {
    violation(
      twice[0]!.w.ex,
      'one log entry for each action of a write',
      twice.map(({ w, doubled }) => `${label(w.endpoint)}: two entries alike but for id and time: ${clip(JSON.stringify(doubled), 200)}`).join('; '),
    );
  }
});
