/**
 * The model of the installation the model-based test holds every answer to (README.md here):
 * the run's own passwords in two projects of its own, who may see and change them, the favorites
 * of the run's users, the generator's answers and the log entries each password must have.
 *
 * Only the run's own objects are modelled: an installation holds others, so a list is checked for
 * the presence or absence of the run's objects only, by a user who sees nothing but them.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { type Exchange, headerValue } from '../../core/exchange.ts';
import { clip, registerCredentials } from '../../core/redact.ts';
import { expectResponse, expectSchema, type ViolationError, violation } from '../harness/assert.ts';
import { isSuccess } from '../harness/checks.ts';
import type { ApiClient } from '../harness/client.ts';
import type { Role } from '../harness/control.ts';
import { UNLOCK_REASON } from '../harness/fixtures.ts';
import { together } from '../harness/in-order.ts';
import { exactId } from '../harness/ownership.ts';
import { type Count, repeatedPage } from '../harness/pages.ts';
import type { Session } from '../harness/session.ts';
import { onExchange } from '../harness/traffic.ts';
import { mentions } from '../log/log-reader.ts';
import { isJsonMediaType } from '../relations/relations.ts';
import type { Fil } from './files.ts';
import type { Mine } from './personal.ts';
import { issueKeys } from './users.ts';

/**
 * Who acts. `admin`: the run's Admin ("sees all resources"). `viewer`: a Normal user of the run
 * given read access to the run's two projects and to nothing else, so their lists hold the
 * run's passwords only. The others are users of each other role given no access: they must see
 * and change none of the run's passwords. `it`: an IT user, whose access to passwords neither the
 * spec nor the product facts settle; it only generates and asks for check_latest.
 */
export const ACTORS = ['admin', 'viewer', 'it', 'project manager', 'normal user', 'read only'] as const;
export type Actor = (typeof ACTORS)[number];
export const OUTSIDERS = ['project manager', 'normal user', 'read only'] as const satisfies readonly Role[];
export type Via = 'basic' | 'hmac';

export interface Pw {
  id: number;
  /** In every name the password has, so log entries and searches find it whatever it is called now. */
  marker: string;
  name: string;
  project: 'main' | 'other';
  deleted: boolean;
  archived: boolean;
  locked: boolean;
  /** Archived or locked at some point: the spec shows no transitions, so lists and shows of such a password by the viewer are not judged. */
  changedState: boolean;
  /** Successful writes (create, update, archive, unarchive, lock, unlock, move, delete). */
  writes: number;
  /** Successful shows, by anyone in this process (`countShows`): the harness reads back too. */
  readonly views: number;
  /** Successful favorite and unfavorite calls. */
  favoriteCalls: number;
  /** Successful calls on its files (files.ts: uploads, lists, shows, downloads, notes, deletions): a server may log each with the password. */
  fileCalls?: number;
  /** Log searches for the marker so far (a server that logs reads may log them too). */
  logReads: number;
  /**
   * Password searches for the marker so far, by anyone in this process (`countShows`; the
   * oracle sends some again over Basic), answered or not: a server that logs reads may log them with their text.
   */
  readonly searches: number;
}

/** A project of the sequence's own, made by the Admin with one password in it. */
export interface Prj {
  id: number;
  /** In every name the project has: the sequence's search finds its projects by the sequence's prefix. */
  marker: string;
  name: string;
  deleted: boolean;
  archived: boolean;
  /** Archived at some point: lists are not judged on it (transitions: not shown). */
  changedState: boolean;
  /** The password made in it, while it is the run's to delete. */
  password: number | undefined;
}

/** A user of the sequence's own, made by the Admin through POST users.json (a Normal user). */
export interface Usr {
  id: number;
  username: string;
  name: string;
  active: boolean;
  deleted: boolean;
  /** The user's own credentials over HTTP Basic (its HMAC keys when the run signs in with HMAC only). */
  client: ApiClient;
  /** The user's HMAC keys (issued through the control protocol, ./users.ts), when HMAC works. */
  hmac?: ApiClient;
  /** Converted to LDAP with a 2XX and not back (./users.ts): what such a user may do without an LDAP server is the product's choice. */
  ldap?: boolean;
}

/** The users of the file a group command adds and removes: users of every role but Admin. */
export const MEMBERS = ['it', 'project manager', 'normal user', 'read only', 'viewer'] as const;
export type Member = (typeof MEMBERS)[number];

export interface Model {
  passwords: Pw[];
  projects: Prj[];
  users: Usr[];
  /** The sequence's group (made by its first membership command) and its members; undefined: none yet. */
  group?: { id: number; members: Set<Member> };
  /** False once the target refused to make a group (POST groups.json: 404 or 405). */
  groupsOffered: boolean;
  /** Passwords each user made favorite (indices into passwords), by favKey. */
  favorites: Record<string, Set<number>>;
  /** Generator answers so far. */
  generated: string[];
  /** Whether the log search (product path) answers: undefined until known. */
  logSearch?: boolean;
  /** The sequence's files (files.ts). */
  files?: Fil[];
  /** The sequence's personal passwords (personal.ts). */
  personal?: Mine[];
  /** True once the target refused to make a personal password (the feature off, or not offered). */
  personalOff?: boolean;
}

/** The clients of one run. */
export interface Real {
  s: Session;
  clients: Record<Actor, Record<Via, ApiClient>>;
  projects: { main: number; other: number };
  /**
   * Shared by every sequence of the file: passwords whose creation was sent to the two projects
   * and not deleted with a 2XX since, by any sequence (what a count may hold at most).
   */
  pool: { live: number };
  /** Whether the Admin over HMAC is the run's Admin (its own keys) or another Admin made for HMAC. */
  sameAdmin: boolean;
  /** Whether the target makes groups, once known: shared by every sequence of the file. */
  groups: { offered?: boolean };
  /** The users a group command adds and removes. */
  people: Record<Member, { id: number; username: string }>;
  /** Unique per run: names and markers. */
  prefix: string;
  counter: { n: number };
}

/** Successful GET /passwords/<id>.json of this process, by id: every show a server may log. */
const shows = new Map<number, number>();
/** GET /passwords/search/<text>… of this process (pages and counts too), by text: every search a server may log. */
const searches = new Map<string, number>();

/** Counts the shows and password searches of every request this process sends (the model's, the fixtures', the oracle's); returns the function that stops it. */
export function countShows(): () => void {
  shows.clear();
  searches.clear();
  return onExchange(({ exchange }) => {
    const path = exchange.request.url.split('?')[0] ?? '';
    const text = exchange.request.method === 'GET' ? /\/passwords\/search\/([^/]+?)(?:\/page\/\d+|\/count)?\.json$/.exec(path)?.[1] : undefined;
    if (text !== undefined) searches.set(decodeURIComponent(text), (searches.get(decodeURIComponent(text)) ?? 0) + 1);
    const m = /\/passwords\/(\d+)\.json$/.exec(path);
    const status = exchange.response?.status;
    if (exchange.request.method === 'GET' && m && status !== undefined && status >= 200 && status < 300)
      shows.set(Number(m[1]), (shows.get(Number(m[1])) ?? 0) + 1);
  });
}

/** Each violation's expected text starts with its clause, which survives the replay's rethrow. */
export function fail(clause: string, ex: Exchange | undefined, expected: string, actual: string): never {
  violation(ex, `(${clause}) ${expected}`, actual, [clause]);
}

/**
 * GEN-03, on every answer a command judges: the bytes as received (no byte order mark: RFC 8259
 * §8.1, "Implementations MUST NOT add a byte order mark") and a JSON body, error bodies included,
 * not labelled with another media type (the relations' rule, suites/relations).
 */
export function framed(ex: Exchange | undefined): void {
  const res = ex?.response;
  if (!res || res.body === '') return;
  if (res.bom) fail('GEN-03', ex, 'a JSON body as sent, without a byte order mark (RFC 8259 §8.1)', 'the bytes EF BB BF before the JSON');
  const type = headerValue(res.headers, 'content-type');
  if (ex!.json !== undefined && type !== undefined && !isJsonMediaType(type))
    fail('GEN-03', ex, `a JSON media type on the JSON body of status ${res.status}`, `Content-Type: ${clip(type, 100)}`);
}

export function clauseOf(e: ViolationError): string | undefined {
  return /^\(([A-Z]+-\d+)\)/.exec(e.expected)?.[1];
}

export const UNLOCK = { 'X-Unlock-Reason': UNLOCK_REASON };
export const PAGE = { 'X-Page-Size': '1000' };

/**
 * State a command file keeps beside the shared Model (or a Pw), made on first use: the files of
 * issue 35 (users.ts, groups.ts, ...) keep theirs so, and the shared types stay as they were.
 */
export function beside<K extends object, V>(make: () => V): (key: K) => V {
  const kept = new WeakMap<K, V>();
  return (key) => {
    let v = kept.get(key);
    if (v === undefined) kept.set(key, (v = make()));
    return v;
  };
}

export function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}

/** The password a command points at: `back` counts from the newest, so sequences stay on a few passwords. */
export function pick(m: Model, back: number, live = true): Pw | undefined {
  const list = live ? m.passwords.filter((p) => !p.deleted) : m.passwords;
  return list.length === 0 ? undefined : list[list.length - 1 - (back % list.length)];
}

export function listed(ex: Exchange, clause: string, what: string): Set<number> {
  expectResponse(ex, what);
  framed(ex);
  if (ex.response.status !== 200 || !Array.isArray(ex.json)) fail(clause, ex, `200 OK and a JSON array (${what})`, `status ${ex.response.status}`);
  // Decision: an id is matched by its digits, whether a list gives it as a number or a string.
  return new Set(
    (ex.json as Array<{ id?: unknown }>)
      .map((i) => (typeof i?.id === 'string' && /^\d+$/.test(i.id) ? Number(i.id) : i?.id))
      .filter((id): id is number => typeof id === 'number'),
  );
}

/** The ids of every page of a list read at 1000 a page (the viewer's lists hold the run's objects only). */
export async function allIds(client: ApiClient, base: string, clause: string, what: string): Promise<{ ex: Exchange; ids: Set<number> }> {
  const ex = await client.get(`${base}.json`, { headers: PAGE });
  const ids = listed(ex, clause, what);
  const pages = new Map<number, string[]>([[1, [...ids].map(String)]]);
  for (let page = 2; ids.size >= 1000 * (page - 1) && page <= 20; page++) {
    const pex = await client.get(`${base}/page/${page}.json`, { headers: PAGE });
    const got = [...listed(pex, clause, what)].map(String);
    const twin = repeatedPage(pages, page, got);
    if (twin !== undefined) fail(clause, pex, `page ${page} of ${base}.json holding other items than page ${twin} (${what})`, 'the same items: the walk loops');
    pages.set(page, got);
    for (const id of got) ids.add(Number(id));
  }
  return { ex, ids };
}

/** Favorites are the user's own: the Admin over HMAC may be another Admin than over Basic. */
export const favKey = (r: Real, actor: 'admin' | 'viewer', via: Via) => (actor === 'admin' && !r.sameAdmin ? `admin-${via}` : actor);
export const favSet = (m: Model, key: string) => (m.favorites[key] ??= new Set());

export const label = (p: Pw) => `password ${p.id} (${p.marker})`;

export abstract class Step implements fc.AsyncCommand<Model, Real, false> {
  abstract check(m: Readonly<Model>): boolean;
  abstract run(m: Model, r: Real): Promise<void>;
  abstract toString(): string;
}

export class Create extends Step {
  constructor(
    readonly via: Via,
    readonly project: 'main' | 'other',
  ) {
    super();
  }
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const marker = `${r.prefix}p${++r.counter.n}z`;
    const name = `${r.s.fixtures.name('model')}-${marker}-v0`;
    r.pool.live++;
    const ex = await r.clients.admin[this.via].post('/passwords.json', { name, project_id: r.projects[this.project], password: `${marker}-secret` });
    if (ex.response?.status !== 201) return;
    const id = (expectSchema(ex, 'created') as { id: number }).id;
    // The fixtures read it back (a show as the creator) before it is the run's to write to.
    if (!(await r.s.fixtures.track('password', id, name, { creation: ex, reader: r.clients.admin[this.via] }))) return;
    const p: Pw = {
      id,
      marker,
      name,
      project: this.project,
      deleted: false,
      archived: false,
      locked: false,
      changedState: false,
      writes: 1,
      get views() {
        return shows.get(id) ?? 0;
      },
      favoriteCalls: 0,
      logReads: 0,
      get searches() {
        return searches.get(marker) ?? 0;
      },
    };
    m.passwords.push(p);
    // The creation read back at once, as a client does: the answer holds what was sent (EP-07).
    // And through the list and its count, by the viewer who may read it: three rows of §4's table
    // (EP-03, SIZE-10, MUST). The reads side by side (none writes), judged in this order.
    await together([
      r.clients.admin[this.via].get(`/passwords/${id}.json`).then((shown) => {
        expectResponse(shown, `an answer to GET /passwords/${id}.json`);
        if (shown.response.status !== 200)
          fail('EP-07', shown, `200 OK and ${label(p)}, created with 201 just before, for the Admin over ${this.via}`, `status ${shown.response.status}`);
        if (!stringsIn(shown.json).includes(name))
          fail('EP-07', shown, `the name ${name} sent at creation in the show body`, clip(JSON.stringify(shown.json), 300) ?? 'no body');
      }),
      judgeList(m, r, 'viewer', this.via, true),
    ]);
  }
  toString = () => `create(${this.via}, ${this.project})`;
}

/** A write by the Admin: changes the model only when it answers 2XX (the product's paths; a refusal proves nothing). */
export class Write extends Step {
  constructor(
    readonly kind: 'update' | 'archive' | 'unarchive' | 'lock' | 'unlock' | 'move' | 'delete',
    readonly via: Via,
    readonly back: number,
  ) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    const p = pick(m as Model, this.back);
    if (!p) return false;
    if (this.kind === 'archive') return !p.archived;
    if (this.kind === 'unarchive') return p.archived;
    if (this.kind === 'lock') return !p.locked;
    if (this.kind === 'unlock') return p.locked;
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    const p = pick(m, this.back)!;
    const c = r.clients.admin[this.via];
    const to = p.project === 'main' ? 'other' : 'main';
    const name = `${r.s.fixtures.name('model')}-${p.marker}-v${p.writes}`;
    const ex =
      this.kind === 'delete'
        ? await c.delete(`/passwords/${p.id}.json`, { headers: UNLOCK })
        : this.kind === 'update'
          ? await c.put(`/passwords/${p.id}.json`, { name }, { headers: UNLOCK })
          : this.kind === 'move'
            ? await c.put(`/passwords/${p.id}/move.json`, { project_id: r.projects[to] }, { headers: UNLOCK })
            : await c.put(`/passwords/${p.id}/${this.kind}.json`, undefined, { headers: UNLOCK });
    if (!isSuccess(ex)) return;
    p.writes++;
    if (this.kind === 'delete') {
      p.deleted = true;
      r.pool.live--;
      r.s.fixtures.forget('password', p.id);
      for (const set of Object.values(m.favorites)) set.delete(m.passwords.indexOf(p));
      // Read back, as a client does: neither the show nor the viewer's list or search has it any
      // more (side by side: none writes; judged in this order).
      await together([judgeShow(r, 'admin', this.via, p), judgeList(m, r, 'viewer', this.via, false), new Search('viewer', this.via, 0).find(r, p)]);
    } else if (this.kind === 'update') {
      p.name = name;
      // Read back, as a client does: the show holds the new name.
      await judgeShow(r, 'admin', this.via, p);
    } else if (this.kind === 'move') p.project = to;
    else if (this.kind === 'archive' || this.kind === 'unarchive') {
      p.archived = this.kind === 'archive';
      p.changedState = true;
    } else {
      p.locked = this.kind === 'lock';
      p.changedState = true;
    }
  }
  toString = () => `${this.kind}(${this.via}, -${this.back})`;
}

/**
 * GET /passwords/<id>.json. Admin: 200 OK with the password's current name while it exists
 * (EP-07: "all data of the password"; the value is looked for anywhere in the body, the fields
 * being "not shown"), an error once deleted (OPS-12, SHOULD: the deletion is §1's, its path the product's). Viewer: the same, for passwords whose
 * state never changed. Outsiders: never a 2XX (GEN-09).
 */
export class Show extends Step {
  constructor(
    readonly actor: 'admin' | 'viewer' | (typeof OUTSIDERS)[number],
    readonly via: Via,
    readonly back: number,
  ) {
    super();
  }
  check = (m: Readonly<Model>) => m.passwords.length > 0;
  /** A user given no access asks over both methods: a check one of them skips is a path of its own. */
  private get outsider(): boolean {
    return (OUTSIDERS as readonly string[]).includes(this.actor);
  }
  async run(m: Model, r: Real): Promise<void> {
    const p = pick(m, this.back, false)!;
    await together((this.outsider ? (['basic', 'hmac'] as const) : [this.via]).map((v) => judgeShow(r, this.actor, v, p)));
  }
  toString = () => `show(${this.actor}, ${this.outsider ? 'basic and hmac' : this.via}, -${this.back})`;
}

export async function judgeShow(r: Real, actor: Show['actor'], via: Via, p: Pw): Promise<void> {
  {
    const ex = await r.clients[actor][via].get(`/passwords/${p.id}.json`, p.locked ? { headers: UNLOCK } : {});
    expectResponse(ex, `an answer to GET /passwords/${p.id}.json`);
    framed(ex);
    const ok = isSuccess(ex);
    const who = `the ${actor} over ${via}`;
    if ((OUTSIDERS as readonly string[]).includes(actor)) {
      if (ok) fail('GEN-09', ex, `a refusal of ${label(p)} to ${who}, who was given no access to it`, `status ${ex.response.status}`);
      return;
    }
    if (p.deleted) {
      // The deletion is §1's ("Passwords | ... delete"), its path the product's: SHOULD (OPS-12).
      if (ok) fail('OPS-12', ex, `an error for ${label(p)}, deleted with a 2XX earlier in the sequence, shown to ${who}`, `status ${ex.response.status}`);
      return;
    }
    if (actor === 'viewer' && p.changedState) return;
    if (ex.response.status !== 200) fail('EP-07', ex, `200 OK and ${label(p)} for ${who}`, `status ${ex.response.status}`);
    if (!p.locked && !stringsIn(ex.json).includes(p.name)) {
      fail(
        'EP-07',
        ex,
        `the password's current name ${p.name} (its last update answered 2XX) in the show body for ${who}`,
        clip(JSON.stringify(ex.json), 300) ?? 'no body',
      );
    }
  }
}

/**
 * The viewer's GET /passwords.json: every run password the viewer can access (EP-03), none that
 * is deleted; its count.json agrees (SIZE-10). An outsider's: none of the run's passwords (GEN-09).
 */
export class List extends Step {
  constructor(
    readonly actor: 'viewer' | (typeof OUTSIDERS)[number],
    readonly via: Via,
    readonly count: boolean,
  ) {
    super();
  }
  check = () => true;
  run(m: Model, r: Real): Promise<void> {
    return judgeList(m, r, this.actor, this.via, this.count);
  }
  toString = () => `list(${this.actor}, ${this.via}${this.count ? ', count' : ''})`;
}

async function judgeList(m: Model, r: Real, actor: List['actor'], via: Via, count: boolean): Promise<void> {
  {
    const c = r.clients[actor][via];
    const who = `the ${actor} over ${via}`;
    // The count beside the list (reads), judged after it.
    const [{ ex, ids }, counted] = await together([
      allIds(c, '/passwords', actor === 'viewer' ? 'EP-03' : 'GEN-09', `GET /passwords.json for ${who}`),
      count && actor === 'viewer' ? c.get('/passwords/count.json', { headers: PAGE }) : undefined,
    ]);
    if (actor !== 'viewer') {
      const leaked = m.passwords.filter((p) => ids.has(p.id));
      if (leaked.length > 0)
        fail('GEN-09', ex, `none of the run's passwords listed for ${who}, who was given no access to them`, `${leaked.map(label).join(', ')} listed`);
      return;
    }
    const gone = m.passwords.filter((p) => p.deleted && ids.has(p.id));
    if (gone.length > 0)
      fail('EP-03', ex, `no deleted password in GET /passwords.json for ${who}`, `${gone.map(label).join(', ')} listed after a DELETE answered 2XX`);
    const must = m.passwords.filter((p) => !p.deleted && !p.changedState);
    const missing = must.filter((p) => !ids.has(p.id));
    if (missing.length > 0)
      fail('EP-03', ex, `every password of the viewer's projects in GET /passwords.json for ${who}`, `${missing.map(label).join(', ')} missing`);
    if (!counted) return;
    const cex = counted;
    expectResponse(cex, 'an answer to GET /passwords/count.json');
    if (cex.response.status !== 200) fail('SIZE-10', cex, `200 OK and a count object for ${who}`, `status ${cex.response.status}`);
    const n = (expectSchema(cex, 'count') as Count).num_items;
    // The other sequences' passwords in the same projects count too: at most every one not deleted.
    const most = r.pool.live;
    if (n < must.length || n > most) {
      fail(
        'SIZE-10',
        cex,
        `num_items between ${must.length} (this sequence's passwords the viewer can access, as the list holds them) and ${most} (every password the file created in the viewer's projects and did not delete)`,
        `num_items ${n}`,
      );
    }
  }
}

/** A write by a user given no access to the password: never a 2XX (GEN-09). */
export class Intrude extends Step {
  constructor(
    readonly actor: (typeof OUTSIDERS)[number],
    readonly via: Via,
    readonly kind: 'update' | 'delete' | 'archive' | 'lock',
    readonly back: number,
  ) {
    super();
  }
  check = (m: Readonly<Model>) => pick(m as Model, this.back) !== undefined;
  async run(m: Model, r: Real): Promise<void> {
    const p = pick(m, this.back)!;
    const c = r.clients[this.actor][this.via];
    const ex =
      this.kind === 'delete'
        ? await c.delete(`/passwords/${p.id}.json`, { headers: UNLOCK })
        : this.kind === 'update'
          ? await c.put(`/passwords/${p.id}.json`, { name: `${p.name}-intruded` }, { headers: UNLOCK })
          : await c.put(`/passwords/${p.id}/${this.kind}.json`, undefined, { headers: UNLOCK });
    framed(ex);
    if (isSuccess(ex))
      fail(
        'GEN-09',
        ex,
        `a refusal of ${this.kind} of ${label(p)} by the ${this.actor} over ${this.via}, who was given no access to it`,
        `status ${ex.response?.status}`,
      );
  }
  toString = () => `intrude(${this.actor}, ${this.via}, ${this.kind}, -${this.back})`;
}

/**
 * GET passwords/search/<marker>.json (product facts §6: a passwords list), at 1000 a page. The
 * viewer finds the password by the marker in every name it has while it exists and its state
 * never changed, and not once deleted (OPS-02, the passwords row of §1); a user given no access
 * finds none of the run's passwords (GEN-09). Decision: the search text is the marker alone (no
 * operators), and only the password it names is judged.
 */
export class Search extends Step {
  constructor(
    readonly actor: 'viewer' | (typeof OUTSIDERS)[number],
    readonly via: Via,
    readonly back: number,
  ) {
    super();
  }
  check = (m: Readonly<Model>) => m.passwords.length > 0;
  run(m: Model, r: Real): Promise<void> {
    return this.find(r, pick(m, this.back, false)!);
  }
  async find(r: Real, p: Pw): Promise<void> {
    const who = `the ${this.actor} over ${this.via}`;
    const ex = await r.clients[this.actor][this.via].get(`/passwords/search/${p.marker}.json`, { headers: PAGE });
    const outsider = this.actor !== 'viewer';
    // A search the server does not offer (404/405 with no list) says nothing here.
    if (!outsider && (ex.response?.status === 404 || ex.response?.status === 405) && !Array.isArray(ex.json)) return;
    if (outsider && !isSuccess(ex)) return framed(ex);
    const ids = listed(ex, outsider ? 'GEN-09' : 'OPS-02', `GET /passwords/search/${p.marker}.json for ${who}`);
    if (outsider) {
      if (ids.has(p.id)) fail('GEN-09', ex, `none of the run's passwords found by ${who}, who was given no access to them`, `${label(p)} found`);
      return;
    }
    if (p.deleted && ids.has(p.id)) fail('OPS-02', ex, `${label(p)}, deleted with a 2XX earlier in the sequence, not found by ${who}`, 'found');
    if (!p.deleted && !p.changedState && !ids.has(p.id))
      fail('OPS-02', ex, `${label(p)} found by ${who} searching for ${p.marker}, in its every name`, 'not found');
  }
  toString = () => `search(${this.actor}, ${this.via}, -${this.back})`;
}

/** POST / DELETE favorite_passwords/<id>.json (product facts §6); the model follows a 2XX. */
export class Favorite extends Step {
  constructor(
    readonly actor: 'admin' | 'viewer',
    readonly via: Via,
    readonly on: boolean,
    readonly back: number,
  ) {
    super();
  }
  check = (m: Readonly<Model>) => pick(m as Model, this.back) !== undefined;
  async run(m: Model, r: Real): Promise<void> {
    const p = pick(m, this.back)!;
    const set = favSet(m, favKey(r, this.actor, this.via));
    const i = m.passwords.indexOf(p);
    // Only calls that change something: the product logs a favorite call only when it does.
    if (set.has(i) === this.on) return;
    const c = r.clients[this.actor][this.via];
    const ex = this.on ? await c.post(`/favorite_passwords/${p.id}.json`) : await c.delete(`/favorite_passwords/${p.id}.json`);
    if (!isSuccess(ex)) return;
    p.favoriteCalls++;
    if (this.on) set.add(i);
    else set.delete(i);
    // Read back, as a client does; and a favorite just made is not another user's (OPS-11: "of the
    // user"). Side by side (none writes), judged in this order.
    await together([judgeFavorites(m, r, this.actor, this.via), this.on && judgeFavorites(m, r, this.actor === 'admin' ? 'viewer' : 'admin', this.via)]);
  }
  toString = () => `${this.on ? 'favorite' : 'unfavorite'}(${this.actor}, ${this.via}, -${this.back})`;
}

/**
 * GET favorite_passwords.json: the actor's favorites among the run's passwords, and none other of
 * them, another user's included (OPS-11, SHOULD: §1's favorites row at the product's path).
 */
export class Favorites extends Step {
  constructor(
    readonly actor: 'admin' | 'viewer',
    readonly via: Via,
  ) {
    super();
  }
  check = (m: Readonly<Model>) => m.passwords.length > 0;
  run(m: Model, r: Real): Promise<void> {
    return judgeFavorites(m, r, this.actor, this.via);
  }
  toString = () => `favorites(${this.actor}, ${this.via})`;
}

async function judgeFavorites(m: Model, r: Real, actor: 'admin' | 'viewer', via: Via): Promise<void> {
  {
    const c = r.clients[actor][via];
    const first = await c.get('/favorite_passwords.json', { headers: PAGE });
    framed(first);
    if (first.response?.status === 404 || first.response?.status === 405) return;
    const who = `the ${actor} over ${via}`;
    const { ex, ids } = await allIds(c, '/favorite_passwords', 'OPS-11', `GET /favorite_passwords.json for ${who}`);
    const favs = favSet(m, favKey(r, actor, via));
    const late = m.passwords.filter((p, i) => favs.has(i) && !p.deleted && !p.changedState && !ids.has(p.id));
    if (late.length > 0)
      fail('OPS-11', ex, `${late.map(label).join(', ')} in the favorites of ${who}: made favorite with a 2XX earlier in the sequence`, 'missing');
    const stale = m.passwords.filter((p, i) => !favs.has(i) && ids.has(p.id));
    if (stale.length > 0)
      fail(
        'OPS-11',
        ex,
        `no password in the favorites of ${who} that was made not favorite, or deleted, or never made favorite`,
        `${stale.map(label).join(', ')} listed`,
      );
  }
}

/** GET /generate_password.json: "a strong random password", so never the same answer twice in a sequence (OPS-16). */
export class Generate extends Step {
  constructor(
    readonly actor: Actor,
    readonly via: Via,
  ) {
    super();
  }
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    // Two calls in a row, as a client that wants two passwords makes them.
    for (let call = 0; call < 2; call++) {
      const ex = await r.clients[this.actor][this.via].get('/generate_password.json');
      framed(ex);
      if (!isSuccess(ex) || ex.json === undefined) return;
      const body = JSON.stringify(ex.json);
      if (m.generated.includes(body)) {
        fail(
          'OPS-16',
          ex,
          `a new random password from the generator (${m.generated.length} answers earlier in the sequence)`,
          'the same answer as an earlier call',
        );
      }
      m.generated.push(body);
    }
  }
  toString = () => `generate(${this.actor}, ${this.via})`;
}

/** GET /version/check_latest.json: "only IT or Admin users may call it" (EP-11). */
export class CheckLatest extends Step {
  constructor(
    readonly actor: 'admin' | 'viewer' | (typeof OUTSIDERS)[number],
    readonly via: Via,
  ) {
    super();
  }
  check = () => true;
  async run(_m: Model, r: Real): Promise<void> {
    const ex = await r.clients[this.actor][this.via].get('/version/check_latest.json');
    expectResponse(ex, 'an answer to GET /version/check_latest.json');
    framed(ex);
    const status = ex.response.status;
    if (this.actor === 'admin' && status !== 200) fail('EP-11', ex, `200 OK for the Admin over ${this.via}`, `status ${status}`);
    if (this.actor !== 'admin' && isSuccess(ex))
      fail('EP-11', ex, `a refusal to the ${this.actor} over ${this.via}: only IT or Admin users may call it`, `status ${status}`);
  }
  toString = () => `checkLatest(${this.actor}, ${this.via})`;
}

/**
 * The log entries that name a password (GET log/search/<marker>.json, the product's path, read by
 * the Admin). Every successful write is an action, so at least that many (LOG-01). Decision:
 * entries beyond the writes can only be shows, favorite calls, password searches and the log searches themselves
 * (what a server may log besides), so more than all of these is an action logged twice; and once
 * more entries than writes, favorite calls and searches show that the server logs shows, every
 * show must be there ("Every action caused by an API request is written to the action log").
 */
export class LogCheck extends Step {
  constructor(readonly back: number) {
    super();
  }
  check = (m: Readonly<Model>) => m.passwords.length > 0 && m.logSearch !== false;
  run(m: Model, r: Real): Promise<void> {
    return judgeLog(m, r, pick(m, this.back, false)!);
  }
  toString = () => `logCheck(-${this.back})`;
}

/** The log entries of one password held to what the sequence did to it (LogCheck). */
export async function judgeLog(m: Model, r: Real, p: Pw): Promise<void> {
  if (m.logSearch === false) return;
  {
    const ex = await r.clients.admin.basic.get(`/log/search/${p.marker}.json`, { headers: PAGE });
    const status = ex.response?.status;
    if (status === 404 || status === 405) {
      m.logSearch = false;
      return;
    }
    if (status !== 200 || !Array.isArray(ex.json)) return;
    const found = (ex.json as unknown[]).filter((entry) => mentions(entry, p.marker, { kind: 'password', id: p.id }));
    const e = found.length;
    p.logReads++;
    // A server whose search finds none of a password's entries (another log shape) is not judged.
    if (e === 0) return;
    m.logSearch = true;
    const besides = p.favoriteCalls + p.logReads - 1 + p.searches + (p.fileCalls ?? 0);
    const counts = `${p.writes} writes, ${p.views} shows, ${p.favoriteCalls} favorite calls, ${p.searches} password searches, ${p.fileCalls ?? 0} calls on its files, ${p.logReads - 1} earlier log searches`;
    if (e < p.writes)
      fail(
        'LOG-01',
        ex,
        `at least ${p.writes} log entries naming ${label(p)}: one for each write that answered 2XX (${counts})`,
        `${e} entries: ${clip(JSON.stringify(found), 600)}`,
      );
    if (e > p.writes + p.views + besides)
      fail(
        'LOG-01',
        ex,
        `at most ${p.writes + p.views + besides} log entries naming ${label(p)}: one for each action (${counts})`,
        `${e} entries: ${clip(JSON.stringify(found), 600)}`,
      );
    // Decision: not for a password ever locked or archived: a show of a locked one without a
    // reason gives basic data only (product facts §3), which a server may not log as a view.
    if (!p.changedState && e > p.writes + besides && e < p.writes + p.views) {
      fail(
        'LOG-01',
        ex,
        `all ${p.views} shows of ${label(p)} in the log, since the server logs shows (${counts})`,
        `${e} entries: ${clip(JSON.stringify(found), 600)}`,
      );
    }
  }
}

/** The id of a 201's object, as a number (an id sent as a string of digits too). */
export function createdId(ex: Exchange): number | undefined {
  const id = exactId(ex);
  return id === undefined ? undefined : Number(id);
}

/** The ids of every object in a body but the body itself, as text: a record names its members by reference. */
export function nestedIds(value: unknown, top = true): Set<string> {
  const out = new Set<string>();
  const walk = (v: unknown, root: boolean) => {
    if (Array.isArray(v)) for (const x of v) walk(x, false);
    else if (v !== null && typeof v === 'object') {
      const id = (v as { id?: unknown }).id;
      if (!root && (typeof id === 'number' || (typeof id === 'string' && /^\d+$/.test(id)))) out.add(String(id));
      for (const x of Object.values(v)) walk(x, false);
    }
  };
  walk(value, top);
  return out;
}

/**
 * Decision (fields of a group: not shown): a group's show lists a user when the body holds the
 * user's username anywhere, or an object other than the group itself with the user's id (a
 * reference by id only). The show's other references (created_by, updated_by) name the Admin,
 * never one of the members.
 */
function namesUser(body: unknown, user: { id: number; username: string }): boolean {
  return stringsIn(body).includes(user.username) || nestedIds(body).has(String(user.id));
}

/**
 * PUT groups/<id>/add_user/<uid>.json and delete_user (product facts §6) by the Admin, on the
 * file's group and the file's users; the model follows a 2XX, read back through the group's show.
 */
export class Membership extends Step {
  /** The user the command acted on, once run. */
  private who: Member | undefined;
  constructor(
    readonly on: boolean,
    readonly back: number,
    readonly via: Via,
  ) {
    super();
  }
  /** Adds one of the users not in the group, removes one of those in it: `back` counts among them. */
  private pickWho(m: Readonly<Model>): Member | undefined {
    const among = MEMBERS.filter((w) => (m.group?.members.has(w) ?? false) !== this.on);
    return among.length === 0 ? undefined : among[among.length - 1 - (this.back % among.length)];
  }
  check = (m: Readonly<Model>) => m.groupsOffered && this.pickWho(m) !== undefined;
  async run(m: Model, r: Real): Promise<void> {
    const who = this.pickWho(m)!;
    this.who = who;
    const g = m.group ?? (await makeGroup(m, r));
    if (!g) return;
    const ex = await r.clients.admin[this.via].put(`/groups/${g.id}/${this.on ? 'add_user' : 'delete_user'}/${r.people[who].id}.json`);
    framed(ex);
    if (!isSuccess(ex)) return;
    if (this.on) g.members.add(who);
    else g.members.delete(who);
    await judgeGroup(r, this.via, g);
  }
  toString = () => `${this.on ? 'addToGroup' : 'removeFromGroup'}(${this.who ?? `-${this.back}`}, ${this.via})`;
}

/**
 * The sequence's group (POST groups.json, the product's path), empty. Decision: one group per
 * sequence, so sequences side by side (--concurrency) never change each other's members.
 */
async function makeGroup(m: Model, r: Real): Promise<Model['group']> {
  const name = r.s.fixtures.name('model-group');
  const ex = await r.s.admin.post('/groups.json', { name });
  if (ex.response?.status === 404 || ex.response?.status === 405) {
    r.groups.offered = m.groupsOffered = false;
    return undefined;
  }
  const id = ex.response?.status === 201 ? createdId(ex) : undefined;
  if (id === undefined || !(await r.s.fixtures.track('group', id, name, { creation: ex, lazy: true }))) return undefined;
  r.groups.offered = true;
  m.group = { id, members: new Set() };
  return m.group;
}

/**
 * At the end of a sequence, the users it added to its group removed, and the group read back
 * (OPS-14), as a client that leaves things as it found them does.
 */
export async function emptyGroup(m: Model, r: Real): Promise<void> {
  const g = m.group;
  if (!g || g.members.size === 0) return;
  for (const who of [...g.members]) {
    if (isSuccess(await r.s.admin.put(`/groups/${g.id}/delete_user/${r.people[who].id}.json`))) g.members.delete(who);
  }
  await judgeGroup(r, 'basic', g);
}

/**
 * GET groups/<id>.json by the Admin: every user added with a 2XX and not removed since is listed,
 * no other of the file's users is (OPS-14, SHOULD: add user to group, delete user from group). Only the
 * membership: what a member may see through a group neither the spec nor the product facts say.
 */
async function judgeGroup(r: Real, via: Via, g: NonNullable<Model['group']>): Promise<void> {
  const ex = await r.clients.admin[via].get(`/groups/${g.id}.json`);
  framed(ex);
  // A show the server does not offer (the product's path) says nothing here.
  if (ex.response?.status !== 200 || ex.json === null || typeof ex.json !== 'object') return;
  for (const who of MEMBERS) {
    const shown = namesUser(ex.json, r.people[who]);
    const user = `the ${who} user ${r.people[who].id} (${r.people[who].username})`;
    if (g.members.has(who) && !shown) fail('OPS-14', ex, `${user} in the show of group ${g.id}: added with a 2XX and not removed since`, 'not listed');
    if (!g.members.has(who) && shown)
      fail('OPS-14', ex, `${user} not in the show of group ${g.id}: removed with a 2XX, or never added`, clip(JSON.stringify(ex.json), 300) ?? 'listed');
  }
}

export const labelP = (p: Prj) => `project ${p.id} (${p.marker})`;
export const pickP = (m: Model, back: number): Prj | undefined => {
  const live = m.projects.filter((p) => !p.deleted);
  return live.length === 0 ? undefined : live[live.length - 1 - (back % live.length)];
};

/** POST /projects.json by the Admin (§4: 201 Created, object with id), and one password in the new project. */
export class ProjectCreate extends Step {
  constructor(readonly via: Via) {
    super();
  }
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const marker = `${r.prefix}j${++r.counter.n}z`;
    const name = `${r.s.fixtures.name('model')}-${marker}-v0`;
    const c = r.clients.admin[this.via];
    const ex = await c.post('/projects.json', { name, parent_id: 0 });
    const id = ex.response?.status === 201 ? createdId(ex) : undefined;
    if (id === undefined || !(await r.s.fixtures.track('project', id, name, { creation: ex, reader: c, lazy: true }))) return;
    const p: Prj = { id, marker, name, deleted: false, archived: false, changedState: false, password: undefined };
    m.projects.push(p);
    const pname = `${r.s.fixtures.name('model')}-${marker}-pw`;
    const pex = await c.post('/passwords.json', { name: pname, project_id: id });
    const pid = pex.response?.status === 201 ? createdId(pex) : undefined;
    if (pid !== undefined && (await r.s.fixtures.track('password', pid, pname, { creation: pex, reader: c, lazy: true }))) p.password = pid;
    // Read back, as a client does.
    await judgeProject(r, this.via, p);
  }
  toString = () => `createProject(${this.via})`;
}

/** A write to a project of the sequence by the Admin (the product's paths); the model follows a 2XX. */
export class ProjectWrite extends Step {
  constructor(
    readonly kind: 'update' | 'archive' | 'unarchive' | 'delete',
    readonly via: Via,
    readonly back: number,
  ) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    const p = pickP(m as Model, this.back);
    if (!p) return false;
    if (this.kind === 'archive') return !p.archived;
    if (this.kind === 'unarchive') return p.archived;
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    const p = pickP(m, this.back)!;
    const c = r.clients.admin[this.via];
    const name = `${r.s.fixtures.name('model')}-${p.marker}-v1`;
    const ex =
      this.kind === 'delete'
        ? await c.delete(`/projects/${p.id}.json`)
        : this.kind === 'update'
          ? await c.put(`/projects/${p.id}.json`, { name })
          : await c.put(`/projects/${p.id}/${this.kind}.json`);
    framed(ex);
    if (!isSuccess(ex)) return;
    if (this.kind === 'delete') {
      p.deleted = true;
      r.s.fixtures.forget('project', p.id);
      // Read back, as a client does: neither the project nor its password is shown, the search finds it no more.
      await judgeProject(r, this.via, p);
      await judgeProjects(m, r, this.via, false);
    } else if (this.kind === 'update') {
      p.name = name;
      await judgeProject(r, this.via, p);
    } else {
      p.archived = this.kind === 'archive';
      p.changedState = true;
    }
  }
  toString = () => `${this.kind}Project(${this.via}, -${this.back})`;
}

/**
 * GET projects/<id>.json by the Admin: 200 OK with the project's current name while it exists
 * (the value is looked for anywhere in the body), an error once deleted (OPS-01), and then
 * its password is not shown either (RES-10).
 */
async function judgeProject(r: Real, via: Via, p: Prj): Promise<void> {
  const ex = await r.clients.admin[via].get(`/projects/${p.id}.json`);
  expectResponse(ex, `an answer to GET /projects/${p.id}.json`);
  framed(ex);
  const who = `the Admin over ${via}`;
  if (!p.deleted) {
    if (ex.response.status !== 200) fail('OPS-01', ex, `200 OK and ${labelP(p)} for ${who}`, `status ${ex.response.status}`);
    if (!stringsIn(ex.json).includes(p.name))
      fail(
        'OPS-01',
        ex,
        `the project's current name ${p.name} (its last update answered 2XX) in the show body for ${who}`,
        clip(JSON.stringify(ex.json), 300) ?? 'no body',
      );
    return;
  }
  if (isSuccess(ex))
    fail('OPS-01', ex, `an error for ${labelP(p)}, deleted with a 2XX earlier in the sequence, shown to ${who}`, `status ${ex.response.status}`);
  if (p.password === undefined) return;
  const pex = await r.clients.admin[via].get(`/passwords/${p.password}.json`);
  framed(pex);
  if (isSuccess(pex))
    fail(
      'RES-10',
      pex,
      `an error for password ${p.password}, made in ${labelP(p)}, deleted with a 2XX earlier in the sequence`,
      `status ${pex.response?.status}`,
    );
  r.s.fixtures.forget('password', p.password);
  p.password = undefined;
}

/**
 * The Admin's search of projects by the sequence's prefix (GET projects/search/<prefix>.json,
 * product facts §6), which only the sequence's projects can match: every project of the sequence
 * that exists and was never archived, none deleted (OPS-01); its count.json at the same
 * X-Page-Size counts what the search lists (SIZE-10). With `all`, the Admin's GET projects.json
 * too: every such project, none deleted ("a user with the Admin role sees all resources", GEN-08).
 */
export class Projects extends Step {
  constructor(
    readonly via: Via,
    readonly all: boolean,
  ) {
    super();
  }
  check = (m: Readonly<Model>) => m.projects.length > 0;
  run(m: Model, r: Real): Promise<void> {
    return judgeProjects(m, r, this.via, this.all);
  }
  toString = () => `projects(${this.via}${this.all ? ', list' : ''})`;
}

async function judgeProjects(m: Model, r: Real, via: Via, all: boolean): Promise<void> {
  const c = r.clients.admin[via];
  const who = `the Admin over ${via}`;
  const must = m.projects.filter((p) => !p.deleted && !p.changedState);
  const held = (ids: Set<number>, ex: Exchange, what: string, clause: string) => {
    const gone = m.projects.filter((p) => p.deleted && ids.has(p.id));
    if (gone.length > 0) fail('OPS-01', ex, `no deleted project in ${what} for ${who}`, `${gone.map(labelP).join(', ')} listed after a DELETE answered 2XX`);
    const missing = must.filter((p) => !ids.has(p.id));
    if (missing.length > 0) fail(clause, ex, `every project of the sequence that exists in ${what} for ${who}`, `${missing.map(labelP).join(', ')} missing`);
  };
  const base = `/projects/search/${r.prefix}`;
  const ex = await c.get(`${base}.json`, { headers: PAGE });
  // A search the server does not offer (404/405 with no list) says nothing here.
  if (!((ex.response?.status === 404 || ex.response?.status === 405) && !Array.isArray(ex.json))) {
    const ids = listed(ex, 'OPS-01', `GET ${base}.json for ${who}`);
    held(ids, ex, `GET ${base}.json`, 'OPS-01');
    const cex = await c.get(`${base}/count.json`, { headers: PAGE });
    framed(cex);
    const n = cex.response?.status === 200 ? (cex.json as Partial<Count> | undefined)?.num_items : undefined;
    if (typeof n === 'number' && n !== ids.size)
      fail('SIZE-10', cex, `num_items ${ids.size}: the projects GET ${base}.json lists ${who} at the same X-Page-Size`, `num_items ${n}`);
  }
  if (!all) return;
  const { ex: lex, ids } = await allIds(c, '/projects', 'GEN-08', `GET /projects.json for ${who}`);
  // Decision: an installation of more projects than the 20 pages read is not judged for missing ones.
  if (ids.size >= 20 * 1000) return;
  held(ids, lex, 'GET /projects.json', 'GEN-08');
}

/**
 * At the end of a sequence, its projects deleted by the Admin, and the sequence's search and its
 * count read again (OPS-01, SIZE-10): what the file's cleanup would delete later, deleted here,
 * so that every sequence that made a project sees one deleted. Their passwords go with them or
 * to the cleanup.
 */
export async function endProjects(m: Model, r: Real): Promise<void> {
  let deleted = false;
  for (const p of m.projects.filter((q) => !q.deleted)) {
    if (!isSuccess(await r.s.admin.delete(`/projects/${p.id}.json`))) continue;
    p.deleted = deleted = true;
    r.s.fixtures.forget('project', p.id);
  }
  if (deleted) await judgeProjects(m, r, 'basic', false);
}

export const labelU = (u: Usr) => `user ${u.id} (${u.username})`;
export const pickU = (m: Model, back: number): Usr | undefined => {
  const live = m.users.filter((u) => !u.deleted);
  return live.length === 0 ? undefined : live[live.length - 1 - (back % live.length)];
};

/** POST users.json by the Admin (product facts §6): a Normal user of the sequence's own, read back through its show. */
export class UserCreate extends Step {
  constructor(readonly via: Via) {
    super();
  }
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const username = r.s.fixtures.name('model-user');
    const password = `${randomBytes(12).toString('base64url')}-Aa1`;
    registerCredentials(username, password, `password of ${username}`);
    const c = r.clients.admin[this.via];
    const ex = await c.post('/users.json', { username, email_address: `${username}@example.invalid`, name: username, role: 'normal user', password });
    const id = ex.response?.status === 201 ? createdId(ex) : undefined;
    if (id === undefined || !(await r.s.fixtures.track('user', id, username, { creation: ex, reader: c, lazy: true }))) return;
    const u: Usr = { id, username, name: username, active: true, deleted: false, client: r.s.admin.withAuth({ kind: 'basic', user: username, password }) };
    m.users.push(u);
    const hmac = await issueKeys(r, u);
    if (hmac) u.hmac = hmac;
    if (hmac && r.s.admin.basicRefused !== undefined) u.client = hmac;
    await judgeUser(r, this.via, u);
  }
  toString = () => `createUser(${this.via})`;
}

/** A write to a user of the sequence by the Admin (the product's paths); the model follows a 2XX. */
export class UserWrite extends Step {
  constructor(
    readonly kind: 'update' | 'deactivate' | 'activate' | 'delete',
    readonly via: Via,
    readonly back: number,
  ) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    const u = pickU(m as Model, this.back);
    if (!u) return false;
    if (this.kind === 'deactivate') return u.active;
    if (this.kind === 'activate') return !u.active;
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    const u = pickU(m, this.back)!;
    const c = r.clients.admin[this.via];
    const name = `${u.username}-renamed-${r.counter.n++}`;
    const ex =
      this.kind === 'delete'
        ? await c.delete(`/users/${u.id}.json`)
        : this.kind === 'update'
          ? await c.put(`/users/${u.id}.json`, { name })
          : await c.put(`/users/${u.id}/${this.kind}.json`);
    framed(ex);
    if (!isSuccess(ex)) return;
    if (this.kind === 'delete') {
      u.deleted = true;
      r.s.fixtures.forget('user', u.id);
      await judgeUser(r, this.via, u);
    } else if (this.kind === 'update') {
      u.name = name;
      await judgeUser(r, this.via, u);
    } else {
      u.active = this.kind === 'activate';
      await judgeSignIn(u);
    }
  }
  toString = () => `${this.kind}User(${this.via}, -${this.back})`;
}

/** GET users/<id>.json by the Admin: 200 OK with the username and the current name while the user exists, an error once deleted (OPS-13, SHOULD: the product's path). */
async function judgeUser(r: Real, via: Via, u: Usr): Promise<void> {
  const ex = await r.clients.admin[via].get(`/users/${u.id}.json`);
  expectResponse(ex, `an answer to GET /users/${u.id}.json`);
  framed(ex);
  const who = `the Admin over ${via}`;
  if (u.deleted) {
    if (isSuccess(ex))
      fail('OPS-13', ex, `an error for ${labelU(u)}, deleted with a 2XX earlier in the sequence, shown to ${who}`, `status ${ex.response.status}`);
    return;
  }
  if (ex.response.status !== 200) fail('OPS-13', ex, `200 OK and ${labelU(u)} for ${who}`, `status ${ex.response.status}`);
  const strings = stringsIn(ex.json);
  if (!strings.includes(u.username) || !strings.includes(u.name))
    fail(
      'OPS-13',
      ex,
      `the username ${u.username} and the current name ${u.name} (its last update answered 2XX) in the show body for ${who}`,
      clip(JSON.stringify(ex.json), 300) ?? 'no body',
    );
}

/**
 * The user's own clients: HTTP Basic, and HMAC once the user has keys; HMAC alone when the run
 * signs in with HMAC only (the two are then one client).
 */
export function ownClients(u: Usr): Array<[ApiClient, string]> {
  if (u.hmac !== undefined && u.client === u.hmac) return [[u.hmac, 'HMAC']];
  return [[u.client, 'HTTP Basic'], ...(u.hmac ? [[u.hmac, 'HMAC'] as [ApiClient, string]] : [])];
}

/**
 * The user's own credentials once (de)activated with a 2XX, over HTTP Basic and HMAC: GET
 * /version.json answers an active user ("Any active user can use the API with their own
 * credentials", GEN-07) and refuses a deactivated one (GEN-15).
 */
async function judgeSignIn(u: Usr): Promise<void> {
  // Decision: what an LDAP user may do without an LDAP server is the product's choice.
  if (u.ldap) return;
  // Over both methods side by side (reads), judged in this order.
  const asked = await together(ownClients(u).map(async ([c, how]) => [await c.get('/version.json'), how] as const));
  for (const [ex, how] of asked) {
    expectResponse(ex, 'an answer to GET /version.json');
    framed(ex);
    if (u.active && !isSuccess(ex))
      fail('GEN-07', ex, `an answer to ${labelU(u)}, activated with a 2XX, over ${how} with their own credentials`, `status ${ex.response.status}`);
    if (!u.active && isSuccess(ex))
      fail('GEN-15', ex, `a refusal of ${labelU(u)}, deactivated with a 2XX, over ${how} with their own credentials`, `status ${ex.response.status}`);
  }
}

/**
 * A write to a user of the sequence by a user of another role given no access to it: never a 2XX
 * (GEN-09, as for passwords). Decision: only writes to an existing user of the run; a creation
 * by such a role is not judged, the spec's words do not forbid it (only the product's table).
 */
export class UserIntrude extends Step {
  constructor(
    readonly actor: (typeof OUTSIDERS)[number],
    readonly via: Via,
    readonly kind: 'update' | 'deactivate' | 'delete',
    readonly back: number,
  ) {
    super();
  }
  check = (m: Readonly<Model>) => pickU(m as Model, this.back) !== undefined;
  async run(m: Model, r: Real): Promise<void> {
    const u = pickU(m, this.back)!;
    const c = r.clients[this.actor][this.via];
    const ex =
      this.kind === 'delete'
        ? await c.delete(`/users/${u.id}.json`)
        : this.kind === 'update'
          ? await c.put(`/users/${u.id}.json`, { name: `${u.name}-intruded` })
          : await c.put(`/users/${u.id}/deactivate.json`);
    framed(ex);
    if (isSuccess(ex))
      fail(
        'GEN-09',
        ex,
        `a refusal of ${this.kind} of ${labelU(u)} by the ${this.actor} over ${this.via}, who was given no access to it`,
        `status ${ex.response?.status}`,
      );
  }
  toString = () => `intrudeUser(${this.actor}, ${this.via}, ${this.kind}, -${this.back})`;
}

/**
 * One choice among the commands on the sequence's projects: create, or the write or read chosen
 * on one of its projects (archive unarchives an archived one). Decision (the same number of
 * commands): while the sequence has no project, the command creates one first, then acts on it.
 */
export class ProjectStep extends Step {
  private done: Step[] = [];
  constructor(
    readonly kind: 'create' | 'update' | 'delete' | 'archive' | 'read',
    readonly via: Via,
    readonly back: number,
    readonly all: boolean,
  ) {
    super();
  }
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    this.done = [];
    if (this.kind === 'create' || !pickP(m, this.back)) {
      this.done.push(new ProjectCreate(this.via));
      await this.done[0]!.run(m, r);
      if (this.kind === 'create') return;
    }
    const p = pickP(m, this.back);
    if (!p) return;
    const next =
      this.kind === 'read'
        ? new Projects(this.via, this.all)
        : new ProjectWrite(this.kind === 'archive' && p.archived ? 'unarchive' : this.kind, this.via, this.back);
    this.done.push(next);
    await next.run(m, r);
  }
  toString = () => (this.done.length > 0 ? this.done.map(String).join('+') : `project(${this.kind}, ${this.via}, -${this.back})`);
}

/**
 * One choice among the commands on the sequence's users: create, or the Admin's write chosen
 * (deactivate activates an inactive user), or another role's write. Decision (the same number of
 * commands): while the sequence has no user, the command creates one first, then acts on it.
 */
export class UserStep extends Step {
  private done: Step[] = [];
  constructor(
    readonly kind: 'create' | 'update' | 'deactivate' | 'delete' | 'intrude',
    readonly via: Via,
    readonly back: number,
    readonly intruder: (typeof OUTSIDERS)[number],
    readonly intrusion: UserIntrude['kind'],
  ) {
    super();
  }
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    this.done = [];
    if (this.kind === 'create' || !pickU(m, this.back)) {
      this.done.push(new UserCreate(this.via));
      await this.done[0]!.run(m, r);
      if (this.kind === 'create') return;
    }
    const u = pickU(m, this.back);
    if (!u) return;
    const next =
      this.kind === 'intrude'
        ? new UserIntrude(this.intruder, this.via, this.intrusion, this.back)
        : new UserWrite(this.kind === 'deactivate' && !u.active ? 'activate' : this.kind, this.via, this.back);
    this.done.push(next);
    await next.run(m, r);
  }
  toString = () => (this.done.length > 0 ? this.done.map(String).join('+') : `user(${this.kind}, ${this.via}, -${this.back})`);
}

const via = fc.constantFrom<Via>('basic', 'hmac');
const back = fc.constantFrom(0, 0, 0, 1, 2);
// Read only is the role whose name says it may not write: it comes up as often as the two others.
const outsider = fc.constantFrom<(typeof OUTSIDERS)[number]>('read only', 'read only', 'project manager', 'normal user');
const inside = fc.constantFrom<'admin' | 'viewer'>('admin', 'viewer');

/** The commands, weighted towards what relates answers to each other on a few passwords of the sequence's own. */
export function commandArbitraries(): Array<fc.Arbitrary<Step>> {
  const create = fc.tuple(via, fc.constantFrom<'main' | 'other'>('main', 'main', 'other')).map(([v, p]) => new Create(v, p));
  // Archive, lock and move are passwords.ts's PasswordStep, with their read-backs.
  const kinds = fc.constantFrom('update', 'update', 'update', 'delete', 'delete', 'delete');
  const write = fc.tuple(kinds, via, back).map(([k, v, b]) => new Write(k, v, b));
  const show = fc.tuple(inside, via, back).map(([a, v, b]) => new Show(a, v, b));
  const viewerList = fc.tuple(via, fc.boolean()).map(([v, c]) => new List('viewer', v, c));
  const logCheck = back.map((b) => new LogCheck(b));
  const intrude = fc.tuple(outsider, via, fc.constantFrom('update', 'delete', 'archive', 'lock'), back).map(([a, v, k, b]) => new Intrude(a, v, k, b));
  const outsiderShow = fc.tuple(outsider, via, back).map(([a, v, b]) => new Show(a, v, b));
  const favorite = fc.tuple(inside, via, fc.boolean(), back).map(([a, v, on, b]) => new Favorite(a, v, on, b));
  const favorites = fc.tuple(inside, via).map(([a, v]) => new Favorites(a, v));
  const membership = fc.tuple(fc.boolean(), back, via).map(([on, b, v]) => new Membership(on, b, v));
  const project = fc
    .tuple(fc.constantFrom('create', 'update', 'delete', 'archive', 'read'), via, back, fc.boolean())
    .map(([k, v, b, all]) => new ProjectStep(k, v, b, all));
  const user = fc
    .tuple(fc.constantFrom('create', 'update', 'deactivate', 'delete', 'intrude'), via, back, outsider, fc.constantFrom('update', 'deactivate', 'delete'))
    .map(([k, v, b, a, i]) => new UserStep(k, v, b, a, i));
  const search = fc.tuple(fc.constantFrom<Search['actor']>('viewer', 'viewer', ...OUTSIDERS), via, back).map(([a, v, b]) => new Search(a, v, b));
  return [
    ...[create, create],
    ...[write, write, write, write],
    ...[show, show, show],
    ...[outsiderShow, outsiderShow],
    ...[viewerList, viewerList, viewerList],
    fc.tuple(outsider, via).map(([a, v]) => new List(a, v, false)),
    ...[intrude, intrude, intrude],
    ...[favorite, favorite],
    ...[favorites, favorites],
    search,
    fc.tuple(fc.constantFrom(...ACTORS), via).map(([a, v]) => new Generate(a, v)),
    fc.tuple(fc.constantFrom('admin', 'viewer', ...OUTSIDERS), via).map(([a, v]) => new CheckLatest(a, v)),
    ...[logCheck, logCheck],
    // Groups, projects and users: a share of the same commands, one choice each (issue 26's request budget).
    membership,
    project,
    user,
  ];
}
