import { randomBytes } from 'node:crypto';
import type { Exchange } from '../../core/exchange.ts';
import { registerCredentials } from '../../core/redact.ts';
import { isSuccess } from './checks.ts';
import type { ApiClient } from './client.ts';
import { inFlight } from './config.ts';
import type { Role } from './control.ts';
import type { FixtureKind } from './fixtures.ts';
import { inOrder } from './in-order.ts';
import type { Session } from './session.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** The kinds of object a path or body names by id; the same kinds the fixtures create and delete. */
export type IdKind = FixtureKind;
export const ID_KINDS: readonly IdKind[] = ['project', 'password', 'my_password', 'file', 'user', 'group'];

/** The rows of §1's table "Operations offered per resource", in its order and spelling. */
export const RESOURCES = ['Projects', 'Passwords', 'My Passwords', 'Files', 'Favorites', 'Users', 'Groups', 'Passwords generator', 'Version', 'Log'] as const;
export type Resource = (typeof RESOURCES)[number];

/** Each row's operations, its text split at the commas (a unit test joins them back and finds the row in the spec). */
export const OPERATIONS: Readonly<Record<Resource, readonly string[]>> = {
  Projects: [
    'list',
    'show',
    'create',
    'update',
    'list passwords of a project',
    'list users who can access the project',
    'archive/unarchive',
    'list files',
    'upload a file',
    'delete',
  ],
  Passwords: [
    'list',
    'show',
    'create',
    'update',
    'update security',
    'update custom fields definitions',
    'list users who can access the password',
    'delete',
    'archive/unarchive',
    'move',
    'list files',
    'upload a file',
    'lock/unlock',
  ],
  'My Passwords': ['list', 'show', 'create', 'update', 'delete'],
  Files: ['list', 'show', 'update notes of a file', 'get the maximum upload file size', 'get uploads folder information', 'upload', 'download', 'delete'],
  Favorites: ['list favorite passwords and projects of the user', 'make a password/project favorite', 'make a password/project not favorite'],
  Users: ['list', 'show', 'create', 'update', 'activate/deactivate', 'convert to ldap/normal', 'delete'],
  Groups: ['list', 'show', 'create', 'update', 'add user to group', 'delete user from group', 'delete'],
  'Passwords generator': ['return a strong random password made with the current generator settings'],
  Version: ['return version information'],
  Log: ['query the log'],
};

/** "Resource: operation", e.g. "Projects: archive/unarchive". */
export type Op = `${Resource}: ${string}`;

/** The data a path or a body needs: objects the run created for the file. */
export interface EndpointData {
  /** The ids that `{project}`, `{password}`, `{my_password}`, `{file}`, `{user}` and `{group}` stand for. */
  ids: Partial<Record<IdKind, number>>;
  /** A second project of the run: where moves go. */
  targetProjectId?: number;
  /** The name given to the shared password: NON_ASCII_LABEL inside the run's label. */
  passwordName: string;
  /** What `{search}` stands for: a text every name of the file holds (`pmv6-<run>-<tag>`). */
  search: string;
  /** A labelled name, `pmv6-<run>-<tag>-<label>-<n>`, for bodies that create or rename. */
  name(label: string): string;
  /** A fresh password for a user the run creates, registered for redaction under `user`. */
  secret(user: string): string;
}

/** A request that brings an object into the state an endpoint needs (archived before unarchive). */
export interface Step {
  method: Method;
  path: string;
  body?: (d: EndpointData) => Record<string, unknown>;
}

export interface Endpoint {
  method: Method;
  /**
   * Relative to {base_url}/index.php/api/v6, with typed ids: `{project}`, `{password}`,
   * `{my_password}`, `{file}`, `{user}`, `{group}`, and `{search}` for a search text.
   */
  path: string;
  /** The operations of §1's table this call performs; none for the product's other paths. */
  ops?: readonly Op[];
  /** The JSON body of a POST or PUT. */
  body?: (d: EndpointData) => Record<string, unknown>;
  /** Kinds of id the body names (a path's kinds are read from the path). */
  uses?: readonly IdKind[];
  headers?: Readonly<Record<string, string>>;
  /** The success status: §4's table for the spec's paths, the product's (product facts §4) for the others. */
  success: 200 | 201 | 204;
  /** The product marks the list P (product facts §6): `/page/N.json`, `/count.json`, X-Page-Size. */
  paginated?: true;
  /**
   * How a list gets one more item, for pagination checks that need two pages: a new object of
   * this kind (named with the file's search text), then these steps on it. None: the list grows
   * by itself (the log) or cannot be grown by the run alone.
   */
  grow?: { kind: IdKind; steps?: readonly Step[] };
  /** A successful call creates this kind of object; it is handed to the fixtures, whose cleanup deletes it. */
  creates?: FixtureKind;
  /** A successful call deletes the object of this kind that its path names. */
  deletes?: IdKind;
  /**
   * The call changes or removes these objects (delete, archive, lock, deactivate, move...): a
   * successful call gets new ones of its own, made by the run, so that the file's shared objects
   * keep their state. Every write touches only objects the run created.
   */
  fresh?: readonly IdKind[];
  /** Requests sent on the fresh objects first: unarchive needs an archived project. */
  before?: readonly Step[];
  /** The roles that may call it ("only IT or Admin users may call it"); undefined: every role. */
  roles?: readonly Role[];
  /** Calling it needs the control protocol (none of the table's entries does today: the run's Admin makes every object). */
  control?: true;
  /**
   * 'spec': the path is in §4's table. 'product': §4 does not show it and it comes from
   * ../shared/reference/product-facts.md; a 404 or 405 there is unverifiable, never a violation.
   */
  source: 'spec' | 'product';
}

const FILE_TEXT = 'pmv6 conformance run: a small text file\n';
const UNLOCK_REASON = 'pmv6 conformance run';
const ADMIN_IT: readonly Role[] = ['admin', 'it'];

const P = 'product' as const;
const FAVORITE_PASSWORD = { kind: 'password', steps: [{ method: 'POST', path: '/favorite_passwords/{password}.json' }] } as const;
const FAVORITE_PROJECT = { kind: 'project', steps: [{ method: 'POST', path: '/favorite_projects/{project}.json' }] } as const;

/**
 * The endpoint table: every operation of §1's table, at §4's path where §4 shows one and at the
 * product's path (product facts §6) otherwise, plus the product's other lists (archived,
 * search, favorites under both names) so that the pagination rules run over every list.
 */
export const TABLE: readonly Endpoint[] = [
  // ── Projects ────────────────────────────────────────────────────────────────────────────
  { method: 'GET', path: '/projects.json', ops: ['Projects: list'], success: 200, paginated: true, grow: { kind: 'project' }, source: P },
  {
    method: 'GET',
    path: '/projects/archived.json',
    success: 200,
    paginated: true,
    grow: { kind: 'project', steps: [{ method: 'PUT', path: '/projects/{project}/archive.json' }] },
    source: P,
  },
  { method: 'GET', path: '/projects/search/{search}.json', success: 200, paginated: true, grow: { kind: 'project' }, source: P },
  { method: 'GET', path: '/projects/{project}.json', ops: ['Projects: show'], success: 200, source: P },
  {
    method: 'POST',
    path: '/projects.json',
    ops: ['Projects: create'],
    body: (d) => ({ name: d.name('ep-project'), parent_id: 0 }),
    success: 201,
    creates: 'project',
    source: 'spec',
  },
  { method: 'PUT', path: '/projects/{project}.json', ops: ['Projects: update'], body: (d) => ({ name: d.name('ep-renamed') }), success: 204, source: P },
  {
    method: 'GET',
    path: '/projects/{project}/passwords.json',
    ops: ['Projects: list passwords of a project'],
    success: 200,
    paginated: true,
    grow: { kind: 'password' },
    source: P,
  },
  { method: 'GET', path: '/projects/{project}/security.json', ops: ['Projects: list users who can access the project'], success: 200, source: P },
  { method: 'PUT', path: '/projects/{project}/archive.json', ops: ['Projects: archive/unarchive'], success: 204, fresh: ['project'], source: P },
  {
    method: 'PUT',
    path: '/projects/{project}/unarchive.json',
    ops: ['Projects: archive/unarchive'],
    success: 204,
    fresh: ['project'],
    before: [{ method: 'PUT', path: '/projects/{project}/archive.json' }],
    source: P,
  },
  { method: 'GET', path: '/projects/{project}/files.json', ops: ['Projects: list files', 'Files: list'], success: 200, source: P },
  {
    method: 'POST',
    path: '/projects/{project}/upload.json',
    ops: ['Projects: upload a file', 'Files: upload'],
    body: (d) => ({ file_data_base64: Buffer.from(FILE_TEXT).toString('base64'), file_name: `${d.name('ep-file')}.txt`, notes: 'uploaded by pmv6' }),
    success: 201,
    creates: 'file',
    source: P,
  },
  { method: 'DELETE', path: '/projects/{project}.json', ops: ['Projects: delete'], success: 204, deletes: 'project', fresh: ['project'], source: P },

  // ── Passwords ───────────────────────────────────────────────────────────────────────────
  { method: 'GET', path: '/passwords.json', ops: ['Passwords: list'], success: 200, paginated: true, grow: { kind: 'password' }, source: 'spec' },
  { method: 'GET', path: '/passwords/page/1.json', ops: ['Passwords: list'], success: 200, source: 'spec' },
  { method: 'GET', path: '/passwords/count.json', success: 200, source: 'spec' },
  {
    method: 'GET',
    path: '/passwords/archived.json',
    success: 200,
    paginated: true,
    grow: { kind: 'password', steps: [{ method: 'PUT', path: '/passwords/{password}/archive.json' }] },
    source: P,
  },
  { method: 'GET', path: '/passwords/search/{search}.json', success: 200, paginated: true, grow: { kind: 'password' }, source: P },
  { method: 'GET', path: '/passwords/{password}.json', ops: ['Passwords: show'], success: 200, source: 'spec' },
  {
    method: 'POST',
    path: '/passwords.json',
    ops: ['Passwords: create'],
    body: (d) => ({ name: d.name('ep-password'), project_id: d.ids.project }),
    uses: ['project'],
    success: 201,
    creates: 'password',
    source: 'spec',
  },
  { method: 'PUT', path: '/passwords/{password}.json', ops: ['Passwords: update'], body: (d) => ({ notes: d.name('ep-notes') }), success: 204, source: P },
  {
    method: 'PUT',
    path: '/passwords/{password}/security.json',
    ops: ['Passwords: update security'],
    body: (d) => ({ users_permissions: [[d.ids.user, 10]] }),
    uses: ['user'],
    success: 204,
    source: P,
  },
  {
    method: 'PUT',
    path: '/passwords/{password}/custom_fields.json',
    ops: ['Passwords: update custom fields definitions'],
    body: () => ({ custom_field1: { type: 'text', label: 'pmv6 custom field' } }),
    success: 204,
    source: P,
  },
  { method: 'GET', path: '/passwords/{password}/security.json', ops: ['Passwords: list users who can access the password'], success: 200, source: P },
  { method: 'DELETE', path: '/passwords/{password}.json', ops: ['Passwords: delete'], success: 204, deletes: 'password', fresh: ['password'], source: P },
  { method: 'PUT', path: '/passwords/{password}/archive.json', ops: ['Passwords: archive/unarchive'], success: 204, fresh: ['password'], source: P },
  {
    method: 'PUT',
    path: '/passwords/{password}/unarchive.json',
    ops: ['Passwords: archive/unarchive'],
    success: 204,
    fresh: ['password'],
    before: [{ method: 'PUT', path: '/passwords/{password}/archive.json' }],
    source: P,
  },
  {
    method: 'PUT',
    path: '/passwords/{password}/move.json',
    ops: ['Passwords: move'],
    body: (d) => ({ project_id: d.targetProjectId }),
    success: 204,
    fresh: ['password'],
    source: P,
  },
  { method: 'GET', path: '/passwords/{password}/files.json', ops: ['Passwords: list files', 'Files: list'], success: 200, source: P },
  {
    method: 'POST',
    path: '/passwords/{password}/upload.json',
    ops: ['Passwords: upload a file', 'Files: upload'],
    body: (d) => ({ file_data_base64: Buffer.from(FILE_TEXT).toString('base64'), file_name: `${d.name('ep-file')}.txt` }),
    success: 201,
    creates: 'file',
    source: P,
  },
  { method: 'PUT', path: '/passwords/{password}/lock.json', ops: ['Passwords: lock/unlock'], success: 204, fresh: ['password'], source: P },
  {
    method: 'PUT',
    path: '/passwords/{password}/unlock.json',
    ops: ['Passwords: lock/unlock'],
    headers: { 'X-Unlock-Reason': UNLOCK_REASON },
    success: 204,
    fresh: ['password'],
    before: [{ method: 'PUT', path: '/passwords/{password}/lock.json' }],
    source: P,
  },

  // ── My Passwords ────────────────────────────────────────────────────────────────────────
  { method: 'GET', path: '/my_passwords.json', ops: ['My Passwords: list'], success: 200, paginated: true, grow: { kind: 'my_password' }, source: P },
  { method: 'GET', path: '/my_passwords/search/{search}.json', success: 200, paginated: true, grow: { kind: 'my_password' }, source: P },
  { method: 'GET', path: '/my_passwords/{my_password}.json', ops: ['My Passwords: show'], success: 200, source: P },
  {
    method: 'POST',
    path: '/my_passwords.json',
    ops: ['My Passwords: create'],
    body: (d) => ({ name: d.name('ep-my-password'), username: 'pmv6', access_info: 'https://example.invalid/' }),
    success: 201,
    creates: 'my_password',
    source: P,
  },
  {
    method: 'PUT',
    path: '/my_passwords/{my_password}.json',
    ops: ['My Passwords: update'],
    body: (d) => ({ notes: d.name('ep-notes') }),
    success: 204,
    source: P,
  },
  {
    method: 'DELETE',
    path: '/my_passwords/{my_password}.json',
    ops: ['My Passwords: delete'],
    success: 204,
    deletes: 'my_password',
    fresh: ['my_password'],
    source: P,
  },

  // ── Files ───────────────────────────────────────────────────────────────────────────────
  { method: 'GET', path: '/files/{file}.json', ops: ['Files: show'], success: 200, source: P },
  {
    method: 'PUT',
    path: '/files/{file}.json',
    ops: ['Files: update notes of a file'],
    body: () => ({ notes: 'notes updated by pmv6' }),
    success: 204,
    source: P,
  },
  { method: 'GET', path: '/files/max_upload_file_size.json', ops: ['Files: get the maximum upload file size'], success: 200, source: P },
  { method: 'GET', path: '/files/uploads_folder_info.json', ops: ['Files: get uploads folder information'], success: 200, roles: ADMIN_IT, source: P },
  { method: 'GET', path: '/files/download/{file}.json', ops: ['Files: download'], success: 200, source: P },
  { method: 'DELETE', path: '/files/{file}.json', ops: ['Files: delete'], success: 204, deletes: 'file', fresh: ['file'], source: P },

  // ── Favorites ───────────────────────────────────────────────────────────────────────────
  {
    method: 'GET',
    path: '/favorite_passwords.json',
    ops: ['Favorites: list favorite passwords and projects of the user'],
    success: 200,
    paginated: true,
    grow: FAVORITE_PASSWORD,
    source: P,
  },
  {
    method: 'GET',
    path: '/favorite_projects.json',
    ops: ['Favorites: list favorite passwords and projects of the user'],
    success: 200,
    paginated: true,
    grow: FAVORITE_PROJECT,
    source: P,
  },
  { method: 'GET', path: '/passwords/favorite.json', success: 200, paginated: true, grow: FAVORITE_PASSWORD, source: P },
  { method: 'GET', path: '/projects/favorite.json', success: 200, paginated: true, grow: FAVORITE_PROJECT, source: P },
  {
    method: 'POST',
    path: '/favorite_passwords/{password}.json',
    ops: ['Favorites: make a password/project favorite'],
    success: 204,
    fresh: ['password'],
    source: P,
  },
  {
    method: 'POST',
    path: '/favorite_projects/{project}.json',
    ops: ['Favorites: make a password/project favorite'],
    success: 204,
    fresh: ['project'],
    source: P,
  },
  {
    method: 'DELETE',
    path: '/favorite_passwords/{password}.json',
    ops: ['Favorites: make a password/project not favorite'],
    success: 204,
    fresh: ['password'],
    before: [{ method: 'POST', path: '/favorite_passwords/{password}.json' }],
    source: P,
  },
  {
    method: 'DELETE',
    path: '/favorite_projects/{project}.json',
    ops: ['Favorites: make a password/project not favorite'],
    success: 204,
    fresh: ['project'],
    before: [{ method: 'POST', path: '/favorite_projects/{project}.json' }],
    source: P,
  },

  // ── Users ───────────────────────────────────────────────────────────────────────────────
  // "Read only" users "can't" call the users list (product facts §4).
  {
    method: 'GET',
    path: '/users.json',
    ops: ['Users: list'],
    success: 200,
    paginated: true,
    grow: { kind: 'user' },
    roles: ['admin', 'it', 'project manager', 'normal user'],
    source: P,
  },
  { method: 'GET', path: '/users/me.json', success: 200, source: P },
  { method: 'GET', path: '/users/{user}.json', ops: ['Users: show'], success: 200, roles: ADMIN_IT, source: P },
  {
    method: 'POST',
    path: '/users.json',
    ops: ['Users: create'],
    body: (d) => {
      const username = d.name('ep-user');
      return { username, email_address: `${username}@example.invalid`, name: username, role: 'normal user', password: d.secret(username) };
    },
    success: 201,
    creates: 'user',
    roles: ADMIN_IT,
    source: P,
  },
  {
    method: 'PUT',
    path: '/users/{user}.json',
    ops: ['Users: update'],
    body: (d) => ({ name: d.name('ep-user-renamed') }),
    success: 204,
    roles: ADMIN_IT,
    source: P,
  },
  { method: 'PUT', path: '/users/{user}/deactivate.json', ops: ['Users: activate/deactivate'], success: 204, fresh: ['user'], roles: ADMIN_IT, source: P },
  {
    method: 'PUT',
    path: '/users/{user}/activate.json',
    ops: ['Users: activate/deactivate'],
    success: 204,
    fresh: ['user'],
    before: [{ method: 'PUT', path: '/users/{user}/deactivate.json' }],
    roles: ADMIN_IT,
    source: P,
  },
  {
    method: 'PUT',
    path: '/users/{user}/convert_to_ldap.json',
    ops: ['Users: convert to ldap/normal'],
    body: (d) => ({ login_dn: `cn=${d.name('ep-ldap')},dc=example,dc=invalid`, ldap_server_id: 1 }),
    success: 204,
    fresh: ['user'],
    roles: ADMIN_IT,
    source: P,
  },
  {
    method: 'PUT',
    path: '/users/{user}/convert_to_normal.json',
    ops: ['Users: convert to ldap/normal'],
    body: (d) => ({ password: d.secret(`user ${d.ids.user ?? ''}`) }),
    success: 204,
    fresh: ['user'],
    before: [
      {
        method: 'PUT',
        path: '/users/{user}/convert_to_ldap.json',
        body: (d) => ({ login_dn: `cn=${d.name('ep-ldap')},dc=example,dc=invalid`, ldap_server_id: 1 }),
      },
    ],
    roles: ADMIN_IT,
    source: P,
  },
  {
    method: 'PUT',
    path: '/users/{user}/change_password.json',
    body: (d) => ({ password: d.secret(`user ${d.ids.user ?? ''}`) }),
    success: 204,
    roles: ADMIN_IT,
    source: P,
  },
  { method: 'GET', path: '/users/{user}/passwords.json', success: 200, paginated: true, roles: ['admin'], source: P },
  { method: 'GET', path: '/users/{user}/projects.json', success: 200, paginated: true, roles: ['admin'], source: P },
  { method: 'DELETE', path: '/users/{user}.json', ops: ['Users: delete'], success: 204, deletes: 'user', fresh: ['user'], roles: ADMIN_IT, source: P },

  // ── Groups ──────────────────────────────────────────────────────────────────────────────
  { method: 'GET', path: '/groups.json', ops: ['Groups: list'], success: 200, paginated: true, grow: { kind: 'group' }, source: P },
  { method: 'GET', path: '/groups/{group}.json', ops: ['Groups: show'], success: 200, roles: ADMIN_IT, source: P },
  {
    method: 'POST',
    path: '/groups.json',
    ops: ['Groups: create'],
    body: (d) => ({ name: d.name('ep-group') }),
    success: 201,
    creates: 'group',
    roles: ADMIN_IT,
    source: P,
  },
  {
    method: 'PUT',
    path: '/groups/{group}.json',
    ops: ['Groups: update'],
    body: (d) => ({ name: d.name('ep-group-renamed') }),
    success: 204,
    roles: ADMIN_IT,
    source: P,
  },
  {
    method: 'PUT',
    path: '/groups/{group}/add_user/{user}.json',
    ops: ['Groups: add user to group'],
    success: 204,
    fresh: ['group'],
    roles: ADMIN_IT,
    source: P,
  },
  {
    method: 'PUT',
    path: '/groups/{group}/delete_user/{user}.json',
    ops: ['Groups: delete user from group'],
    success: 204,
    fresh: ['group'],
    before: [{ method: 'PUT', path: '/groups/{group}/add_user/{user}.json' }],
    roles: ADMIN_IT,
    source: P,
  },
  { method: 'DELETE', path: '/groups/{group}.json', ops: ['Groups: delete'], success: 204, deletes: 'group', fresh: ['group'], roles: ADMIN_IT, source: P },

  // ── Passwords generator, Version, Log ───────────────────────────────────────────────────
  {
    method: 'GET',
    path: '/generate_password.json',
    ops: ['Passwords generator: return a strong random password made with the current generator settings'],
    success: 200,
    source: P,
  },
  { method: 'GET', path: '/version.json', ops: ['Version: return version information'], success: 200, source: 'spec' },
  { method: 'GET', path: '/version/check_latest.json', ops: ['Version: return version information'], success: 200, roles: ADMIN_IT, source: 'spec' },
  { method: 'GET', path: '/log.json', ops: ['Log: query the log'], success: 200, paginated: true, roles: ADMIN_IT, source: P },
  { method: 'GET', path: '/log/search/{search}.json', ops: ['Log: query the log'], success: 200, paginated: true, roles: ADMIN_IT, source: P },
];

/** §4's endpoint table: the entries whose path the spec shows. */
export const ENDPOINTS: readonly Endpoint[] = TABLE.filter((e) => e.source === 'spec');

/** Entries that change state on the target: every method but GET. */
export const WRITING: readonly Endpoint[] = TABLE.filter((e) => changesState(e));

/** The lists the product marks paginated, and §4's /passwords.json. */
export const PAGINATED: readonly Endpoint[] = TABLE.filter((e) => e.paginated);

export function changesState(e: Pick<Endpoint, 'method'>): boolean {
  return e.method !== 'GET';
}

/** The entries that perform an operation of the given §1 row. */
export function entriesOf(resource: Resource): Endpoint[] {
  return TABLE.filter((e) => e.ops?.some((op) => op.startsWith(`${resource}: `)));
}

/** The entry that creates objects of this kind for the file (the one POST the fixtures lack). */
export const CREATORS: Readonly<Partial<Record<IdKind, Endpoint | undefined>>> = {
  my_password: TABLE.find((e) => e.creates === 'my_password'),
  file: TABLE.find((e) => e.creates === 'file' && e.path.startsWith('/projects/')),
  user: TABLE.find((e) => e.creates === 'user'),
  group: TABLE.find((e) => e.creates === 'group'),
};

/** A name with Latin-1, BMP and astral characters, so that UTF-8 checks see more than ASCII. */
export const NON_ASCII_LABEL = 'utf8-äöüß-€✓-中文-😀';

/**
 * An id no installation is expected to have. Decision: the spec gives no way to find an id that
 * surely does not exist, so this is a guess; tests that can delete an object they created use
 * that object's id instead.
 */
export const UNKNOWN_ID = 2_000_000_001;

export function label(e: Pick<Endpoint, 'method' | 'path'>): string {
  return `${e.method} ${e.path}`;
}

const PLACEHOLDER = /\{(project|password|my_password|file|user|group|search)\}/g;

/** The kinds of id an entry needs: those in its path, in its `before` steps and in its body. */
export function kindsOf(e: Pick<Endpoint, 'path' | 'uses' | 'before'>): IdKind[] {
  const paths = [e.path, ...(e.before ?? []).map((b) => b.path)];
  const found = paths.flatMap((p) => [...p.matchAll(PLACEHOLDER)].map((m) => m[1]!)).filter((k): k is IdKind => k !== 'search');
  return [...new Set([...found, ...(e.uses ?? [])])];
}

/** Why an entry cannot be sent with this data (an id the file could not make), or undefined. */
export function missing(e: Pick<Endpoint, 'path' | 'uses' | 'before'>, d: EndpointData): string | undefined {
  const absent = kindsOf(e).filter((k) => d.ids[k] === undefined);
  return absent.length === 0 ? undefined : `no ${absent.join(', ')} to name: the file could not create one`;
}

export function fillPath(path: string, d: EndpointData): string {
  const out = path.replace(PLACEHOLDER, (_m, kind: string) => {
    if (kind === 'search') return encodeURIComponent(d.search);
    const id = d.ids[kind as IdKind];
    if (id === undefined) throw new Error(`endpoint table: no ${kind} id for ${path}`);
    return String(id);
  });
  // §1: "Every URL ends in `.json`."
  if (!out.endsWith('.json')) throw new Error(`endpoint table: ${path} does not end in .json`);
  return out;
}

export function pathOf(e: Pick<Endpoint, 'path'>, d: EndpointData): string {
  return fillPath(e.path, d);
}

/** A list's path without `.json`, for its `/page/N.json` and `/count.json`. */
export function listBase(e: Pick<Endpoint, 'path'>, d: EndpointData): string {
  return pathOf(e, d).slice(0, -'.json'.length);
}

/** True when a product path answered 404 or 405: the target does not serve it, which proves nothing. */
export function notServed(e: Pick<Endpoint, 'source'>, ex: Exchange): boolean {
  const status = ex.response?.status;
  return e.source === 'product' && (status === 404 || status === 405);
}

export interface CallOptions {
  /** Default application/json; charset=utf-8; null omits the header. */
  contentType?: string | null;
  headers?: Record<string, string>;
  /** Replaces the endpoint's method, e.g. PATCH. */
  method?: string;
  /** A creation is read back at once (the table's shared objects), not only when needed. */
  readBack?: boolean;
}

export type EndpointCall = { endpoint: Endpoint; ex: Exchange } | { endpoint: Endpoint; skipped: string };

export interface EndpointCalls {
  /**
   * The file's shared objects, made once through the API: two projects and a password with a
   * non-ASCII name, then a personal password, a file, a user and a group when an entry first
   * needs one. A kind the target does not create at the product's path (not served, or the
   * product's payload refused) is left out, and the entries that need it are not sent; see
   * unavailable. Give `endpoints` to make what they need now:
   * before a test switches API access off or Maintenance Mode on, where nothing can be made.
   */
  data(endpoints?: readonly Endpoint[]): Promise<EndpointData>;
  /** The kinds data() could not make, with the reason. */
  unavailable(): ReadonlyMap<IdKind, string>;
  /** Data for a successful call as the Admin: the shared objects, fresh ones where the entry changes them, after its `before` steps. A string says why there is none. */
  subject(e: Endpoint): Promise<EndpointData | string>;
  /**
   * subject() of each entry, --concurrency at once (the shared objects made first, in turn), in
   * the entries' order; a string entry is passed through as the reason there is none.
   */
  subjects(entries: ReadonlyArray<Endpoint | string>): Promise<Array<EndpointData | string>>;
  /** Adds n items to a list through its `grow` entry; a string says why it cannot. */
  grow(e: Endpoint, n: number): Promise<string | undefined>;
  /** A new object of this kind, made by the run (undefined: the target does not create it; see unavailable). */
  make(kind: IdKind, d: EndpointData): Promise<number | undefined>;
  /** Sends the endpoint's request; an object it creates is deleted after the file. */
  call(client: ApiClient, e: Endpoint, d: EndpointData, opts?: CallOptions): Promise<Exchange>;
  /**
   * Calls each endpoint that the data can fill (refusals: the shared objects keep their state when
   * it is refused), at most `inFlight` at once (default 1: in turn); the replies in the table's order.
   */
  callEach(
    client: ApiClient,
    d: EndpointData,
    opts?: CallOptions,
    endpoints?: readonly Endpoint[],
    inFlight?: number,
  ): Promise<Array<{ endpoint: Endpoint; ex: Exchange }>>;
  /** Calls each endpoint as the Admin on its subject, meant to succeed; an entry without subject is skipped with the reason. */
  succeedEach(endpoints?: readonly Endpoint[], opts?: CallOptions): Promise<EndpointCall[]>;
}

// Objects created by calls to the table (not through s.fixtures) are handed to the fixtures,
// whose cleanup deletes them after the file (in CLEANUP_ORDER) and reports them.
export function useEndpoints(s: Session): EndpointCalls {
  return new EndpointSession(s);
}

/** An entry that names no object and changes none: it needs nothing made (the generator, version). */
const light = (e: Endpoint) => kindsOf(e).length === 0 && !e.fresh && !e.before;

/** The endpoint table bound to one file's session: the objects it made and the kinds it cannot make. */
class EndpointSession implements EndpointCalls {
  readonly #s: Session;
  #data: Promise<EndpointData> | undefined;
  /** the shared objects of the file (made on first use) */
  #shared: EndpointData | undefined;
  /** data for entries that name no object */
  #light: EndpointData | undefined;
  readonly #unavailable = new Map<IdKind, string>();
  /** Creations whose id did not show the run's name (never used as the file's objects). */
  readonly #foreign = new WeakSet<Exchange>();

  constructor(s: Session) {
    this.#s = s;
  }

  #base(): EndpointData {
    const s = this.#s;
    return {
      ids: {},
      passwordName: '',
      search: s.fixtures.name('search').replace(/-search-\d+$/, ''),
      name: (l) => s.fixtures.name(l),
      secret: (user) => {
        const value = `${randomBytes(12).toString('base64url')}-Pm6!`;
        registerCredentials(user, value, `password of ${user}`);
        return value;
      },
    };
  }

  async call(client: ApiClient, e: Endpoint, d: EndpointData, opts: CallOptions = {}): Promise<Exchange> {
    const body = e.body?.(d);
    const headers = { ...(e.headers ?? {}), ...(opts.headers ?? {}) };
    const ex = await client.request({
      method: opts.method ?? e.method,
      path: pathOf(e, d),
      ...(body ? { json: body } : {}),
      ...(opts.contentType !== undefined ? { contentType: opts.contentType } : {}),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
    });
    if (isSuccess(ex) && opts.method === undefined) await this.#track(e, d, body, ex, client, opts.readBack ?? false);
    return ex;
  }

  /**
   * Keeps the fixtures' list of what the run made up to date with a successful create or delete.
   * A creation is the run's once read back (suites/harness/ownership.ts): by the client that
   * made it (only their owner sees personal passwords), else by the Admin.
   */
  async #track(e: Endpoint, d: EndpointData, body: Record<string, unknown> | undefined, ex: Exchange, client: ApiClient, readBack: boolean): Promise<void> {
    const id = (ex.json as { id?: unknown } | undefined)?.id;
    if (e.creates && (typeof id === 'number' || typeof id === 'string')) {
      const name = body?.['username'] ?? body?.['name'] ?? body?.['file_name'];
      const owned = await this.#s.fixtures.track(e.creates, id, typeof name === 'string' ? name : '(unnamed)', {
        creation: ex,
        reader: client,
        lazy: !readBack,
      });
      if (!owned) this.#foreign.add(ex);
    }
    if (e.deletes) {
      const gone = d.ids[e.deletes];
      if (gone !== undefined) this.#s.fixtures.forget(e.deletes, gone);
    }
  }

  /**
   * A new object through the table's creating entry, or undefined with the reason kept in
   * `unavailable`. Decision: the path and payload are the product's, not the spec's, so a target
   * that does not serve them or refuses the payload leaves the entries that need the kind
   * unsent (reported by the checks that need them), never a failed setup of the whole file.
   */
  async #viaTable(kind: IdKind, d: EndpointData, lazy = false): Promise<number | undefined> {
    const creator = CREATORS[kind];
    if (!creator) throw new Error(`endpoint table: no entry creates a ${kind}`);
    const ex = await this.call(this.#s.admin, creator, d, { readBack: !lazy });
    const id = (ex.json as { id?: unknown } | undefined)?.id;
    if (this.#foreign.has(ex)) {
      this.#unavailable.set(kind, `${label(creator)} answered with id ${String(id)}, which does not show the run's name (never written to)`);
      return undefined;
    }
    if (isSuccess(ex) && typeof id === 'number') return id;
    if (isSuccess(ex) && typeof id === 'string' && /^\d+$/.test(id)) return Number(id);
    this.#unavailable.set(kind, `${label(creator)} answered ${ex.response?.status ?? ex.error}${isSuccess(ex) ? ' without an integer id' : ''}`);
    return undefined;
  }

  /**
   * `lazy`: an item that only fills a list (grow) is read back only when needed (Ledger.expect;
   * a list read that shows its name makes it the run's), not at once.
   */
  async make(kind: IdKind, d: EndpointData, opts: { lazy?: boolean } = {}): Promise<number | undefined> {
    switch (kind) {
      case 'project':
        return this.#s.fixtures.createProject();
      case 'password':
        if (d.ids.project === undefined) throw new Error('endpoint table: a password needs a project');
        return this.#s.fixtures.createPassword(d.ids.project);
      default:
        if (this.#unavailable.has(kind)) return undefined;
        return this.#viaTable(kind, d, opts.lazy);
    }
  }

  /** Sends the steps; a failure is the reason the object cannot get into the state the entry needs. */
  async #runSteps(steps: readonly Step[], d: EndpointData, forWhat: string): Promise<string | undefined> {
    for (const step of steps) {
      const ex = await this.#s.admin.request({ method: step.method, path: fillPath(step.path, d), ...(step.body ? { json: step.body(d) } : {}) });
      if (!isSuccess(ex))
        return `${step.method} ${step.path}, which puts the object into the state ${forWhat} needs, answered ${ex.response?.status ?? ex.error}`;
    }
    return undefined;
  }

  /**
   * Makes the shared objects of these kinds on first use, in turn: a file that needs no user
   * makes none. Decision: not side by side; the file is uploaded to the shared password, whose
   * id the run must have verified as its own first (a target that answers a creation with the id
   * of an object it already held gets no write to that object: suites/harness/ownership.ts).
   */
  async #ensure(d: EndpointData, kinds: readonly IdKind[]): Promise<void> {
    if (d !== this.#shared) return;
    for (const kind of new Set(kinds)) {
      if (d.ids[kind] !== undefined || this.#unavailable.has(kind)) continue;
      const id = await this.make(kind, d);
      if (id !== undefined) d.ids[kind] = id;
    }
  }

  async data(endpoints?: readonly Endpoint[]): Promise<EndpointData> {
    this.#data ??= this.#makeShared();
    const d = await this.#data;
    await this.#ensure(
      d,
      (endpoints ?? []).flatMap((e) => kindsOf(e)),
    );
    return d;
  }

  async #makeShared(): Promise<EndpointData> {
    const fixtures = this.#s.fixtures;
    const d = this.#base();
    const [project, target] = await inOrder([0, 1], inFlight(this.#s.config), () => fixtures.createProject());
    d.ids.project = project!;
    d.targetProjectId = target!;
    d.passwordName = fixtures.name(NON_ASCII_LABEL);
    d.ids.password = await fixtures.createPassword(d.ids.project, { name: d.passwordName });
    this.#shared = d;
    return d;
  }

  unavailable(): ReadonlyMap<IdKind, string> {
    return this.#unavailable;
  }

  async subject(e: Endpoint): Promise<EndpointData | string> {
    const d = await this.#made(e);
    return typeof d === 'string' || !e.before ? d : ((await this.#runSteps(e.before, d, label(e))) ?? d);
  }

  /** An entry's objects (subject), made but not yet prepared by its `before` steps. */
  async #made(e: Endpoint): Promise<EndpointData | string> {
    // An entry that names no object and changes none needs nothing made (the generator, version).
    if (light(e)) return (this.#light ??= this.#base());
    const d0 = await this.data();
    await this.#ensure(
      d0,
      kindsOf(e).filter((k) => !e.fresh?.includes(k)),
    );
    if (!e.fresh && !e.before) return missing(e, d0) ?? d0;
    const d: EndpointData = { ...d0, ids: { ...d0.ids } };
    for (const kind of e.fresh ?? []) {
      const id = await this.make(kind, d);
      if (id === undefined) return this.#unavailable.get(kind) ?? `no ${kind}`;
      d.ids[kind] = id;
    }
    return missing(e, d) ?? d;
  }

  async subjects(entries: ReadonlyArray<Endpoint | string>): Promise<Array<EndpointData | string>> {
    // The shared objects are made once, in turn; then each entry's own objects side by side.
    const named = entries.filter((e): e is Endpoint => typeof e !== 'string' && !light(e));
    const d0 = named.length > 0 ? await this.data() : undefined;
    if (d0)
      await this.#ensure(
        d0,
        named.flatMap((e) => kindsOf(e).filter((k) => !e.fresh?.includes(k))),
      );
    const run = (fn: (e: Endpoint, i: number) => Promise<EndpointData | string>) =>
      inOrder([...entries.keys()], inFlight(this.#s.config), (i) => {
        const e = entries[i]!;
        return typeof e === 'string' ? Promise.resolve(e) : fn(e, i);
      });
    const made = await run((e) => this.#made(e));
    // Decision (issue 26's request budget): the creations are settled together, so the ledger reads
    // them back with one list read a kind (Pending.bulk), not one show before each first write.
    await this.#s.fixtures.settle();
    // Then the `before` steps, which touch no other entry's objects, side by side.
    return run(async (e, i) => {
      const m = made[i]!;
      return typeof m === 'string' || !e.before ? m : ((await this.#runSteps(e.before, m, label(e))) ?? m);
    });
  }

  async grow(e: Endpoint, n: number): Promise<string | undefined> {
    if (!e.grow) return 'the run cannot add items to this list';
    const d0 = await this.data();
    const grow = e.grow;
    // The items are independent of each other: --concurrency at once; the first reason in order.
    const reasons = await inOrder([...Array(n).keys()], inFlight(this.#s.config), async () => {
      const d: EndpointData = { ...d0, ids: { ...d0.ids } };
      const id = await this.make(grow.kind, d, { lazy: true });
      if (id === undefined) return this.#unavailable.get(grow.kind) ?? `no ${grow.kind}`;
      d.ids[grow.kind] = id;
      return this.#runSteps(grow.steps ?? [], d, label(e));
    });
    return reasons.find((r) => r !== undefined);
  }

  async callEach(
    client: ApiClient,
    d: EndpointData,
    opts: CallOptions = {},
    endpoints: readonly Endpoint[] = TABLE,
    inFlight = 1,
  ): Promise<Array<{ endpoint: Endpoint; ex: Exchange }>> {
    const sendable: Endpoint[] = [];
    for (const endpoint of endpoints) {
      await this.#ensure(d, kindsOf(endpoint));
      if (missing(endpoint, d) || (endpoint.control && !this.#s.control)) continue;
      sendable.push(endpoint);
    }
    return inOrder(sendable, inFlight, async (endpoint) => ({ endpoint, ex: await this.call(client, endpoint, d, opts) }));
  }

  async succeedEach(endpoints: readonly Endpoint[] = TABLE, opts: CallOptions = {}): Promise<EndpointCall[]> {
    const sendable = (e: Endpoint) => !e.control || this.#s.control !== undefined;
    const subjects = await this.subjects(endpoints.map((e) => (sendable(e) ? e : 'needs the control protocol')));
    // The calls in the table's order, one after another, as when each subject was made just before its call.
    const out: EndpointCall[] = [];
    for (const [i, endpoint] of endpoints.entries()) {
      const d = subjects[i]!;
      if (typeof d === 'string') out.push({ endpoint, skipped: d });
      else out.push({ endpoint, ex: await this.call(this.#s.admin, endpoint, d, opts) });
    }
    return out;
  }
}

/** The calls that were sent. */
export function sent(calls: readonly EndpointCall[]): Array<{ endpoint: Endpoint; ex: Exchange }> {
  return calls.filter((o): o is { endpoint: Endpoint; ex: Exchange } => 'ex' in o);
}

/** Data that names only guessed ids (UNKNOWN_ID): for GETs that must be refused, never for writes. */
export function guessedData(): EndpointData {
  return {
    ids: Object.fromEntries(ID_KINDS.map((k) => [k, UNKNOWN_ID])),
    passwordName: '',
    search: 'pmv6-nothing-matches-this',
    name: (l) => `pmv6-guessed-${l}`,
    secret: () => 'unused',
  };
}

export interface Reply {
  /** What was sent, e.g. "no credentials: GET /passwords.json". */
  what: string;
  ex: Exchange;
}

/**
 * Replies of many kinds, none needing the control protocol: every endpoint of the table as the
 * Admin (on objects the run made for it), without credentials and without Content-Type; a wrong
 * password; unknown ids; a page above the last; an unknown path; a path without .json; a method
 * other than the four.
 */
export async function variedReplies(s: Session, calls: EndpointCalls, d: EndpointData): Promise<Reply[]> {
  const replies: Reply[] = [];
  const add = (what: string, list: Array<{ endpoint: Endpoint; ex: Exchange }>) => {
    for (const { endpoint, ex } of list) replies.push({ what: `${what}: ${label(endpoint)}`, ex });
  };
  add('Admin', sent(await calls.succeedEach()));
  // Refusals and reads: sent side by side (--concurrency), replies kept in the table's order.
  const n = inFlight(s.config);
  add('no credentials', await calls.callEach(s.anonymous, d, {}, TABLE, n));
  add('Admin without Content-Type', await calls.callEach(s.admin, d, { contentType: null }, TABLE, n));
  const wrong = s.admin.withAuth({ kind: 'basic', user: s.config.user, password: `${s.config.password}-wrong` });
  // §4's GETs only: a wrong password costs the server a full password check each time.
  add(
    'wrong password',
    await calls.callEach(
      wrong,
      d,
      {},
      ENDPOINTS.filter((e) => e.method === 'GET' && kindsOf(e).length === 0),
      n,
    ),
  );
  const unknown: EndpointData = { ...d, ids: guessedData().ids };
  // Decision: only GETs of the guessed ids: on a real installation such an id may exist, and the
  // run never changes or deletes an object it did not create.
  add(
    'unknown id',
    await calls.callEach(
      s.admin,
      unknown,
      {},
      TABLE.filter((e) => e.method === 'GET' && kindsOf(e).length > 0),
      n,
    ),
  );
  const extra: Array<[string, Exchange]> = [
    ['page above the last: GET /passwords/page/99999999.json', await s.admin.get('/passwords/page/99999999.json')],
    ['unknown path: GET /pmv6-unknown.json', await s.admin.get('/pmv6-unknown.json')],
    ['path without .json: GET /passwords', await s.admin.get('/passwords')],
    ['method other than the four: PATCH /passwords.json', await s.admin.request({ method: 'PATCH', path: '/passwords.json', json: {} })],
  ];
  for (const [what, ex] of extra) replies.push({ what, ex });
  return replies;
}

/** One entry's method and path as a pattern over a request's path relative to /index.php/api/v6 (ids any digits, a search any text). */
function entryPattern(e: Pick<Endpoint, 'method' | 'path'>): RegExp {
  const body = e.path
    .split(PLACEHOLDER)
    .map((part, i) => (i % 2 === 1 ? (part === 'search' ? '[^/]+' : '\\d+') : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`);
}

/**
 * Which operations of §1's table a run sent, from its requests (method and path relative to
 * /index.php/api/v6, with or without a query). Decision: an operation is sent when every entry of
 * the table that performs it was sent at least once, whatever the answer: "archive/unarchive" is
 * both halves, "list files" both the project's and the password's, "list favorite passwords and
 * projects" both lists.
 */
export function operationsSent(requests: Iterable<{ method: string; path: string }>): { sent: Op[]; missing: Array<{ op: Op; unsent: string[] }> } {
  const entries = TABLE.filter((e) => e.ops !== undefined).map((e) => ({ e, re: entryPattern(e), hit: false }));
  for (const r of requests) {
    const path = r.path.split('?')[0] ?? '';
    for (const x of entries) if (!x.hit && x.e.method === r.method && x.re.test(path)) x.hit = true;
  }
  const sent: Op[] = [];
  const missing: Array<{ op: Op; unsent: string[] }> = [];
  for (const resource of RESOURCES) {
    for (const name of OPERATIONS[resource]) {
      const op: Op = `${resource}: ${name}`;
      const of = entries.filter((x) => x.e.ops!.includes(op));
      const unsent = of.filter((x) => !x.hit).map((x) => label(x.e));
      if (of.length > 0 && unsent.length === 0) sent.push(op);
      else missing.push({ op, unsent: of.length === 0 ? ['no entry of the endpoint table performs it'] : unsent });
    }
  }
  return { sent, missing };
}
