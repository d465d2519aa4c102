import { AsyncLocalStorage } from 'node:async_hooks';
import type { Exchange } from '../../core/exchange.ts';
import { clip } from '../../core/redact.ts';
import type { ApiClient } from './client.ts';
import { activeJournal, journalIntent } from './journal/journal.ts';

/**
 * Ownership (issue 24): a run changes, uploads into or deletes an object only when the run's
 * ledger holds its id, and the ledger holds an id only after the run read the object back and
 * saw its own name on it (`pmv6-<run>-`). The harness client asks `guardRequest` before sending
 * any request but GET, HEAD and OPTIONS; nothing else decides, so no test can go around it.
 *
 * Ids are kept as the text the server sent (`exactId`): a JSON number above 2^53 is not a double.
 */
export type OwnedKind = 'password' | 'project' | 'user' | 'my_password' | 'file' | 'group';

export interface Owned {
  kind: OwnedKind;
  /** The id exactly as the server sent it (decimal text). */
  id: string;
  name: string;
}

/** A creation answered with the id of an object that does not show the run's name. */
export interface Foreign {
  kind: OwnedKind;
  id: string;
  /** The name the run sent. */
  sent: string;
  /** What the read-back showed instead (a name, a status, or a transport error). */
  shown: string;
  /** The read-back shows another object (or none): the server's doing, not the harness's. */
  finding: boolean;
  creation?: Exchange;
  readBack?: Exchange;
}

/** A write the ledger does not allow: never sent; the harness's refusal, not the server's violation. */
export class OwnershipError extends Error {
  override name = 'OwnershipError';
}

/** The run has stopped (an interrupt, a target that stopped answering): only its cleanup sends. */
export class RunStoppedError extends OwnershipError {
  override name = 'RunStoppedError';
}

/** The runner's own cleanup (settings restore, sweep): it sends after the run has stopped. */
const cleanupContext = new AsyncLocalStorage<true>();

export function asCleanup<T>(fn: () => T): T {
  return cleanupContext.run(true, fn);
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The path segment that names a kind of object; the segment after it is that object's id. */
const SEGMENT_KIND: Readonly<Record<string, OwnedKind>> = {
  passwords: 'password',
  projects: 'project',
  my_passwords: 'my_password',
  users: 'user',
  groups: 'group',
  files: 'file',
  favorite_passwords: 'password',
  favorite_projects: 'project',
  add_user: 'user',
  delete_user: 'user',
  download: 'file',
};

/** Words after a kind's segment that are not ids (lists, searches, counts, file settings). */
const NOT_IDS = new Set([
  'page',
  'archived',
  'search',
  'count',
  'favorite',
  'max_upload_file_size',
  'uploads_folder_info',
  'download',
  'add_user',
  'delete_user',
]);

/**
 * A creation not yet read back (Ledger.expect): the run writes to it only once a response shows
 * it with the run's name, passively (Ledger.observe) or by its read-back (Ledger.settle).
 */
export interface Pending {
  kind: OwnedKind;
  id: string;
  name: string;
  creation?: Exchange;
  /** Who reads it back, in order (verifyCreated). */
  readers: readonly ApiClient[];
  acceptUnreadable?: boolean;
  /** Told of the verdict once, however it was reached. */
  onVerdict?: (v: Verdict) => void;
  /** A list read (by `key`) that shows this creation with others, read once for all of them. */
  bulk?: { key: string; read: () => Promise<unknown> };
}

type PendingEntry = Pending & { settling?: Promise<Verdict>; readingBack?: boolean; since: number };

/** List paths whose items are objects of one kind (the first segment's), shown with their names. */
const LIST_KIND = /^\/(passwords|projects|my_passwords|users|groups)(\/archived|\/search\/[^/]+)?(\/page\/\d+)?\.json$/;

export class Ledger {
  readonly prefix: string;
  private readonly owned = new Map<string, Owned>();
  private readonly pending = new Map<string, PendingEntry>();
  /** List reads in flight that may show many pending creations at once (Pending.bulk). */
  private readonly bulkReads = new Map<string, Promise<unknown>>();
  /** How each creation that was pending ended. */
  private readonly settled = new Map<string, Verdict>();
  /** `kind:id` of every DELETE of the run answered 2XX while a creation was pending, in order. */
  private readonly removed: string[] = [];
  /** Owned ids the run deleted (still its own: a probe may write to them, never to another's). */
  private readonly deleted = new Set<string>();
  readonly foreign: Foreign[] = [];
  /** Told of every foreign id (the runner hands them to the oracle as findings). */
  onForeign: ((f: Foreign) => void) | undefined;

  /** Why the run stopped; from then on only the cleanup (asCleanup) sends anything. */
  stopped: string | undefined;

  constructor(readonly runId: string) {
    this.prefix = `pmv6-${runId}-`;
  }

  /** Files still running send nothing more (their requests throw RunStoppedError): nothing is created after the sweep. */
  stop(reason: string): void {
    this.stopped ??= reason;
  }

  /** True when a name shown by the target is one of this run's (`pmv6-<run>-` in it). */
  shows(name: unknown): boolean {
    return typeof name === 'string' && name.includes(this.prefix);
  }

  record(kind: OwnedKind, id: string, name: string): void {
    this.owned.set(`${kind}:${id}`, { kind, id, name });
  }

  /**
   * Decision (issue 26's request budget): a creation is read back only when needed. Until a
   * response shows the id with the run's name (observe) or its read-back does (settle), it is
   * pending: not the run's, so guardRequest refuses writes to it; the harness client settles the
   * pending ids a write names before sending it.
   */
  expect(p: Pending): void {
    const key = `${p.kind}:${p.id}`;
    // Another creation answered with the same id: one read-back, each told its verdict.
    const open = this.pending.get(key);
    if (open) {
      const first = open.onVerdict;
      const also = p.onVerdict;
      if (also)
        open.onVerdict = (v) => {
          first?.(v);
          also(v);
        };
      return;
    }
    const settled = this.settled.get(key);
    if (settled) p.onVerdict?.(settled);
    if (settled || this.owned.has(key)) return;
    const entry = p as PendingEntry;
    entry.since = this.removed.length;
    this.pending.set(key, entry);
  }

  /** The pending creation this id text names (its exact text, or the one pending id of that value above 2^53). */
  pendingFor(kind: OwnedKind, text: string): Pending | undefined {
    const exact = this.pending.get(`${kind}:${text}`);
    if (exact) return exact;
    if (!/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(text)) return undefined;
    const value = Number(text);
    if (!Number.isFinite(value) || Number.isSafeInteger(value)) return undefined;
    const same = [...this.pending.values()].filter((p) => p.kind === kind && Number(p.id) === value);
    return same.length === 1 ? same[0] : undefined;
  }

  /** Pending creations, of one kind or all. */
  pendingOf(kind?: OwnedKind): Pending[] {
    return [...this.pending.values()].filter((p) => kind === undefined || p.kind === kind);
  }

  private confirm(p: Pending, readBack?: Exchange): void {
    const key = `${p.kind}:${p.id}`;
    if (!this.pending.delete(key)) return;
    this.record(p.kind, p.id, p.name);
    const v: Verdict = { owned: true, ...(readBack ? { readBack } : {}) };
    this.settled.set(key, v);
    p.onVerdict?.(v);
  }

  /**
   * Every 200 answer to a GET of the API (`path` below the API root): a show of a pending id,
   * or a list page holding it, whose name is the run's makes it the run's. Nothing else decides
   * here: an answer that does not show the name leaves the id pending for its read-back.
   */
  observe(path: string, ex: Exchange): void {
    if (this.pending.size === 0) return;
    const bare = path.split(/[?#]/)[0] ?? '';
    const status = ex.response?.status;
    if (ex.request.method.toUpperCase() === 'DELETE' && status !== undefined && status >= 200 && status < 300) {
      const target = /^\/(passwords|projects|my_passwords|users|groups|files)\/([^/]+)\.json$/.exec(bare);
      if (target) this.removed.push(`${SEGMENT_KIND[target[1]!]!}:${decode(target[2]!)}`);
      return;
    }
    if (status !== 200 || ex.request.method.toUpperCase() !== 'GET') return;
    const show = /^\/(passwords|projects|my_passwords|users|groups|files)\/([^/]+)\.json$/.exec(bare);
    if (show) {
      const kind = SEGMENT_KIND[show[1]!]!;
      const text = exactId(ex);
      const p = text === undefined ? undefined : this.pending.get(`${kind}:${text}`);
      if (p && !p.readingBack && (text === decode(show[2]!) || (kind === 'user' && show[2] === 'me')) && this.shows(shownName(ex.json))) this.confirm(p, ex);
      return;
    }
    const list = LIST_KIND.exec(bare);
    if (!list || !Array.isArray(ex.json)) return;
    const kind = SEGMENT_KIND[list[1]!]!;
    const items = ex.json as unknown[];
    for (const [i, id] of exactItemIds(ex).entries()) {
      const p = id === undefined ? undefined : this.pending.get(`${kind}:${id}`);
      if (p && !p.readingBack && this.shows(shownName(items[i]))) this.confirm(p);
    }
  }

  /**
   * The verdict on a pending creation: its read-back (verifyCreated), sent once however many
   * ask. `deferred`: the read-back comes long after the creation (the cleanup), so a 404 may be
   * a container's deletion: gone, not the server's finding.
   */
  settle(p: Pending, opts: { deferred?: boolean } = {}): Promise<Verdict> {
    const key = `${p.kind}:${p.id}`;
    const entry = this.pending.get(key);
    if (!entry) return Promise.resolve(this.settled.get(key) ?? { owned: true });
    entry.settling ??= this.settleNow(key, entry, opts);
    return entry.settling;
  }

  private async settleNow(key: string, entry: PendingEntry, opts: { deferred?: boolean }): Promise<Verdict> {
    // One list read shows many of them (a search by the file's name prefix): worth it from two on.
    const bulk = entry.bulk;
    if (bulk && [...this.pending.values()].filter((q) => q.bulk?.key === bulk.key).length >= 2) {
      let read = this.bulkReads.get(bulk.key);
      if (!read) {
        read = bulk.read().then(
          () => this.bulkReads.delete(bulk.key),
          () => this.bulkReads.delete(bulk.key),
        );
        this.bulkReads.set(bulk.key, read);
      }
      await read;
      if (!this.pending.has(key)) return this.settled.get(key) ?? { owned: true };
    }
    entry.readingBack = true;
    const v = await verifyCreated(
      this,
      entry.readers,
      { kind: entry.kind, id: entry.id, name: entry.name, ...(entry.creation ? { creation: entry.creation } : {}) },
      {
        ...(entry.acceptUnreadable ? { acceptUnreadable: true } : {}),
        ...(opts.deferred ? { deferred: true } : {}),
        removedByRun: () => this.removedSince(entry),
      },
    );
    this.pending.delete(key);
    this.settled.set(key, v);
    entry.onVerdict?.(v);
    return v;
  }

  /**
   * Whether the run itself had a DELETE answered 2XX, since this creation, of its id or of the
   * container its creation named (`project_id`, `parent_id`: product facts §6, a project's
   * deletion takes its passwords and subprojects with it). Then its read-back's 404 is the run's
   * own doing: gone, not another's object (a DELETE a server must refuse but serves, sent beside
   * the calls that write to the object, ERR-02).
   */
  private removedSince(entry: PendingEntry): boolean {
    if (this.removed.length <= entry.since) return false;
    const keys = new Set([`${entry.kind}:${entry.id}`]);
    let body: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(entry.creation?.request.body ?? 'null');
      if (parsed !== null && typeof parsed === 'object') body = parsed as Record<string, unknown>;
    } catch {
      body = undefined;
    }
    for (const member of ['project_id', 'parent_id']) {
      const id = body?.[member];
      if (typeof id === 'number' || typeof id === 'string') keys.add(`project:${id}`);
    }
    return this.removed.slice(entry.since).some((k) => keys.has(k));
  }

  /**
   * Settles the pending ids a write to `url` names (below `base`); reads settle nothing. The
   * verdicts that did not make an id the run's: the write will be refused (guardRequest).
   */
  async settleFor(method: string, url: string, base: string, body?: unknown): Promise<Verdict[]> {
    if (this.pending.size === 0 || READS.has(method.toUpperCase())) return [];
    const below = url.startsWith(`${base}/`) ? url.slice(base.length) : pathOf(url);
    const waits: Promise<Verdict>[] = [];
    for (const { kind, id } of [...idsInPath(below.split(/[?#]/)[0] ?? ''), ...idsInBody(body)]) {
      if (this.resolve(kind, id) !== undefined) continue;
      const p = this.pendingFor(kind, id);
      if (p) waits.push(this.settle(p));
    }
    return (await Promise.all(waits)).filter((v) => !v.owned);
  }

  reportForeign(f: Foreign): void {
    this.foreign.push(f);
    this.onForeign?.(f);
  }

  /** The run deleted it: kept as the run's (a 404 probe may name it), listed no more. */
  markDeleted(kind: OwnedKind, id: string): void {
    if (this.owned.has(`${kind}:${id}`)) this.deleted.add(`${kind}:${id}`);
  }

  /** Objects the run owns and has not deleted, in the order it made them. */
  live(): Owned[] {
    return [...this.owned.entries()].filter(([k]) => !this.deleted.has(k)).map(([, o]) => o);
  }

  /**
   * The exact id the ledger holds for this id text, or undefined. A text that is a number the
   * ledger holds only in another spelling (a double rounded above 2^53, `1.2e+21`) resolves to
   * the exact text when exactly one owned id of the kind has that value.
   */
  resolve(kind: OwnedKind, text: string): string | undefined {
    if (this.owned.has(`${kind}:${text}`)) return text;
    if (!/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(text)) return undefined;
    const value = Number(text);
    if (!Number.isFinite(value) || Number.isSafeInteger(value)) return undefined;
    const same = [...this.owned.values()].filter((o) => o.kind === kind && Number(o.id) === value);
    return same.length === 1 ? same[0]!.id : undefined;
  }
}

let active: Ledger | undefined;
/**
 * The ledger of the run a context belongs to: the runner runs its files and its cleanup inside
 * `withLedger`, so a file still running after its run has ended keeps its (stopped) ledger and
 * sends nothing, whatever runs next in the process.
 */
const ledgers = new AsyncLocalStorage<Ledger>();

/** A ledger for every context (the project's own tests); runs use withLedger. */
export function openLedger(ledger: Ledger | undefined): void {
  active = ledger;
}

export function withLedger<T>(ledger: Ledger, fn: () => T): T {
  return ledgers.run(ledger, fn);
}

export function activeLedger(): Ledger | undefined {
  return ledgers.getStore() ?? active;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Each id a path names, with its kind and where it stands (segment index). */
export function idsInPath(path: string): Array<{ kind: OwnedKind; id: string; at: number }> {
  const segments = (path.split(/[?#]/)[0] ?? '').split('/');
  const out: Array<{ kind: OwnedKind; id: string; at: number }> = [];
  for (let i = 0; i < segments.length - 1; i++) {
    const kind = SEGMENT_KIND[decode(segments[i]!)];
    if (!kind) continue;
    let j = i + 1;
    while (j < segments.length && segments[j] === '') j++;
    if (j >= segments.length) break;
    const id = decode(segments[j]!).replace(/\.json$/, '');
    if (!NOT_IDS.has(id)) out.push({ kind, id, at: j });
  }
  return out;
}

/**
 * Called by the harness client for every request: a write (any method but GET, HEAD, OPTIONS)
 * whose path names an object id not held by the run's ledger throws OwnershipError (nothing is
 * sent); an id held in another spelling is replaced by the exact text, on reads too. `base` is
 * the client's base URL: only the path below it is read. Without an open ledger (outside a run)
 * the request is left as it is.
 */
export function guardRequest(method: string, url: string, base: string, body?: unknown): string {
  const sent = guarded(method, url, base);
  // Body ids are guarded like path ids (issue 36): a write whose JSON body names an object (a
  // password's project_id, a project's parent_id, the users and groups of a security payload)
  // that is not the run's is never sent.
  const ledger = activeLedger();
  if (ledger && !READS.has(method.toUpperCase()))
    for (const { kind, id, field } of idsInBody(body))
      if (ledger.resolve(kind, id) === undefined)
        throw new OwnershipError(
          `harness: ${method.toUpperCase()} not sent: its body's ${field} names ${kind} ${clip(id, 40)}, not an object this run created and verified (a run writes only to its own objects)`,
        );
  // The journal (suites/harness/journal/): a write the guard lets go is on disk before it is sent.
  if (activeJournal() && !READS.has(method.toUpperCase())) {
    const control = !base.endsWith(V6_ROOT);
    const below = sent.startsWith(`${base}/`) ? sent.slice(base.length) : pathOf(sent);
    journalIntent(method, below.split(/[?#]/)[0] ?? below, control, body);
  }
  return sent;
}

const V6_ROOT = '/index.php/api/v6';

function guarded(method: string, url: string, base: string): string {
  const ledger = activeLedger();
  if (!ledger) return url;
  if (ledger.stopped !== undefined && !cleanupContext.getStore()) {
    throw new RunStoppedError(`harness: ${method.toUpperCase()} not sent: ${ledger.stopped}`);
  }
  const write = !READS.has(method.toUpperCase());
  const below = url.startsWith(`${base}/`) ? url.slice(base.length) : pathOf(url);
  const cut = below.search(/[?#]/);
  const path = cut < 0 ? below : below.slice(0, cut);
  const ids = idsInPath(path);
  if (ids.length === 0) return url;
  const segments = path.split('/');
  let changed = false;
  for (const { kind, id, at } of ids) {
    const exact = ledger.resolve(kind, id);
    if (exact === undefined) {
      if (write) {
        throw new OwnershipError(
          `harness: ${method.toUpperCase()} ${clip(path, 200)} not sent: ${kind} ${clip(id, 40)} is not an object this run created and verified (a run writes only to its own objects)`,
        );
      }
      continue;
    }
    if (exact !== id) {
      segments[at] = `${exact}${segments[at]!.endsWith('.json') ? '.json' : ''}`;
      changed = true;
    }
  }
  if (!changed) return url;
  const rebuilt = segments.join('/') + (cut < 0 ? '' : below.slice(cut));
  return url.startsWith(`${base}/`) ? `${base}${rebuilt}` : url.replace(below, rebuilt);
}

/** Body members that name an object, by kind; `*_permissions` hold [id, permission] pairs. */
const BODY_IDS: Readonly<Record<string, OwnedKind>> = {
  project_id: 'project',
  parent_id: 'project',
  password_id: 'password',
  user_id: 'user',
  group_id: 'group',
  managed_by: 'user',
};
const BODY_ID_LISTS: Readonly<Record<string, OwnedKind>> = { users_permissions: 'user', groups_permissions: 'group', users: 'user', groups: 'group' };

const idText = (v: unknown): string | undefined =>
  typeof v === 'number' && Number.isInteger(v) && v > 0 ? String(v) : typeof v === 'string' && /^[1-9]\d{0,39}$/.test(v) ? v : undefined;

/**
 * The object ids a write's JSON body names, at its top level: 0 (a root project) and values that
 * are no positive integer (a probe's bad value) name nothing. A text body is parsed when it is JSON.
 */
export function idsInBody(body: unknown): Array<{ kind: OwnedKind; id: string; field: string }> {
  let json = body;
  if (typeof body === 'string') {
    try {
      json = JSON.parse(body);
    } catch {
      return [];
    }
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return [];
  const out: Array<{ kind: OwnedKind; id: string; field: string }> = [];
  for (const [field, value] of Object.entries(json as Record<string, unknown>)) {
    const kind = BODY_IDS[field];
    const id = kind ? idText(value) : undefined;
    if (kind && id) out.push({ kind, id, field });
    const listKind = BODY_ID_LISTS[field];
    if (listKind && Array.isArray(value))
      for (const item of value) {
        const each = idText(Array.isArray(item) ? item[0] : item);
        if (each) out.push({ kind: listKind, id: each, field });
      }
  }
  return out;
}

function pathOf(url: string): string {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^#]*)/i.exec(url);
  return m?.[1] ?? url;
}

/**
 * The id of a JSON body's top level `id` member exactly as sent: a number's own digits (a JSON
 * number above 2^53 is read from the text, never through a double), or a string of digits.
 * Undefined when there is no such id.
 */
export function exactId(ex: Exchange): string | undefined {
  const id = (ex.json as { id?: unknown } | null | undefined)?.id;
  if (typeof id === 'string') return /^\d{1,40}$/.test(id) ? id : undefined;
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) return undefined;
  if (Number.isSafeInteger(id)) return String(id);
  return topLevelNumber(ex.response?.body ?? '', 'id');
}

/**
 * The ids of the objects of a JSON array body, in order, exactly as sent (see exactId); an item
 * without an integer id gives undefined.
 */
export function exactItemIds(ex: Exchange): Array<string | undefined> {
  const items = Array.isArray(ex.json) ? (ex.json as Array<{ id?: unknown } | null>) : [];
  const plain = items.map((item) => {
    const id = item?.id;
    if (typeof id === 'string') return /^\d{1,40}$/.test(id) ? id : undefined;
    return typeof id === 'number' && Number.isSafeInteger(id) && id >= 0 ? String(id) : undefined;
  });
  if (items.every((item) => typeof item?.id !== 'number' || Number.isSafeInteger(item.id))) return plain;
  const raw = arrayItemNumbers(ex.response?.body ?? '', 'id');
  return raw.length === items.length ? raw.map((r, i) => plain[i] ?? (r !== undefined && /^\d+$/.test(r) ? r : undefined)) : plain;
}

/** Skips a JSON string starting at `i` (a quote); returns the index after it. */
function skipString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return text.length;
}

/** The raw text of a number member `key` at depth 1 of a JSON object body. */
function topLevelNumber(text: string, key: string): string | undefined {
  return membersAt(text, 1, key)[0];
}

/** For each object at depth 2 (items of a top-level array), the raw text of its number member `key`. */
function arrayItemNumbers(text: string, key: string): Array<string | undefined> {
  return membersAt(text, 2, key, true);
}

/**
 * One pass over the text (linear, no recursion): the raw number text of member `key` in each
 * object at `depth`; with `perObject`, one entry for every object at that depth (undefined when
 * it has none).
 */
function membersAt(text: string, depth: number, key: string, perObject = false): Array<string | undefined> {
  const out: Array<string | undefined> = [];
  let level = 0;
  let lastKey: string | undefined;
  let expectValue = false;
  let found: string | undefined;
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    if (c === '"') {
      const end = skipString(text, i);
      if (!expectValue && level === depth) {
        try {
          lastKey = JSON.parse(text.slice(i, end)) as string;
        } catch {
          lastKey = undefined;
        }
      }
      expectValue = false;
      i = end;
      continue;
    }
    if (c === ':') {
      expectValue = true;
      i++;
      continue;
    }
    if (c === '{' || c === '[') {
      level++;
      if (c === '{' && level === depth) found = undefined;
      expectValue = false;
      i++;
      continue;
    }
    if (c === '}' || c === ']') {
      if (c === '}' && level === depth && perObject) out.push(found);
      level--;
      i++;
      continue;
    }
    if (c === ',') {
      expectValue = false;
      i++;
      continue;
    }
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 64));
    if (m) {
      if (expectValue && level === depth && lastKey === key) {
        if (perObject) found = m[0];
        else out.push(m[0]);
      }
      expectValue = false;
      i += m[0].length;
      continue;
    }
    i++;
  }
  return out;
}

/** The name a read-back shows for an object (users show a username, files a name or filename). */
function shownName(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const o = body as Record<string, unknown>;
  for (const key of ['name', 'username', 'filename']) if (typeof o[key] === 'string') return o[key] as string;
  return undefined;
}

/** The path that shows one object: `/<kind>s/ID.json` (product facts §6). */
export function showPath(kind: OwnedKind, id: string): string {
  return `/${kind}s/${id}.json`;
}

export type Verdict = { owned: true; readBack?: Exchange } | { owned: false; foreign: Foreign } | { owned: false; gone: true; readBack: Exchange };

/**
 * Reads the object back as `reader` and records it as the run's when it shows the run's name.
 * `acceptUnreadable`: a read-back the target does not offer (404/405 on a user made through the
 * control protocol, whose answer already named it) still counts. Otherwise the id is never
 * written to: a read-back that shows another object (200 with a name not the run's, or 404 for
 * the id just created) is reported as foreign (`Foreign.finding`: the server's), any other
 * answer leaves the id unverified (the harness's setup failure).
 */
export async function verifyCreated(
  ledger: Ledger,
  readers: ApiClient | readonly ApiClient[],
  created: { kind: OwnedKind; id: string; name: string; creation?: Exchange },
  opts: { acceptUnreadable?: boolean; deferred?: boolean; removedByRun?: () => boolean } = {},
): Promise<Verdict> {
  const { kind, id, name } = created;
  // The first reader whose read-back is answered 200 decides (the creator may read what the
  // Admin over Basic may not, under HMAC-only; the Admin what a refused creator may not).
  const list: ApiClient[] = [...new Set(Array.isArray(readers) ? (readers as ApiClient[]) : [readers as ApiClient])];
  let readBack: Exchange = await list[0]!.get(showPath(kind, id));
  for (const reader of list.slice(1)) {
    if (readBack.response?.status === 200) break;
    readBack = await reader.get(showPath(kind, id));
  }
  const status = readBack.response?.status;
  const shown = shownName(readBack.json);
  if ((status === 200 && ledger.shows(shown)) || (opts.acceptUnreadable && (status === 404 || status === 405))) {
    ledger.record(kind, id, name);
    return { owned: true, readBack };
  }
  // Read back long after the creation, 404 may be its container's deletion: gone, not a finding.
  if (opts.deferred && status === 404) return { owned: false, gone: true, readBack };
  // The run deleted it, or its container (Ledger.removedSince): the run's, and deleted; a write
  // the test still sends to it goes out and is answered (404), as to any object the run deleted.
  if (status === 404 && opts.removedByRun?.()) {
    ledger.record(kind, id, name);
    ledger.markDeleted(kind, id);
    return { owned: false, gone: true, readBack };
  }
  const foreign: Foreign = {
    kind,
    id,
    sent: name,
    finding: status === 200 || status === 404,
    shown:
      status === undefined
        ? `no answer to the read-back GET ${showPath(kind, id)} (${readBack.error ?? 'unknown error'})`
        : status !== 200
          ? `the read-back GET ${showPath(kind, id)} answered ${status}`
          : shown === undefined
            ? 'an object without a name'
            : `an object named ${JSON.stringify(clip(shown, 120))}`,
    readBack,
    ...(created.creation ? { creation: created.creation } : {}),
  };
  ledger.reportForeign(foreign);
  return { owned: false, foreign };
}

/** Whether the run's ledger lets a write to this API path go (always, outside a run). */
export function mayWrite(method: string, path: string): boolean {
  try {
    guardRequest(method, `http://x${path}`, 'http://x');
    return true;
  } catch {
    return false;
  }
}

/** One line naming an id the run will not touch, and why. */
export function foreignText(f: Foreign): string {
  return `the target answered the creation of ${f.kind} ${JSON.stringify(clip(f.sent, 80))} with id ${clip(f.id, 40)}, and ${f.shown}: never written to`;
}
