import { createReferenceServer, type ReferenceServer } from '../../../fixtures/reference-server/src/index.ts';
import type { Kind } from './proxy.ts';

// A production-like installation for the hostile cases: the reference server (in this process,
// plain http on loopback) holding objects that existed before any run, read back straight from its
// database, never through the proxy.

export interface Installation {
  server: ReferenceServer;
  url: string;
  user: string;
  password: string;
  token: string;
  /** The admin's HMAC key pair, issued before the run (given to the CLI as PMV6_HMAC_*). */
  hmac: { publicKey: string; privateKey: string };
  /** One pre-existing object of each kind; `bigVictim` is a second project. */
  victims: Record<Kind, number> & { bigVictim: number };
  /** GET {control}/settings, straight from the server. */
  settings(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

const JSON_CT = 'application/json; charset=utf-8';

export async function startInstallation(password: string, token: string): Promise<Installation> {
  const server = await createReferenceServer({ adminUser: 'admin', adminPassword: password, controlToken: token, passwordCost: 1024 });
  const url = await server.listen({ host: '127.0.0.1', port: 0 });
  const basic = `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;
  const call = async (method: string, path: string, body?: unknown, control = false): Promise<{ id?: number; public_key?: string; private_key?: string }> => {
    const res = await fetch(`${url}${control ? '/__control' : '/index.php/api/v6'}${path}`, {
      method,
      headers: { authorization: control ? `Bearer ${token}` : basic, 'content-type': JSON_CT },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`seeding: ${method} ${path} answered ${res.status}: ${text}`);
    return text ? JSON.parse(text) : {};
  };
  const project = (await call('POST', '/projects.json', { name: 'Finance', parent_id: 0, notes: 'pre-existing' })).id!;
  const bigVictim = (await call('POST', '/projects.json', { name: 'Quarterly reports', parent_id: 0 })).id!;
  const pw = (await call('POST', '/passwords.json', { name: 'Bank login', project_id: project, password: 'hunter2-bank' })).id!;
  const file = (await call('POST', `/projects/${project}/upload.json`, { file_name: 'ledger.txt', file_data_base64: Buffer.from('ledger').toString('base64') }))
    .id!;
  const mine = (await call('POST', '/my_passwords.json', { name: 'Home wifi', password: 'wifi-pw-1234' })).id!;
  const user = (await call('POST', '/users', { username: 'alice', password: 'alice-pw-12345', role: 'normal user' }, true)).id!;
  const group = (await call('POST', '/groups.json', { name: 'Accounting' })).id!;
  await call('PUT', `/groups/${group}/add_user/${user}.json`);
  const keys = await call('POST', `/users/${server.adminId}/api_keys`, { issued_days_ago: 0 }, true);
  return {
    server,
    url,
    user: 'admin',
    password,
    token,
    hmac: { publicKey: keys.public_key!, privateKey: keys.private_key! },
    victims: { project, password: pw, file, my_password: mine, user, group, bigVictim },
    async settings() {
      const res = await fetch(`${url}/__control/settings`, { headers: { authorization: `Bearer ${token}` } });
      return (await res.json()) as Record<string, unknown>;
    },
    close: () => server.close(),
  };
}

// The database, table by table. A row "touches" a pre-existing object when it is one (by id) or
// refers to one through a structural reference (a container, a member, a permission, a favorite);
// who created or last changed a row (created_by, updated_by, ...) does not count. The admin is
// pre-existing but every run acts as it: rows that refer to the admin alone do not touch it.
const ENTITIES: Record<string, Kind> = {
  users: 'user',
  projects: 'project',
  passwords: 'password',
  my_passwords: 'my_password',
  groups: 'group',
  files: 'file',
};
const REFERENCES: Record<string, Array<[string, Kind | ((row: Row) => Kind | undefined)]>> = {
  projects: [['parent_id', 'project']],
  passwords: [['project_id', 'project']],
  my_passwords: [['user_id', 'user']],
  files: [['container_id', (r) => (r.container_type === 'project' ? 'project' : 'password')]],
  project_permissions: [
    ['project_id', 'project'],
    ['user_id', 'user'],
  ],
  password_permissions: [
    ['password_id', 'password'],
    ['user_id', 'user'],
  ],
  group_users: [
    ['group_id', 'group'],
    ['user_id', 'user'],
  ],
  project_group_permissions: [
    ['project_id', 'project'],
    ['group_id', 'group'],
  ],
  password_group_permissions: [
    ['password_id', 'password'],
    ['group_id', 'group'],
  ],
  favorites: [
    ['object_id', (r) => (r.kind === 'project' ? 'project' : r.kind === 'password' ? 'password' : 'my_password')],
    ['user_id', 'user'],
  ],
  custom_field_defs: [['password_id', 'password']],
};
/** Columns that change when an object is only used: sign-in stamps, list caches. */
const VOLATILE = /^(last_login|last_api_request|list_.*)$/;

type Row = Record<string, unknown>;
export type Snapshot = Map<string, string[]>;

function rows(server: ReferenceServer, table: string): Row[] {
  const rs = server.store.db.prepare(`SELECT * FROM ${table}`).all() as Row[];
  return rs.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !VOLATILE.test(k))));
}

function ids(server: ReferenceServer): Map<Kind, Set<number>> {
  const out = new Map<Kind, Set<number>>();
  for (const [table, kind] of Object.entries(ENTITIES)) out.set(kind, new Set(rows(server, table).map((r) => Number(r.id))));
  out.get('user')!.delete(server.adminId);
  return out;
}

/** Every row that touches an object in `pre` (every object of the installation before the run). */
function touching(server: ReferenceServer, pre: Map<Kind, Set<number>>): Snapshot {
  const snap: Snapshot = new Map();
  for (const table of [...Object.keys(ENTITIES), ...Object.keys(REFERENCES)].filter((t, i, a) => a.indexOf(t) === i)) {
    const kept = rows(server, table).filter((r) => {
      const own = ENTITIES[table];
      if (own && (pre.get(own)!.has(Number(r.id)) || (own === 'user' && Number(r.id) === server.adminId))) return true;
      return (REFERENCES[table] ?? []).some(([col, k]) => {
        const kind = typeof k === 'function' ? k(r) : k;
        return kind !== undefined && pre.get(kind)!.has(Number(r[col]));
      });
    });
    snap.set(
      table,
      kept.map((r) => JSON.stringify(r)),
    );
  }
  return snap;
}

/** The pre-existing objects, to compare with `changedSince` after the run. */
export function snapshot(server: ReferenceServer): { pre: Map<Kind, Set<number>>; rows: Snapshot } {
  const pre = ids(server);
  return { pre, rows: touching(server, pre) };
}

/** Rows of pre-existing objects gone, changed or added since `before`, as readable lines. */
export function changedSince(server: ReferenceServer, before: { pre: Map<Kind, Set<number>>; rows: Snapshot }): string[] {
  const now = touching(server, before.pre);
  const out: string[] = [];
  for (const [table, was] of before.rows) {
    const is = new Set(now.get(table) ?? []);
    const had = new Set(was);
    for (const r of was) if (!is.has(r)) out.push(`${table}: gone or changed: ${r}`);
    for (const r of is) if (!had.has(r)) out.push(`${table}: new or changed: ${r}`);
  }
  return out;
}

/**
 * Objects of the run the installation holds: every object that did not exist before it (each
 * case has a server of its own), whatever it is named now; files too (a file whose container is
 * gone is gone with it).
 */
export function runObjects(server: ReferenceServer, before: { pre: Map<Kind, Set<number>> }): Array<{ kind: Kind; id: number; name: string }> {
  const out: Array<{ kind: Kind; id: number; name: string }> = [];
  for (const [table, kind] of Object.entries(ENTITIES)) {
    const col = kind === 'user' ? 'username' : 'name';
    const rs = server.store.db.prepare(`SELECT id, ${col} AS name FROM ${table}`).all() as Array<{ id: number; name: string }>;
    for (const r of rs) if (!before.pre.get(kind)!.has(r.id) && !(kind === 'user' && r.id === server.adminId)) out.push({ kind, id: r.id, name: r.name });
  }
  return out;
}
