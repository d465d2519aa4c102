import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { CLAUSES, normalise } from '../../catalogue/clauses.ts';
import {
  CREATORS,
  ENDPOINTS,
  type EndpointData,
  entriesOf,
  fillPath,
  ID_KINDS,
  kindsOf,
  label,
  listBase,
  missing,
  OPERATIONS,
  operationsSent,
  PAGINATED,
  RESOURCES,
  TABLE,
  WRITING,
} from '../endpoints.ts';

// The endpoint table (suites/harness/endpoints.ts) against the spec: every operation of §1's
// table is performed by an entry, §4's rows are the spec entries, and every write acts only on
// objects the run makes for it.

const spec = normalise(readFileSync(fileURLToPath(new URL('../../catalogue/spec/password-manager-api-v6.md', import.meta.url)), 'utf8'));

const data = (ids: EndpointData['ids'] = {}): EndpointData => ({
  ids,
  targetProjectId: 9,
  passwordName: 'x',
  search: 'pmv6-r1-ab cd',
  name: (l) => `pmv6-r1-ab-${l}-1`,
  secret: () => 'secret-value',
});

describe('the endpoint table', () => {
  test("OPERATIONS are the rows of §1's table, word for word", () => {
    for (const resource of RESOURCES) expect(spec, resource).toContain(`| ${resource} | ${OPERATIONS[resource].join(', ')} |`);
  });

  test('every operation of §1 is performed by an entry, and every entry names operations of §1', () => {
    for (const resource of RESOURCES) {
      for (const op of OPERATIONS[resource])
        expect(
          TABLE.some((e) => e.ops?.includes(`${resource}: ${op}`)),
          `${resource}: ${op}`,
        ).toBe(true);
      expect(entriesOf(resource).length, resource).toBeGreaterThan(0);
    }
    for (const e of TABLE) {
      for (const op of e.ops ?? []) {
        const [resource, name] = op.split(/: (.*)/s) as [string, string];
        expect(OPERATIONS[resource as (typeof RESOURCES)[number]] ?? [], `${label(e)}: ${op}`).toContain(name);
      }
    }
  });

  test('each OPS clause quotes the row its resource file checks', () => {
    // The INFO clause of a row is its resource file's; a row may carry a second clause, the
    // effects of its operations at SHOULD (issue 35, suites/model/), quoting the same row.
    const rows = RESOURCES.filter((r) => r !== 'Version' && r !== 'Log').map((r) => `${r} | ${OPERATIONS[r].join(', ')}`);
    const ops = CLAUSES.filter((c) => c.area === 'OPS');
    expect(ops.filter((c) => c.level === 'INFO').map((c) => c.quote)).toEqual(rows);
    for (const c of ops.filter((x) => x.level !== 'INFO')) expect(rows, c.id).toContain(c.quote);
  });

  test('operationsSent counts an operation when every entry performing it was sent, and names the entries missing', () => {
    const all = TABLE.filter((e) => e.ops).map((e) => ({
      method: e.method,
      path: fillPath(e.path, data({ project: 1, password: 2, my_password: 3, file: 4, user: 5, group: 6 })),
    }));
    expect(operationsSent(all).missing).toEqual([]);
    expect(operationsSent(all).sent.length).toBe(RESOURCES.reduce((n, r) => n + OPERATIONS[r].length, 0));
    const noUnarchive = all.filter((r) => !(r.method === 'PUT' && r.path.endsWith('/unarchive.json') && r.path.startsWith('/projects/')));
    expect(operationsSent(noUnarchive).missing).toEqual([{ op: 'Projects: archive/unarchive', unsent: ['PUT /projects/{project}/unarchive.json'] }]);
    // A query does not hide a request; another method or a longer path is not the entry.
    expect(operationsSent([{ method: 'GET', path: '/log.json?x=1' }]).sent).not.toContain('Log: query the log');
    expect(
      operationsSent([
        { method: 'GET', path: '/log.json?x=1' },
        { method: 'GET', path: '/log/search/a%20b.json' },
      ]).sent,
    ).toContain('Log: query the log');
    expect(
      operationsSent([
        { method: 'POST', path: '/version.json' },
        { method: 'GET', path: '/version/check_latest.json/x' },
      ]).sent,
    ).toEqual([]);
  });

  test("the spec entries are the rows of §4's endpoint table", () => {
    for (const e of ENDPOINTS) {
      const row = `| ${e.method} | ${e.path.replace('{password}', '<password_id>').replace('/page/1.json', '/page/<page>.json')} |`;
      expect(spec, label(e)).toContain(row);
    }
    expect(ENDPOINTS.length).toBe(8);
  });

  test('paths end in .json, name known kinds, and are unique per method', () => {
    const seen = new Set<string>();
    for (const e of TABLE) {
      expect(e.path, label(e)).toMatch(/^\/[a-z_/{}0-9]+\.json$/);
      expect(seen.has(label(e)), label(e)).toBe(false);
      seen.add(label(e));
      for (const k of kindsOf(e)) expect(ID_KINDS).toContain(k);
      const ids = Object.fromEntries(ID_KINDS.map((k, i) => [k, i + 1]));
      expect(fillPath(e.path, data(ids))).not.toMatch(/[{}]/);
    }
    expect(fillPath('/passwords/search/{search}.json', data())).toBe('/passwords/search/pmv6-r1-ab%20cd.json');
  });

  test('an entry whose ids are missing is not sent, with the reason', () => {
    const e = TABLE.find((x) => x.path === '/groups/{group}/add_user/{user}.json')!;
    expect(missing(e, data({ group: 1 }))).toMatch(/no user/);
    expect(missing(e, data({ group: 1, user: 2 }))).toBeUndefined();
    expect(listBase(TABLE.find((x) => x.path === '/projects/{project}/passwords.json')!, data({ project: 4 }))).toBe('/projects/4/passwords');
  });

  test('writes touch only objects the run makes: deletions and state changes get fresh objects, before steps run on them', () => {
    for (const e of WRITING) {
      if (e.deletes) expect(e.fresh, label(e)).toContain(e.deletes);
      for (const step of e.before ?? []) {
        const stepKinds = kindsOf({ path: step.path });
        expect(
          stepKinds.some((k) => e.fresh?.includes(k)),
          `${label(e)} before ${step.path}`,
        ).toBe(true);
      }
      if (/\/(archive|unarchive|lock|unlock|activate|deactivate|convert_to_ldap|convert_to_normal|move)\.json$/.test(e.path))
        expect(e.fresh?.length, label(e)).toBeGreaterThan(0);
    }
  });

  test('a creating entry exists for every kind the fixtures do not make, and lists are GETs that can be counted', () => {
    for (const kind of ['my_password', 'file', 'user', 'group'] as const) expect(CREATORS[kind]?.creates, kind).toBe(kind);
    for (const e of PAGINATED) {
      expect(e.method, label(e)).toBe('GET');
      if (e.grow) expect(ID_KINDS).toContain(e.grow.kind);
    }
    expect(PAGINATED.length).toBeGreaterThanOrEqual(15);
  });

  test('success codes follow the product: 200 for GET, 201 for creations, 204 for PUT and DELETE', () => {
    for (const e of TABLE) {
      const want = e.method === 'GET' ? 200 : e.creates ? 201 : 204;
      expect(e.success, label(e)).toBe(want);
    }
  });
});
