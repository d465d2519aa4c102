/**
 * Relations between answers: rules that hold one reply to another reply, or to what the run
 * itself did, rather than to the spec's words about one reply. The response oracle hands every
 * exchange it judges to `Relations.observe` (and every control exchange to `learn`); a broken
 * relation is reported through the oracle, so it fails (MUST) or warns (SHOULD, INFO) its clause
 * in the file whose traffic broke it. See README.md in this folder for the rules and why each
 * clause.
 *
 * Decisions:
 * - A relation between two answers is judged only where nothing else could have changed the
 *   second: no write of any file started or was in flight between them (`unchangedSince`). A
 *   deleted object is the exception: nothing but a new creation brings it back, and a creation
 *   that hands out the same id again clears it.
 * - Lists are compared as sets of ids (string or integer alike), never by order or fields; shows
 *   by the fields both answers hold, less those a read may change (times, counters, views).
 * - The log grows while it is read and may record reads: no relation reads it.
 */
import { type Exchange, headerValue } from '../../core/exchange.ts';
import { parseLinkHeader } from '../../core/link.ts';
import { clip } from '../../core/redact.ts';
import type { Auth } from '../harness/client.ts';
import type { RunConfig } from '../harness/config.ts';
import type { Settings } from '../harness/control.ts';
import { PAGE_WALK_LIMIT, repeatedPage, sameItems } from '../harness/pages.ts';
import { type Observed, unchangedSince } from '../harness/traffic.ts';
import { holdsBetweenCounts, type ListAddress, listAddress, pageNumber } from '../oracle/lists.ts';

export type Report = (clause: string, ex: Exchange, expected: string, actual: string) => void;

/** The relations by name, each with the clause its findings fail or warn. */
export const RELATIONS = {
  /** RFC 8259 §8.1: "Implementations MUST NOT add a byte order mark (U+FEFF) to the beginning of a networked-transmitted JSON text." */
  'framing-bom': 'GEN-03',
  /** A JSON body labelled with another media type is, to HTTP (RFC 9110 §8.3), a body of that type. */
  'framing-media-type': 'GEN-03',
  /** One user, one set of permissions through the API, whichever method authenticates the request. */
  'basic-hmac': 'GEN-16',
  /** X-Page-Size sets the page size and nothing else: every size walks the same items. */
  'walks-agree': 'SIZE-03',
  /** A whole walk holds as many items as count.json says. */
  'walk-count': 'SIZE-10',
  /** No two pages of one walk hold the same items (pages.ts repeatedPage): a walk that returns a page again has looped. */
  'walk-loops': 'SIZE-10',
  /** A password deleted is no longer one "the user can access" (EP-03); other kinds by their §1 row. */
  'gone-after-delete': 'EP-03',
  /** A password /passwords.json lists is one "the user can access": its show, read in the same state, is not 404 (EP-03); other lists and kinds by their §1 row (INFO). */
  'listed-is-shown': 'EP-03',
  /** A record's fields are "not shown": where a list item and the show of the same object, read in one state, hold a field of one name with two values, INFO records it. */
  'list-show-fields': 'RES-17',
  /** "only IT or Admin users may call it": a reply of check_latest to a user of another role is a refusal (VER-06). */
  'roles-refused': 'VER-06',
  /** ... and a reply to an IT user (VER-07) or an Admin (EP-11) is not one. */
  'roles-served': 'VER-07',
} as const;
export type RelationName = keyof typeof RELATIONS;

/** §1's rows: the clause a deleted object of each kind that is still shown or listed breaks. */
const GONE_CLAUSE: Record<Kind, string> = {
  password: 'OPS-02',
  project: 'OPS-01',
  my_password: 'OPS-03',
  file: 'OPS-04',
  user: 'OPS-06',
  group: 'OPS-07',
};

type Kind = 'project' | 'password' | 'my_password' | 'file' | 'user' | 'group';
const KIND_OF_SEGMENT: Record<string, Kind> = {
  projects: 'project',
  passwords: 'password',
  my_passwords: 'my_password',
  files: 'file',
  users: 'user',
  groups: 'group',
};
const SHOW = /^\/(projects|passwords|my_passwords|files|users|groups)\/(\d+)\.json$/;
/** Fields a read may change: when it was read, how often, by whom. */
const VOLATILE_FIELD = /date|time|_on$|_at$|access|view|count|last|usage/i;
/** Fields a list item and a show may hold under one name with different meanings, and secrets. */
const UNCOMPARED_FIELD = /notes|snippet|password|custom_field|secret|key/i;
/** The path whose roles §4 names: "only IT or Admin users may call it". */
const CHECK_LATEST = '/version/check_latest.json';
const MAY_CHECK_LATEST = new Set(['admin', 'it']);
/** Answers that differ between any two requests by design. */
const API_ROOT = '/index.php/api/v6';
const UNREPEATABLE = /^\/(generate_password|passwords\/generate|log)(\/|\.json)/;

/** The kind of item a list holds, from its template; undefined for the log and unknown lists. */
export function itemKind(template: string): Kind | undefined {
  if (template.startsWith('/log')) return undefined;
  const segments = template
    .replace(/\.json$/, '')
    .replace(/\/search\/\{search\}$/, '')
    .split('/')
    .filter((s) => s !== '');
  let last = segments.pop();
  if (last === 'archived' || last === 'favorite') last = segments.pop();
  if (last?.startsWith('favorite_')) last = last.slice('favorite_'.length);
  return last === undefined ? undefined : KIND_OF_SEGMENT[last];
}

/** The ids of a list page's items, as strings; undefined when any item has none. */
export function idsOf(json: unknown): string[] | undefined {
  if (!Array.isArray(json)) return undefined;
  const out: string[] = [];
  for (const item of json) {
    const id = item !== null && typeof item === 'object' ? (item as { id?: unknown }).id : undefined;
    if (typeof id !== 'number' && typeof id !== 'string') return undefined;
    out.push(String(id));
  }
  return out;
}

/** Whether a Content-Type names JSON: application/json or any +json type (RFC 6839). */
export function isJsonMediaType(contentType: string): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.-]+\+json$/.test(type) || type === 'text/json';
}

/** What two answers to the same request disagree on, or undefined when they agree. */
export function disagreement(a: unknown, b: unknown): string | undefined {
  const aIds = idsOf(a);
  const bIds = idsOf(b);
  if (aIds && bIds) return itemsDiffer(aIds, bIds);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b)) return 'an array against an object';
    return a.length === b.length ? undefined : `${a.length} items against ${b.length}`;
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object')
    return Object.is(a, b) ? undefined : `${clip(JSON.stringify(a) ?? '', 60)} against ${clip(JSON.stringify(b) ?? '', 60)}`;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  for (const key of Object.keys(ra)) {
    if (!(key in rb) || VOLATILE_FIELD.test(key)) continue;
    const va = ra[key];
    const vb = rb[key];
    const scalar = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);
    if (scalar(va) && scalar(vb) && String(va) !== String(vb)) return `${key}: ${clip(JSON.stringify(va), 60)} against ${clip(JSON.stringify(vb), 60)}`;
  }
  return undefined;
}

/** Two lists of ids as multisets: which ids one holds more often than the other; undefined when alike. */
export function itemsDiffer(aIds: readonly string[], bIds: readonly string[]): string | undefined {
  const tally = new Map<string, number>();
  for (const id of aIds) tally.set(id, (tally.get(id) ?? 0) + 1);
  for (const id of bIds) tally.set(id, (tally.get(id) ?? 0) - 1);
  const onlyA = [...tally].filter(([, n]) => n > 0).map(([id]) => id);
  const onlyB = [...tally].filter(([, n]) => n < 0).map(([id]) => id);
  if (onlyA.length === 0 && onlyB.length === 0) return undefined;
  const parts = [];
  if (onlyA.length > 0) parts.push(`[${onlyA.slice(0, 5).join(', ')}] more often in the first`);
  if (onlyB.length > 0) parts.push(`[${onlyB.slice(0, 5).join(', ')}] more often in the second`);
  return `items ${parts.join(', ')}`;
}

interface Page {
  ids: string[];
  started: number;
  hasNext: boolean;
  /** Fewer items than the page size: the page ends its list whatever its relations say. */
  partial: boolean;
}

interface Deleted {
  at: number;
  name?: string;
}

/** A user the control protocol made: its Basic credentials, role and what may keep it from the API. */
interface Account {
  user: string;
  password: string;
  role: string;
  apiOnly: boolean;
  active: boolean;
  /** The key was issued today (not back-dated to test expiry). */
  hmacIssued: boolean;
}

export class Relations {
  /** Basic credentials by HMAC public key: the run's own, and users the control protocol made. */
  private readonly basicOf = new Map<string, { user: string; password: string }>();
  private readonly userOfId = new Map<string, { user: string; password: string }>();
  /** (public key, URL, page size) already compared: one look-up each. */
  private readonly compared = new Set<string>();
  /**
   * The run's plain Basic GET answers (user, URL, page size) read with no write in flight, all
   * since the same count of writes started (`started`): emptied when a write starts.
   */
  private basicSeen = { started: -1, answers: new Map<string, Exchange>() };
  /** Findings confirmed on a busy installation (heldStill), by relation, list, sizes and state. */
  private readonly confirmations = new Map<string, Promise<boolean>>();
  /** Pages by identity, list and page size. */
  private readonly pages = new Map<string, Map<number, Page>>();
  /** count.json's num_items by identity and list, with the write mark it was read at. */
  private readonly counts = new Map<string, { items: number; started: number }>();
  private readonly deleted = new Map<string, Deleted>();
  private readonly names = new Map<string, string>();
  /** The run's own objects as a list page and as their show held them, by identity, kind and id, with the write mark they were read at. */
  private readonly listedAt = new Map<string, { started: number; item: Record<string, unknown>; template: string; ex: Exchange }>();
  private readonly shownAt = new Map<string, { started: number; status: number; json: unknown; ex: Exchange }>();
  /** The users the control protocol made, by identity (basic:<user>, hmac:<public key>), and by id. */
  private readonly roleOf = new Map<string, Account>();
  private readonly accountOfId = new Map<string, Account>();
  /** The write mark of each identity's last 2XX read in a still state: the user could use the API then. */
  private readonly servedAt = new Map<string, number>();

  constructor(
    config: RunConfig,
    private readonly settings: () => Settings | undefined,
    private readonly clock: () => number = () => performance.now(),
  ) {
    if (config.hmac) this.basicOf.set(config.hmac.publicKey, { user: config.user, password: config.password });
  }

  /** Control exchanges: which HMAC keys belong to which user (for the Basic look-up). */
  learn(ex: Exchange): void {
    if (ex.request.method !== 'POST' || !ex.response || ex.response.status >= 300) return;
    const path = new URL(ex.request.url).pathname;
    const out = ex.json as { id?: unknown; public_key?: unknown } | undefined;
    if (typeof out?.public_key !== 'string') return;
    if (/\/__control\/users$/.test(path)) {
      const sent = safeJson(ex.request.body) as { username?: unknown; password?: unknown; role?: unknown; api_only?: unknown; active?: unknown } | undefined;
      if (typeof sent?.username !== 'string' || typeof sent.password !== 'string') return;
      const creds = { user: sent.username, password: sent.password };
      this.basicOf.set(out.public_key, creds);
      this.userOfId.set(String(out.id), creds);
      if (typeof sent.role === 'string') {
        const account: Account = { ...creds, role: sent.role, apiOnly: sent.api_only === true, active: sent.active !== false, hmacIssued: true };
        this.roleOf.set(`basic:${sent.username}`, account);
        this.roleOf.set(`hmac:${out.public_key}`, account);
        this.accountOfId.set(String(out.id), account);
      }
      return;
    }
    const keys = /\/__control\/users\/(\d+)\/api_keys$/.exec(path);
    const creds = keys ? this.userOfId.get(keys[1]!) : undefined;
    if (creds) this.basicOf.set(out.public_key, creds);
    const account = keys ? this.accountOfId.get(keys[1]!) : undefined;
    if (account) {
      // A key issued days ago may have expired; its answers are not judged by role.
      const issued = (safeJson(ex.request.body) as { issued_days_ago?: unknown } | undefined)?.issued_days_ago;
      this.roleOf.set(`hmac:${out.public_key}`, { ...account, hmacIssued: issued === undefined || issued === 0 });
    }
  }

  /** Every API exchange with a response, `path` below /index.php/api/v6 (no query). */
  async observe(o: Observed, path: string, report: Report): Promise<void> {
    const ex = o.exchange;
    const res = ex.response;
    if (!res) return;
    const method = ex.request.method.toUpperCase();
    this.framing(ex, report);
    if (method === 'HEAD') return;
    const status = res.status;
    const success = status >= 200 && status < 300;
    if (method === 'DELETE' && success) this.remember(path);
    if (method === 'POST' && success) this.created(ex, path);
    if (method === 'PUT' && success) this.renamed(ex, path);
    if (method === 'PUT' && success) this.activated(path);
    if (method !== 'GET') return;
    if (path === CHECK_LATEST) this.roles(o, report);
    else if (success && o.mark.inFlight === 0 && unchangedSince(o.mark)) this.servedAt.set(identity(o.auth), o.mark.started);
    if (status === 200) this.stillThere(o, path, report);
    const addr = listAddress(path);
    // The relations' own reads (quiet: heldStill's) confirm a walk; they never make one.
    if (addr && status === 200 && !o.quiet) await this.walk(o, addr, report);
    if (!o.quiet) this.agree(o, path, addr, report);
    if (o.auth.kind === 'basic' && !o.quiet) this.keepBasic(o);
    if (o.auth.kind === 'hmac' && !o.quiet) await this.basicAgrees(o, path, report);
  }

  /** framing-bom, framing-media-type: the bytes as received, and their label. */
  private framing(ex: Exchange, report: Report): void {
    const res = ex.response!;
    if (res.bom) report(RELATIONS['framing-bom'], ex, 'JSON without a byte order mark (RFC 8259 §8.1)', 'a body that starts with EF BB BF');
    const type = headerValue(res.headers, 'content-type');
    if (ex.json !== undefined && res.body.trim() !== '' && type !== undefined && !isJsonMediaType(type))
      report(RELATIONS['framing-media-type'], ex, 'a JSON body labelled with a JSON media type (application/json)', `Content-Type: ${type}`);
  }

  private remember(path: string): void {
    const m = SHOW.exec(path);
    if (!m) return;
    const key = `${KIND_OF_SEGMENT[m[1]!]}:${m[2]}`;
    const name = this.names.get(key);
    this.deleted.set(key, { at: this.clock(), ...(name !== undefined ? { name } : {}) });
  }

  /** A creation that hands out a deleted id again brings that id back; names are kept for shows. */
  private created(ex: Exchange, path: string): void {
    const kind = /^\/([a-z_]+)\.json$/.exec(path)?.[1];
    const k = kind ? KIND_OF_SEGMENT[kind] : undefined;
    const id = (ex.json as { id?: unknown } | undefined)?.id;
    if (!k || (typeof id !== 'number' && typeof id !== 'string')) return;
    const key = `${k}:${id}`;
    this.deleted.delete(key);
    const name = (safeJson(ex.request.body) as { name?: unknown; username?: unknown; file_name?: unknown } | undefined) ?? {};
    const given =
      typeof name.name === 'string'
        ? name.name
        : typeof name.username === 'string'
          ? name.username
          : typeof name.file_name === 'string'
            ? name.file_name
            : undefined;
    if (given !== undefined) this.names.set(key, given);
    else this.names.delete(key);
  }

  private renamed(ex: Exchange, path: string): void {
    const m = SHOW.exec(path);
    if (!m) return;
    const sent = safeJson(ex.request.body) as { name?: unknown } | undefined;
    if (typeof sent?.name === 'string') this.names.set(`${KIND_OF_SEGMENT[m[1]!]}:${m[2]}`, sent.name);
  }

  /** gone-after-delete: a show, or a list page, sent after a delete had been answered. */
  private stillThere(o: Observed, path: string, report: Report): void {
    if (this.deleted.size === 0) return;
    const ex = o.exchange;
    // Decision: without the send time, only what was sent well after the delete is judged.
    const sentAt = o.mark.at ?? this.clock() - ex.durationMs - 1000;
    const show = SHOW.exec(path);
    if (show) {
      const kind = KIND_OF_SEGMENT[show[1]!]!;
      const gone = this.deleted.get(`${kind}:${show[2]}`);
      const name = (ex.json as { name?: unknown } | undefined)?.name;
      // Decision: a show of the same id with another name is a new object under a reused id.
      if (gone && gone.at < sentAt && (gone.name === undefined || name === undefined || name === gone.name))
        report(GONE_CLAUSE[kind], ex, `404: ${kind} ${show[2]} was deleted before this request`, `status ${ex.response!.status} with the ${kind}`);
      return;
    }
    const addr = listAddress(path);
    const kind = addr?.kind === 'page' ? itemKind(addr.template) : undefined;
    if (!kind) return;
    const ids = idsOf(ex.json) ?? [];
    const still = ids.filter((id) => {
      const gone = this.deleted.get(`${kind}:${id}`);
      return gone !== undefined && gone.at < sentAt;
    });
    if (still.length > 0) {
      const clause = addr!.template === '/passwords.json' ? RELATIONS['gone-after-delete'] : addr!.template.includes('favorite') ? 'OPS-05' : GONE_CLAUSE[kind];
      report(clause, ex, `no ${kind} deleted before this request in ${addr!.template}`, `deleted ${kind}(s) ${still.slice(0, 5).join(', ')} listed`);
    }
  }

  private activated(path: string): void {
    const m = /^\/users\/(\d+)\/(activate|deactivate)\.json$/.exec(path);
    const account = m ? this.accountOfId.get(m[1]!) : undefined;
    if (account) account.active = m![2] === 'activate';
  }

  /**
   * roles-refused, roles-served: every reply to GET /version/check_latest.json by a user the
   * control protocol made with a role. Decision: the spec names no status for the refusal, so a
   * refusal is any 4XX; a refusal of an IT or Admin user is judged only as 403 or 404, and only
   * where nothing else may refuse them: the same user was served another GET by the same method
   * with no write between (nothing changed since), or the settings show the API on, no
   * maintenance, their method enabled and the API open to them, with the user active and a
   * fresh key that does not expire.
   */
  private roles(o: Observed, report: Report): void {
    const ex = o.exchange;
    const status = ex.response!.status;
    const auth = o.auth;
    if (auth.kind !== 'basic' && auth.kind !== 'hmac') return;
    if (auth.kind === 'hmac' && (auth.mutate || auth.timestamp !== undefined)) return;
    const account = this.roleOf.get(auth.kind === 'basic' ? `basic:${auth.user}` : `hmac:${auth.publicKey}`);
    if (!account || (auth.kind === 'basic' && auth.password !== account.password)) return;
    const settings = this.settings();
    if (settings && (settings.maintenance_mode || !settings.api_enabled)) return;
    const allowed = MAY_CHECK_LATEST.has(account.role);
    if (!allowed && status >= 200 && status < 300) {
      report(
        RELATIONS['roles-refused'],
        ex,
        `a refusal (4XX) of GET ${CHECK_LATEST} to the ${account.role} ${account.user}: only IT or Admin users may call it`,
        `status ${status}`,
      );
      return;
    }
    if (!allowed || (status !== 403 && status !== 404)) return;
    const servedJustBefore = o.mark.inFlight === 0 && unchangedSince(o.mark) && this.servedAt.get(identity(auth)) === o.mark.started;
    if (!servedJustBefore) {
      if (!settings) return;
      const methodOn = settings.auth_methods === 'basic+hmac' || settings.auth_methods === auth.kind;
      const open = settings.api_users === 'all' || account.apiOnly;
      const keyFresh = auth.kind === 'basic' || (account.hmacIssued && settings.hmac_key_expiry_days === null);
      if (!methodOn || !open || !account.active || !keyFresh) return;
    }
    report(
      account.role === 'admin' ? 'EP-11' : RELATIONS['roles-served'],
      ex,
      `200 OK for the ${account.role === 'it' ? 'IT' : 'Admin'} user ${account.user} over ${auth.kind === 'basic' ? 'HTTP Basic' : 'HMAC'}: IT and Admin users may call it`,
      `status ${status}`,
    );
  }

  /**
   * listed-is-shown, list-show-fields: an object the run made, as a list page and as its show
   * read by the same user in one state (no write started between them or was in flight).
   * Decision: "Fields of the project and password records as returned by list and show: not
   * shown", so a field held with two values is INFO (RES-17), for projects and passwords only,
   * on the scalar fields both hold, less those a read may change and those whose list form may
   * be a shortened copy (notes) or a secret. A listed object whose show answers 404 is a
   * disagreement about whether the user can access it: EP-03 for /passwords.json and its pages,
   * the kind's §1 row (INFO) for other lists; a 403 may be a condition of the object (a lock)
   * and is not judged.
   */
  private agree(o: Observed, path: string, addr: ListAddress | undefined, report: Report): void {
    const ex = o.exchange;
    const status = ex.response!.status;
    if (o.mark.inFlight !== 0 || !unchangedSince(o.mark)) return;
    const who = identity(o.auth);
    const show = SHOW.exec(path);
    if (show && (status === 200 || status === 404)) {
      const kind = KIND_OF_SEGMENT[show[1]!]!;
      const key = `${who}|${kind}:${show[2]}`;
      if (!this.names.has(`${kind}:${show[2]}`)) return;
      const shown = { started: o.mark.started, status, json: ex.json, ex };
      this.shownAt.set(key, shown);
      const listed = this.listedAt.get(key);
      if (listed && listed.started === shown.started) this.compare(kind, show[2]!, listed, shown, report);
      return;
    }
    if (status !== 200 || addr?.kind !== 'page' || addr.volatile || !Array.isArray(ex.json)) return;
    const kind = itemKind(addr.template);
    if (!kind) return;
    for (const item of ex.json) {
      const id = item !== null && typeof item === 'object' ? (item as { id?: unknown }).id : undefined;
      if ((typeof id !== 'number' && typeof id !== 'string') || !this.names.has(`${kind}:${id}`)) continue;
      const key = `${who}|${kind}:${id}`;
      const listed = { started: o.mark.started, item: item as Record<string, unknown>, template: addr.template, ex };
      this.listedAt.set(key, listed);
      const shown = this.shownAt.get(key);
      if (shown && shown.started === listed.started) this.compare(kind, String(id), listed, shown, report);
    }
  }

  private compare(
    kind: Kind,
    id: string,
    listed: { item: Record<string, unknown>; template: string; ex: Exchange },
    shown: { status: number; json: unknown; ex: Exchange },
    report: Report,
  ): void {
    // Reported with the show: its status or its fields are what the list contradicts.
    const later = shown.ex;
    if (shown.status === 404) {
      // An object the run deleted is gone-after-delete's finding, with the list that still holds it.
      if (this.deleted.has(`${kind}:${id}`)) return;
      const clause = listed.template === '/passwords.json' ? RELATIONS['listed-is-shown'] : GONE_CLAUSE[kind];
      report(
        clause,
        later,
        `the show of ${kind} ${id}, which ${listed.template} lists for the same user in the same state`,
        `status 404 (listed in ${clip(listed.ex.request.url, 200)})`,
      );
      return;
    }
    if (kind !== 'password' && kind !== 'project') return;
    const json = shown.json;
    if (json === null || typeof json !== 'object' || Array.isArray(json)) return;
    const rec = json as Record<string, unknown>;
    const scalar = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);
    for (const [field, value] of Object.entries(listed.item)) {
      if (!(field in rec) || VOLATILE_FIELD.test(field) || UNCOMPARED_FIELD.test(field)) continue;
      const other = rec[field];
      if (scalar(value) && scalar(other) && String(value) !== String(other)) {
        report(
          RELATIONS['list-show-fields'],
          later,
          `the ${kind} ${id} with one ${field} in ${listed.template} and in its show, read in one state`,
          `${field} ${clip(JSON.stringify(value), 60)} in the list, ${clip(JSON.stringify(other), 60)} in the show`,
        );
        return;
      }
    }
  }

  /** walks-agree, walk-count: whole walks of one list at different page sizes, in one state. */
  private async walk(o: Observed, addr: ListAddress, report: Report): Promise<void> {
    if (addr.volatile || o.mark.inFlight !== 0 || !unchangedSince(o.mark)) return;
    const ex = o.exchange;
    const who = identity(o.auth);
    const listKey = `${who}|${addr.base}`;
    const size = headerValue(ex.request.headers, 'x-page-size') ?? '';
    const per = /^\d{1,4}$/.test(size) ? Number(size) : undefined;
    if (addr.kind === 'count') {
      const n = (ex.json as { num_items?: unknown } | undefined)?.num_items;
      if (typeof n === 'number') this.counts.set(listKey, { items: n, started: o.mark.started });
      return;
    }
    const page = pageNumber(addr.page);
    const ids = idsOf(ex.json);
    if (page === undefined || ids === undefined || per === undefined || per < 5 || per > 1000 || new URL(ex.request.url).search !== '') return;
    const rels = parseLinkHeader(headerValue(ex.response!.headers, 'link')).entries.flatMap((e) => e.rels);
    const walks = this.pages.get(`${listKey}|${size}`) ?? new Map<number, Page>();
    this.pages.set(`${listKey}|${size}`, walks);
    walks.set(page, { ids, started: o.mark.started, hasNext: rels.includes('next'), partial: ids.length < per });
    const twin = repeatedPage(
      [...walks].filter(([, p]) => p.started === o.mark.started).map(([n, p]) => [n, p.ids] as const),
      page,
      ids,
    );
    if (
      twin !== undefined &&
      (await this.heldStill(
        o,
        addr.base,
        size,
        {
          read: async () => [await this.pageIds(o, addr.base, page, size), await this.pageIds(o, addr.base, twin, size)],
          holds: ([a, b]) => a !== undefined && b !== undefined && repeatedPage([[twin, b]], page, a) !== undefined,
          same: sameIdLists,
        },
        `walk-loops|${listKey}|${size}|${[page, twin].sort().join('|')}|${o.mark.started}`,
      ))
    )
      report(
        RELATIONS['walk-loops'],
        ex,
        `page ${page} of ${addr.base}.json at X-Page-Size ${size} holding other items than page ${twin}`,
        `the same ${ids.length} items`,
      );
    const mine = wholeWalk(walks, o.mark.started);
    if (!mine) return;
    const count = this.counts.get(listKey);
    if (count && count.started === o.mark.started && count.items !== mine.length) {
      // Busy installations: it stands only when a walk made between two equal counts shows it too.
      const again = await this.heldStill(
        o,
        addr.base,
        size,
        {
          read: async () => ({ c: await this.countOf(o, addr.base, size), walked: await this.rewalk(o, addr.base, per) }),
          holds: ({ c, walked }) => c !== undefined && walked !== undefined && walked.length !== c,
          same: (a, b) => a.c === b.c && sameIdLists([a.walked], [b.walked]),
        },
        `walk-count|${listKey}|${size}|${o.mark.started}`,
      );
      if (again)
        report(RELATIONS['walk-count'], ex, `${count.items} items over the pages (count.json)`, `${mine.length} items over the pages of X-Page-Size ${size}`);
    }
    for (const [key, other] of this.pages) {
      if (key === `${listKey}|${size}` || !key.startsWith(`${listKey}|`)) continue;
      const theirs = wholeWalk(other, o.mark.started);
      if (!theirs) continue;
      const otherSize = key.slice(listKey.length + 1);
      const diff = itemsDiffer(mine, theirs);
      const otherPer = Number(otherSize);
      if (
        diff !== undefined &&
        (await this.heldStill(
          o,
          addr.base,
          size,
          {
            read: async () => [await this.rewalk(o, addr.base, per), Number.isInteger(otherPer) ? await this.rewalk(o, addr.base, otherPer) : undefined],
            holds: ([a, b]) => a !== undefined && b !== undefined && itemsDiffer(a, b) !== undefined,
            same: sameIdLists,
          },
          `walks-agree|${listKey}|${[size, otherSize].sort().join('|')}|${o.mark.started}`,
        ))
      )
        report(RELATIONS['walks-agree'], ex, `the same items walking ${addr.base}.json at X-Page-Size ${size || 'none'} as at ${otherSize}`, diff);
      return;
    }
  }

  /**
   * Decision (busy installations, issues 25 and 35): a relation between reads of a list is
   * reported only when it holds between two equal counts and a second reading of the list shows
   * the same answers (`holdsBetweenCounts`, suites/oracle/lists.ts: the rule is stated there):
   * `again.read` makes the finding's reads anew, `holds` says whether they still break the
   * relation, `same` compares two readings. Asked only when a finding is about to be reported, so
   * a quiet server costs nothing. Without a list (a show), one reading anew alone decides.
   */
  private async heldStill<S>(
    o: Observed,
    base: string | undefined,
    size: string | undefined,
    again: { read: () => Promise<S>; holds: (reading: S) => boolean; same: (a: S, b: S) => boolean },
    once?: string,
  ): Promise<boolean> {
    // A walk is whole again at each later read of its pages: each finding is confirmed once.
    if (once !== undefined) {
      const known = this.confirmations.get(once);
      if (known !== undefined) return known;
      const verdict = this.heldStill(o, base, size, again);
      this.confirmations.set(once, verdict);
      return verdict;
    }
    if (base === undefined) return again.holds(await again.read());
    const held = await holdsBetweenCounts(() => this.countOf(o, base, size), {
      read: again.read,
      finding: (reading) => (again.holds(reading) ? true : undefined),
      same: again.same,
    });
    return held.finding === true;
  }

  /** count.json of a list, as the observed request's user, at its page size; undefined if not 200. */
  private async countOf(o: Observed, base: string, size: string | undefined): Promise<number | undefined> {
    const ex = await this.reread(o, `${base}/count.json`, size);
    const n = (ex?.json as { num_items?: unknown } | undefined)?.num_items;
    return ex?.response?.status === 200 && typeof n === 'number' ? n : undefined;
  }

  /** The ids of one page of a list, anew; undefined when it is not 200. */
  private async pageIds(o: Observed, base: string, page: number, size: string): Promise<string[] | undefined> {
    const ex = await this.reread(o, `${base}/page/${page}.json`, size || undefined);
    return ex?.response?.status === 200 ? idsOf(ex.json) : undefined;
  }

  /** The ids of a whole walk of a list at `per` a page, anew; undefined when a page is not 200, or the walk loops or never ends (walk-loops reports it). */
  private async rewalk(o: Observed, base: string, per: number): Promise<string[] | undefined> {
    const out: string[] = [];
    const seen = new Map<number, string[]>();
    for (let n = 1; n <= PAGE_WALK_LIMIT; n++) {
      const ex = await this.reread(o, `${base}/page/${n}.json`, String(per));
      const ids = ex?.response?.status === 200 ? idsOf(ex.json) : undefined;
      if (ids === undefined || repeatedPage(seen, n, ids) !== undefined) return undefined;
      seen.set(n, ids);
      out.push(...ids);
      const rels = parseLinkHeader(headerValue(ex!.response!.headers, 'link')).entries.flatMap((e) => e.rels);
      if (ids.length < per || !rels.includes('next')) return out;
    }
    return undefined;
  }

  /** A GET of `path` (below the API root) as the observed request's client and user, not judged again. */
  private async reread(o: Observed, path: string, size: string | undefined): Promise<Exchange | undefined> {
    const url = o.exchange.request.url;
    const root = url.slice(0, url.indexOf(API_ROOT) + API_ROOT.length);
    if (!url.includes(API_ROOT)) return undefined;
    return o.client.request({ method: 'GET', path, url: `${root}${path}`, ...(size ? { headers: { 'X-Page-Size': size } } : {}), quiet: true });
  }

  /** A plain Basic GET answered 200, 403 or 404 in one state: the look-up of a later HMAC GET of the same (basicAgrees). */
  private keepBasic(o: Observed): void {
    const ex = o.exchange;
    const auth = o.auth as Extract<Auth, { kind: 'basic' }>;
    if (![200, 403, 404].includes(ex.response!.status) || o.mark.inFlight !== 0 || !unchangedSince(o.mark)) return;
    if (headerValue(ex.request.headers, 'x-pmv6-probe') || new URL(ex.request.url).search !== '') return;
    if (this.basicSeen.started !== o.mark.started) this.basicSeen = { started: o.mark.started, answers: new Map() };
    // Bounded: the oldest answer kept goes first (a long walk between two writes).
    if (this.basicSeen.answers.size >= 256) this.basicSeen.answers.delete(this.basicSeen.answers.keys().next().value!);
    this.basicSeen.answers.set(`${auth.user}|${ex.request.url}|${headerValue(ex.request.headers, 'x-page-size') ?? ''}`, ex);
  }

  /** basic-hmac: the same GET, by the same user over HTTP Basic: read in the same state just before, else right after. */
  private async basicAgrees(o: Observed, path: string, report: Report): Promise<void> {
    const ex = o.exchange;
    const auth = o.auth as Extract<Auth, { kind: 'hmac' }>;
    const status = ex.response!.status;
    const settings = this.settings();
    // A run that signs in with HMAC only sends nothing over HTTP Basic (RunConfig.signIn).
    if (o.client.basicRefused !== undefined) return;
    if (auth.mutate || auth.timestamp !== undefined || ![200, 403, 404].includes(status) || UNREPEATABLE.test(path)) return;
    if (headerValue(ex.request.headers, 'x-pmv6-probe') || new URL(ex.request.url).search !== '') return;
    if (settings && (settings.auth_methods !== 'basic+hmac' || settings.maintenance_mode || !settings.api_enabled)) return;
    const creds = this.basicOf.get(auth.publicKey);
    if (!creds || !unchangedSince(o.mark)) return;
    const size = headerValue(ex.request.headers, 'x-page-size');
    const key = `${auth.publicKey}|${ex.request.url}|${size ?? ''}`;
    if (this.compared.has(key)) return;
    this.compared.add(key);
    // Decision (issue 26's request budget): the run's own Basic answer to the same GET by the same
    // user, read in the same state before this one, is the look-up; else one is read right after.
    const seen = this.basicSeen.answers.get(`${creds.user}|${ex.request.url}|${size ?? ''}`);
    const basic =
      seen && this.basicSeen.started === o.mark.started
        ? seen
        : await o.client.withAuth({ kind: 'basic', user: creds.user, password: creds.password }).request({
            method: 'GET',
            path,
            url: ex.request.url,
            ...(size !== undefined ? { headers: { 'X-Page-Size': size } } : {}),
            quiet: true,
          });
    if (!basic.response || !unchangedSince(o.mark) || ![200, 403, 404].includes(basic.response.status)) return;
    const differ = (h: Exchange, b: Exchange) => {
      const [hs, bs] = [h.response!.status, b.response!.status];
      return hs !== bs ? `status ${hs} over HMAC, ${bs} over Basic` : hs === 200 ? disagreement(h.json, b.json) : undefined;
    };
    const diff = differ(ex, basic);
    if (diff === undefined) return;
    // Busy installations: both read again, between two equal counts of the list they read.
    const addr = listAddress(path);
    const again = await this.heldStill(o, addr?.base, size, {
      read: async () => {
        const h = await o.client.request({
          method: 'GET',
          path,
          url: ex.request.url,
          ...(size !== undefined ? { headers: { 'X-Page-Size': size } } : {}),
          quiet: true,
        });
        const b = await o.client.withAuth({ kind: 'basic', user: creds.user, password: creds.password }).request({
          method: 'GET',
          path,
          url: ex.request.url,
          ...(size !== undefined ? { headers: { 'X-Page-Size': size } } : {}),
          quiet: true,
        });
        return [h, b] as const;
      },
      holds: ([h, b]) => h.response !== undefined && b.response !== undefined && differ(h, b) !== undefined,
      same: (x, y) => x.every((e, i) => sameAnswer(e, y[i]!)),
    });
    if (again && unchangedSince(o.mark))
      report(RELATIONS['basic-hmac'], ex, `the answer ${creds.user} gets over HTTP Basic to the same request`, `${diff} (HMAC first, Basic second)`);
  }
}

/** Whether two readings hold the same lists of ids, each as a multiset (`sameItems`), unread (undefined) alike. */
function sameIdLists(a: ReadonlyArray<string[] | undefined>, b: ReadonlyArray<string[] | undefined>): boolean {
  return a.length === b.length && a.every((x, i) => (x === undefined ? b[i] === undefined : b[i] !== undefined && sameItems(x, b[i]!)));
}

/** Whether two answers show the same: status, Link header, and the items' ids (a list) or the JSON (anything else). */
function sameAnswer(a: Exchange, b: Exchange): boolean {
  const shown = (e: Exchange) => [e.response?.status ?? e.error, headerValue(e.response?.headers, 'link') ?? null];
  if (JSON.stringify(shown(a)) !== JSON.stringify(shown(b))) return false;
  const [x, y] = [idsOf(a.json), idsOf(b.json)];
  return x !== undefined && y !== undefined ? sameItems(x, y) : JSON.stringify(a.json ?? null) === JSON.stringify(b.json ?? null);
}

/**
 * The items of pages 1..n read in one state, the last without rel="next" and with fewer items
 * than the page size, the others full; undefined until whole. Decision: a walk that ends on a
 * full page (or one whose relations end it early) is left to the pagination rules.
 */
function wholeWalk(pages: Map<number, Page>, started: number): string[] | undefined {
  const out: string[] = [];
  for (let n = 1; ; n++) {
    const p = pages.get(n);
    if (!p || p.started !== started) return undefined;
    out.push(...p.ids);
    if (!p.hasNext) return p.partial ? out : undefined;
    if (p.partial) return undefined;
  }
}

function identity(auth: Auth): string {
  switch (auth.kind) {
    case 'basic':
      return `basic:${auth.user}`;
    case 'hmac':
      return `hmac:${auth.publicKey}`;
    case 'raw':
      return `raw:${JSON.stringify(auth.headers)}`;
    case 'none':
      return 'none';
  }
}

function safeJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
