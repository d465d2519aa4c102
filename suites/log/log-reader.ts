import type { Exchange } from '../../core/exchange.ts';
import { clip } from '../../core/redact.ts';
import { expectSchema, expectStatus, precondition, violation } from '../harness/assert.ts';
import { inOrder } from '../harness/in-order.ts';
import type { Session } from '../harness/session.ts';

// The log's path and fields are "not shown"; the reader uses the product's log resource
// (product facts §6: GET log.json, paginated, Admin/IT only, newest first). A 404 or 405 there
// makes the check unverifiable, never a violation (catalogue README). Decision: it is a failed
// precondition, not the calling test's own skip, so every test that awaits a read shared between
// tests (a file's one walk of its writes) ends unverifiable with the reason.
export const LOG_PAGE_SIZE = 100;

function unlessServed(ex: Exchange, path: string): void {
  const status = ex.response?.status;
  if (status === 404 || status === 405) precondition(`GET ${path} (the product's log path; the spec shows none) answered ${status}`);
}

/** The log as a whole: the path of its list without .json. */
export const WHOLE_LOG = '/log';

/**
 * The entries of the log a search finds (GET log/search/STR.json, the product's path, product
 * facts §6): the path of that list without .json. Decision: what a search matches is not shown;
 * a file that searches for its own search text (every name it gives holds it) reads a list of
 * its own only where the search showed it finds the file's entries.
 */
export function logSearch(text: string): string {
  return `/log/search/${encodeURIComponent(text)}`;
}

/** num_items of GET /log/count.json (or of the count of `base`, a log search). */
export async function logCount(s: Session, base = WHOLE_LOG): Promise<number> {
  const ex = await s.admin.get(`${base}/count.json`, { headers: { 'X-Page-Size': String(LOG_PAGE_SIZE) } });
  unlessServed(ex, `${base}/count.json`);
  expectStatus(ex, 200);
  return (expectSchema(ex, 'count') as { num_items: number }).num_items;
}

/** One page of GET /log.json (page undefined) or /log/page/<n>.json (or of `base`, a log search), as an array. */
export async function logPage(s: Session, page?: number, base = WHOLE_LOG): Promise<{ ex: Exchange; entries: unknown[] }> {
  const path = page === undefined ? `${base}.json` : `${base}/page/${page}.json`;
  const ex = await s.admin.get(path, { headers: { 'X-Page-Size': String(LOG_PAGE_SIZE) } });
  unlessServed(ex, path);
  expectStatus(ex, 200);
  if (!Array.isArray(ex.json)) violation(ex, `a JSON array of log entries from GET ${path}`, clip(JSON.stringify(ex.json), 200) ?? 'a body that is not JSON');
  return { ex, entries: ex.json as unknown[] };
}

/**
 * True when a log entry names the object: its name anywhere in the entry's text, its id in a
 * field that relates the entry to an object of that kind (the product's `related_password`,
 * `related_project`: `{id, name, deleted}`), or the kind as a value beside the id in a field
 * named like an id (`{"object_type": "password", "object_id": 12}`). Ids match as text ("12"
 * and 12). Decision: the fields are not shown, so any of these will do.
 */
export function mentions(entry: unknown, marker: string, object?: { kind: string; id: number }): boolean {
  if (JSON.stringify(entry).includes(JSON.stringify(marker).slice(1, -1))) return true;
  if (!object || entry === null || typeof entry !== 'object') return false;
  const sameId = (v: unknown) => (typeof v === 'number' || typeof v === 'string') && String(v) === String(object.id);
  const fields = Object.entries(entry);
  if (
    fields.some(([k, v]) => k.toLowerCase().includes(object.kind) && (sameId(v) || (v !== null && typeof v === 'object' && sameId((v as { id?: unknown }).id))))
  )
    return true;
  const namesKind = fields.some(([, v]) => typeof v === 'string' && v.toLowerCase() === object.kind);
  return namesKind && fields.some(([k, v]) => /id$/i.test(k) && k.toLowerCase() !== 'id' && sameId(v));
}

/**
 * The entries of `after` that `before` did not show: told apart by their id, else by the whole
 * entry (the fields of log entries are not shown). Decision (LOG-07): an action's entry is found
 * as a new entry, not as a higher number of entries naming its object: the new entry tops the
 * first page of a log listed newest first and may push an older one naming the object off it
 * (seen once on a busy machine: one entry named the password before its view, one after).
 */
export function entriesNotIn(before: readonly unknown[], after: readonly unknown[]): unknown[] {
  const key = (entry: unknown) => {
    const id = entry !== null && typeof entry === 'object' ? (entry as { id?: unknown }).id : undefined;
    return typeof id === 'number' || typeof id === 'string' ? `id ${id}` : JSON.stringify(entry);
  };
  const seen = new Set(before.map(key));
  return after.filter((e) => !seen.has(key(e)));
}

/**
 * Entries of the first and the last page that name the object (`mentions`), and the count that
 * told which page is the last. Decision: both ends are read because the order of the log is not
 * shown (the product lists newest first). The first page and the count go side by side (the
 * count only tells which page is the last); `count`, a count the caller read after the action,
 * saves that read; `{ atLeast }`, a count read earlier (the log only grows), has its last page
 * read beside them too, and the count's own last page after them only where it is another.
 */
export async function entriesMentioning(
  s: Session,
  marker: string,
  object?: { kind: string; id: number },
  count?: number | { atLeast: number },
): Promise<{ ex: Exchange; found: unknown[]; count: number }> {
  const lastOf = (n: number) => Math.ceil(n / LOG_PAGE_SIZE);
  let n: number;
  let pages: Array<{ ex: Exchange; entries: unknown[] }>;
  if (typeof count === 'number') {
    n = count;
    pages = await Promise.all(lastOf(n) > 1 ? [logPage(s), logPage(s, lastOf(n))] : [logPage(s)]);
  } else {
    const guess = lastOf(count?.atLeast ?? 0);
    const [first, read, guessed] = await Promise.all([logPage(s), logCount(s), guess > 1 ? logPage(s, guess) : undefined]);
    n = read;
    const last = lastOf(n) <= 1 ? undefined : lastOf(n) === guess ? guessed : await logPage(s, lastOf(n));
    pages = last ? [first, last] : [first];
  }
  const found = pages.flatMap((p) => p.entries).filter((e) => mentions(e, marker, object));
  return { ex: pages[0]!.ex, found, count: n };
}

/** At most this many pairs of count reads measure the drift (`countDrift`). */
export const DRIFT_PAIRS = 5;

/**
 * How many entries reading the count adds by itself (0 unless the server logs reads of the log),
 * so a before/after comparison can discount its own reads. Decision: other users of an
 * installation act while the run reads (issue 25), and what they do only adds entries, so the
 * drift is the least difference of consecutive reads: read again while it is above 0, at most
 * DRIFT_PAIRS times (one pair on a quiet log that does not log its reads).
 */
export async function countDrift(s: Session, base = WHOLE_LOG): Promise<{ drift: number; count: number }> {
  let count = await logCount(s, base);
  let drift = Number.POSITIVE_INFINITY;
  for (let pair = 0; pair < DRIFT_PAIRS && drift > 0; pair++) {
    const next = await logCount(s, base);
    drift = Math.min(drift, next - count);
    count = next;
  }
  return { drift, count };
}

/**
 * How many copies of a request go out at once when one copy's window of the log's count saw an
 * entry it should not have, or none it should have: a server that logs the request adds one for
 * each copy. Where the request must not be logged, that many and twice the entries other users
 * added to a window as long (`unloggedHolds`).
 */
export const COPIES = 5;

/**
 * Rounds of copies, each followed by a quiet window as long, before a request is blamed for
 * entries it must not add (`unloggedHolds`).
 */
export const ROUNDS = 3;

/**
 * The most copies of a request a round sends (`unloggedHolds`). Decision: a log so busy that a
 * round would need more tells nothing of one request's entries; the request is not named, and
 * the run's load stays bounded.
 */
export const MOST_COPIES = 40;

/**
 * Windows of the log's count one after another, each the entries the log gained while one
 * window's requests went out, less what reading the count adds by itself (`drift`). Decision:
 * the count read after a window is the count before the next when the run sends nothing between
 * them, so each window still holds exactly one read of the count (the one that opens it);
 * `restart` after requests sent outside a window. `start`: a count just read (countDrift's).
 */
export class CountWindows {
  readonly #s: Session;
  readonly #drift: number;
  #last: number | undefined;

  constructor(s: Session, drift: number, start?: number) {
    this.#s = s;
    this.#drift = drift;
    this.#last = start;
  }

  /** `ms`: how long `send` took (a quiet window as long gauges what other users add in one). */
  async added<T>(send: () => Promise<T>): Promise<{ result: T; added: number; ms: number }> {
    const before = this.#last ?? (await logCount(this.#s));
    this.#last = undefined;
    const started = performance.now();
    const result = await send();
    const ms = performance.now() - started;
    const after = await logCount(this.#s);
    this.#last = after;
    return { result, added: after - before - this.#drift, ms };
  }

  /** `copies` of the request, `limit` at once; the first reply. */
  async copies(send: () => Promise<Exchange>, copies = 1, limit = copies): Promise<{ ex: Exchange; added: number; ms: number }> {
    const { result, added, ms } = await this.added(() => inOrder(Array.from({ length: copies }), limit, () => send()));
    return { ex: result[0]!, added, ms };
  }

  restart(): void {
    this.#last = undefined;
  }
}

/** A request judged by windows of the log's count: its label and how it is sent. */
export type Judged = readonly [label: string, send: () => Promise<Exchange>];

/**
 * What windows of the log's count judge (`judgeInWindows`): whether the judged replies must be
 * logged (each adds at least one entry) or must not (none adds any), which replies are judged,
 * and what the server owed a request it is blamed for.
 */
export interface WindowRule {
  logged: boolean;
  judges: (ex: Exchange) => boolean;
  owed: (label: string, ex: Exchange) => string;
}

/**
 * Judges requests by windows of the log's count (`windows`), `limit` in flight. Decision (issue
 * 38: the windows hold the target to themselves, so they go out side by side): all in one window
 * first. It proves every judged reply when it gained no entry (`logged` false) or at least one for
 * each judged reply, none of the others among them (`logged` true; a reply not judged may add an
 * entry of its own). Other users of an installation only add entries: one that lands in a window
 * can hide a missing entry (as it can in a window of one request, which is as long: one request
 * time and one read of the count) or make one appear. A window that proves nothing is not yet
 * blamed on its requests: the judged ones are halved and sent again, down to one request, which
 * then goes out COPIES times at once; a server that logs it adds an entry for each, one that does
 * not adds none, and only then is the server named with the request's label. Returns the indexes
 * of `requests` judged, with their last reply.
 */
export async function judgeInWindows(
  windows: Pick<CountWindows, 'added' | 'copies'>,
  requests: readonly Judged[],
  limit: number,
  rule: WindowRule,
): Promise<Array<{ index: number; ex: Exchange }>> {
  const judged: Array<{ index: number; ex: Exchange }> = [];
  const judge = async (group: readonly number[]): Promise<void> => {
    const { result, added, ms } = await windows.added(() => inOrder(group, limit, (i) => requests[i]![1]()));
    const picked = group.flatMap((index, k) => (rule.judges(result[k]!) ? [{ index, ex: result[k]! }] : []));
    if (picked.length === 0) return;
    const proves = rule.logged ? added >= picked.length && picked.length === group.length : added === 0;
    if (!proves && picked.length > 1) {
      const half = Math.ceil(picked.length / 2);
      for (const part of [picked.slice(0, half), picked.slice(half)]) await judge(part.map((p) => p.index));
      return;
    }
    if (!proves && group.length > 1) return judge([picked[0]!.index]);
    if (!proves) {
      const [label, send] = requests[group[0]!]!;
      if (rule.logged) {
        const again = await windows.copies(send, COPIES, limit);
        if (again.added < 1)
          violation(again.ex, rule.owed(label, picked[0]!.ex), `${added} new log entries, then ${again.added} while it was sent ${COPIES} times`);
      } else {
        const blamed = await unloggedHolds(windows, send, limit, { added, ms });
        if (blamed) violation(blamed.ex, rule.owed(label, picked[0]!.ex), `${added} new log entries in its window; then ${blamed.rounds}`);
      }
    }
    judged.push(...picked);
  };
  await judge(requests.map((_, i) => i));
  return judged.sort((a, b) => a.index - b.index);
}

/**
 * Whether a request whose own window gained entries (`first`) adds them itself: undefined when a
 * round clears it, else its reply and the rounds' figures. Decision (a populated, busy
 * installation: other users' actions add entries to every window, measured at 100 ms a reply:
 * five and more in one window of COPIES copies, LOG-03 failing a lawful server): a round sends
 * the request COPIES times plus twice the most entries a quiet window has gained so far (the
 * request's own window at first), then opens a window as long with nothing sent. The request is
 * named only when, in each of ROUNDS rounds, the copies' window gained at least one entry per
 * copy and at least half the copies more than the quiet window beside it: a server that logs
 * the request passes that at any rate of other users' entries, one that does not seldom passes
 * it once, and on a quiet log never.
 */
export async function unloggedHolds(
  windows: Pick<CountWindows, 'added' | 'copies'>,
  send: () => Promise<Exchange>,
  limit: number,
  first: { added: number; ms: number },
): Promise<{ ex: Exchange; rounds: string } | undefined> {
  let background = Math.max(0, first.added);
  const rounds: string[] = [];
  let ex: Exchange | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    const copies = COPIES + 2 * background;
    if (copies > MOST_COPIES) return undefined;
    const sent = await windows.copies(send, copies, limit);
    ex = sent.ex;
    if (sent.added < copies) return undefined;
    const quiet = await windows.added(() => new Promise<void>((resolve) => setTimeout(resolve, sent.ms)));
    rounds.push(`${sent.added} while it was sent ${copies} times, ${quiet.added} in a window as long with nothing sent`);
    if (sent.added - quiet.added < copies / 2) return undefined;
    background = Math.max(background, quiet.added);
  }
  return ex && { ex, rounds: rounds.join('; ') };
}

/**
 * The fields of a log entry that may tell where its action came from. Decision: the fields of
 * the log resource are not shown, so any field named like origin or source, or any value "api",
 * counts (the product's origin values are "web", "api", …, product facts §7).
 */
export function originMarks(entry: unknown): Array<[string, unknown]> {
  if (entry === null || typeof entry !== 'object') return [];
  return Object.entries(entry).filter(([k, v]) => /origin|source/i.test(k) || (typeof v === 'string' && v.toLowerCase() === 'api'));
}

/** True when a mark says the web interface: an origin or source that reads "web" (the product's value for actions in the UI). */
export function saysWeb(v: unknown): boolean {
  return typeof v === 'string' ? /\bweb\b/i.test(v) : v !== null && typeof v === 'object' && Object.values(v).some(saysWeb);
}

/** True when a mark says API (a string holding the word, or an object with such a string). */
export function saysApi(v: unknown): boolean {
  return typeof v === 'string' ? /\bapi\b/i.test(v) : v !== null && typeof v === 'object' && Object.values(v).some(saysApi);
}
