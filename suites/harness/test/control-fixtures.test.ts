import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { scrub } from '../../../core/redact.ts';
import { SetupError } from '../assert.ts';
import { withSettingsSnapshot } from '../checks.ts';
import { ApiClient } from '../client.ts';
import type { RunConfig } from '../config.ts';
import { ControlClient } from '../control.ts';
import { type FixtureKind, Fixtures } from '../fixtures.ts';
import type { Session } from '../session.ts';
import { type Received, type Stub, sendJson, startStub } from './stub-server.ts';

const TOKEN = 'control-token-0123456789abcdef';
const settings = { api_enabled: true, maintenance_mode: false, auth_methods: 'basic+hmac', api_users: 'all', hmac_key_expiry_days: null, num_items_lists: 20 };

let stub: Stub;
let nextId = 100;
const failNext = new Set<string>();
const failAlways = new Set<string>();
/** What GET <kind>s/ID.json shows: the read-back that makes an id the run's (suites/harness/ownership.ts). */
const names = new Map<string, string>();

function route(req: Received, res: Parameters<Parameters<typeof startStub>[0]>[1]): void {
  const key = `${req.method} ${req.url}`;
  if (failNext.delete(key) || failAlways.has(key)) {
    sendJson(res, 500, { error: true, type: 'Internal Server Error', message: 'boom' });
    return;
  }
  if (req.url.startsWith('/__control')) {
    if (req.headers['authorization'] !== `Bearer ${TOKEN}`) {
      sendJson(res, 401, { error: true, type: 'Unauthorized', message: 'bad token' });
      return;
    }
    const body = req.body.length ? (JSON.parse(req.body.toString('utf8')) as Record<string, unknown>) : {};
    switch (key) {
      case 'GET /__control/settings':
        sendJson(res, 200, settings);
        return;
      case 'PUT /__control/settings':
        sendJson(res, 200, { ...settings, ...body });
        return;
      case 'POST /__control/users':
        names.set(`users/${nextId}`, String(body['username']));
        sendJson(res, 201, { id: nextId++, username: body['username'], public_key: 'a'.repeat(64), private_key: `${'b'.repeat(60)}${nextId}` });
        return;
      case 'POST /__control/faults':
      case 'POST /__control/reset':
        sendJson(res, 204, undefined);
        return;
      default:
        if (/^POST \/__control\/users\/\d+\/api_keys$/.test(key)) {
          sendJson(res, 201, { public_key: 'c'.repeat(64), private_key: 'd'.repeat(64) });
          return;
        }
        sendJson(res, 404, { error: true, type: 'Not Found', message: key });
        return;
    }
  }
  const created = /\/(projects|passwords)\.json$/.exec(req.url);
  if (req.method === 'POST' && created) {
    names.set(`${created[1]}/${nextId}`, String((JSON.parse(req.body.toString('utf8')) as { name?: unknown }).name));
    sendJson(res, 201, { id: nextId++ });
    return;
  }
  const shown = /^\/index\.php\/api\/v6\/(\w+)\/(\d+)\.json$/.exec(req.url);
  if (req.method === 'GET' && shown && names.has(`${shown[1]}/${shown[2]}`)) {
    const name = names.get(`${shown[1]}/${shown[2]}`);
    sendJson(res, 200, { id: Number(shown[2]), ...(shown[1] === 'users' ? { username: name } : { name }) });
    return;
  }
  if (req.method === 'DELETE') {
    sendJson(res, req.url.endsWith('/404.json') ? 404 : 204, undefined);
    return;
  }
  sendJson(res, 404, { error: true, type: 'Not Found', message: 'no route' });
}

let admin: ApiClient;
let control: ControlClient;
const cfg = (over: Partial<RunConfig> = {}): RunConfig => ({
  target: stub.url,
  user: 'admin',
  password: 'admin-password',
  runId: 'r1',
  seed: 42,
  readOnly: false,
  timeoutMs: 2000,
  ...over,
});

beforeAll(async () => {
  stub = await startStub(route);
  admin = new ApiClient({ target: stub.url, auth: { kind: 'basic', user: 'admin', password: 'admin-password' }, timeoutMs: 2000 });
  control = new ControlClient({ url: `${stub.url}/__control`, token: TOKEN, timeoutMs: 2000 });
});

afterAll(async () => {
  await control.close();
  await admin.close();
  await stub.close();
});

/** The last request but the read-backs (GET) that follow every creation. */
const lastWrite = (): Received | undefined => stub.received.filter((r) => r.method !== 'GET').at(-1);

function bodyOf(r: Received | undefined): unknown {
  return r?.body.length ? JSON.parse(r.body.toString('utf8')) : undefined;
}

const tagOf = (f: Fixtures): string => (f as unknown as { tag: string }).tag;

describe('ControlClient', () => {
  test('settings, users, keys, faults, reset: paths, bodies and bearer token', async () => {
    expect(await control.getSettings()).toEqual(settings);
    expect((await control.putSettings({ maintenance_mode: true })).maintenance_mode).toBe(true);
    expect(bodyOf(stub.received.at(-1))).toEqual({ maintenance_mode: true });

    const user = await control.createUser({ username: 'u1', password: 'user-one-password', role: 'normal user' });
    expect(user.username).toBe('u1');
    expect(bodyOf(stub.received.at(-1))).toEqual({ username: 'u1', password: 'user-one-password', role: 'normal user', api_only: false, active: true });

    expect(await control.issueApiKeys(user.id, 400)).toEqual({ public_key: 'c'.repeat(64), private_key: 'd'.repeat(64) });
    expect(stub.received.at(-1)?.url).toBe(`/__control/users/${user.id}/api_keys`);
    expect(bodyOf(stub.received.at(-1))).toEqual({ issued_days_ago: 400 });

    await control.addFault({ method: 'GET', path: '/passwords.json' });
    expect(bodyOf(stub.received.at(-1))).toEqual({ times: 1, method: 'GET', path: '/passwords.json' });
    await control.reset();
    expect(stub.received.at(-1)?.url).toBe('/__control/reset');
    expect(stub.received.at(-1)?.headers['authorization']).toBe(`Bearer ${TOKEN}`);
  });

  test('withSettingsSnapshot resets after a fault, not again after a reset of its own that followed the fault; the snapshot is put back in both', async () => {
    const session = { control, fixtures: { settle: async () => {} } } as unknown as Session;
    const writes = () => stub.received.filter((r) => r.url.startsWith('/__control') && r.method !== 'GET').map((r) => `${r.method} ${r.url}`);
    const before = writes().length;
    await withSettingsSnapshot(session, (c) => c.addFault({ method: 'GET', path: '/passwords.json' }));
    expect(writes().slice(before)).toEqual(['POST /__control/faults', 'POST /__control/reset', 'PUT /__control/settings']);
    expect(bodyOf(stub.received.at(-1))).toEqual(settings);
    const next = writes().length;
    await withSettingsSnapshot(session, async (c) => {
      await c.addFault({ method: 'GET', path: '/passwords.json' });
      await c.reset();
      await c.putSettings({ api_enabled: false });
    });
    expect(writes().slice(next)).toEqual(['POST /__control/faults', 'POST /__control/reset', 'PUT /__control/settings', 'PUT /__control/settings']);
    expect(bodyOf(stub.received.at(-1))).toEqual(settings);
    // A reset that failed may have dropped nothing: the next one is sent.
    const failed = writes().length;
    failNext.add('POST /__control/reset');
    await withSettingsSnapshot(session, async (c) => {
      await c.addFault({ method: 'GET', path: '/passwords.json' });
      await c.reset().catch(() => {});
    });
    expect(writes().slice(failed)).toEqual(['POST /__control/faults', 'POST /__control/reset', 'POST /__control/reset', 'PUT /__control/settings']);
  });

  test('returned secrets, passwords and the token are registered for redaction', () => {
    expect(scrub(`${TOKEN} user-one-password ${'d'.repeat(64)}`)).toBe('«redacted:control token» «redacted:password of u1» «redacted:private key of user 100»');
  });

  test('an unexpected status is a SetupError with the redacted exchange', async () => {
    const wrong = new ControlClient({ url: `${stub.url}/__control`, token: 'wrong-token-abcdef' });
    const error = await wrong.getSettings().catch((e: unknown) => e);
    await wrong.close();
    expect(error).toBeInstanceOf(SetupError);
    expect((error as SetupError).message).toMatch(/^control GET \/settings: expected status 200, got 401/);
    expect((error as SetupError).message).not.toContain('wrong-token-abcdef');
    expect((error as SetupError).exchange?.request.headers['Authorization']).toBe('Bearer «redacted»');
  });

  test('a transport error is a SetupError', async () => {
    const dead = new ControlClient({ url: 'http://127.0.0.1:1/__control', token: TOKEN, timeoutMs: 500 });
    await expect(dead.reset()).rejects.toThrow(/control POST \/reset: no response/);
    await dead.close();
  });
});

describe('Fixtures', () => {
  test('labelled names, counted per instance', () => {
    const f = new Fixtures(cfg(), admin);
    expect([f.name('project'), f.name('password'), f.name('project')]).toEqual([
      `pmv6-r1-${tagOf(f)}-project-1`,
      `pmv6-r1-${tagOf(f)}-password-2`,
      `pmv6-r1-${tagOf(f)}-project-3`,
    ]);
  });

  test('faker is seeded from the run seed', () => {
    const a = new Fixtures(cfg(), admin).faker.internet.email();
    const b = new Fixtures(cfg(), admin).faker.internet.email();
    const c = new Fixtures(cfg({ seed: 43 }), admin).faker.internet.email();
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });

  test('create through the v6 API, then clean up passwords before projects', async () => {
    const f = new Fixtures(cfg(), admin, control);
    const project = await f.createProject();
    expect(lastWrite()?.url).toBe('/index.php/api/v6/projects.json');
    // Read back lazily (suites/harness/ownership.ts): not yet, nothing was written to it.
    expect(stub.received.at(-1)?.url).toBe('/index.php/api/v6/projects.json');
    expect(bodyOf(lastWrite())).toEqual({ name: `pmv6-r1-${tagOf(f)}-project-1`, parent_id: 0 });

    const password = await f.createPassword(project, { tags: 'a,b' });
    const sent = bodyOf(lastWrite()) as Record<string, unknown>;
    expect(sent).toMatchObject({ name: `pmv6-r1-${tagOf(f)}-password-2`, project_id: project, tags: 'a,b' });
    expect(sent['email']).toMatch(/@/);
    expect(sent['access_info']).toMatch(/^https?:\/\//);
    expect(typeof sent['username']).toBe('string');
    expect(typeof sent['password']).toBe('string');

    const user = await f.createUser('project manager');
    expect(user.username).toBe(`pmv6-r1-${tagOf(f)}-project-manager-3`);
    await user.client.get('/version.json');
    expect(stub.received.at(-1)?.headers['authorization']).toBe(`Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`);
    await user.hmacClient.get('/version.json');
    expect(stub.received.at(-1)?.headers['x-public-key']).toBe(user.publicKey);
    expect(scrub(user.password)).toMatch(/«redacted:/);

    const report = await f.cleanup();
    expect(stub.received.slice(-3).map((r) => `${r.method} ${r.url}`)).toEqual([
      `DELETE /index.php/api/v6/passwords/${password}.json`,
      `DELETE /index.php/api/v6/projects/${project}.json`,
      `DELETE /index.php/api/v6/users/${user.id}.json`,
    ]);
    expect(report.deleted).toEqual([
      { kind: 'password', id: password, name: `pmv6-r1-${tagOf(f)}-password-2` },
      { kind: 'project', id: project, name: `pmv6-r1-${tagOf(f)}-project-1` },
      { kind: 'user', id: user.id, name: user.username },
    ]);
    expect(report.leftovers).toEqual([]);
    expect(await f.cleanup()).toEqual({ deleted: [], leftovers: [] });
  });

  test('a failed create is a SetupError; a failed delete is a leftover, not an exception', async () => {
    const f = new Fixtures(cfg(), admin);
    failNext.add('POST /index.php/api/v6/projects.json');
    await expect(f.createProject()).rejects.toThrow(SetupError);
    const project = await f.createProject();
    const path = `DELETE /index.php/api/v6/projects/${project}.json`;
    failAlways.add(path);
    try {
      const report = await f.cleanup();
      expect(report.deleted).toEqual([]);
      expect(report.leftovers).toEqual([{ kind: 'project', id: project, name: `pmv6-r1-${tagOf(f)}-project-2`, reason: 'DELETE answered 500' }]);
      // A refused project is asked once more, after the others.
      expect(stub.received.filter((r) => `${r.method} ${r.url}` === path)).toHaveLength(2);
    } finally {
      failAlways.delete(path);
    }
  });

  test('projects are deleted side by side; one refused while its subproject existed is asked again after the others', async () => {
    const f = new Fixtures(cfg(), admin);
    const parent = await f.createProject();
    const child = await f.createProject(admin, { parent_id: parent });
    const parentPath = `DELETE /index.php/api/v6/projects/${parent}.json`;
    failNext.add(parentPath);
    const from = stub.received.length;
    const report = await f.cleanup();
    expect(report.leftovers).toEqual([]);
    expect(report.deleted.map((d) => d.id).sort()).toEqual([parent, child].sort());
    const deletes = stub.received
      .slice(from)
      .map((r) => `${r.method} ${r.url}`)
      .filter((l) => l.startsWith('DELETE'));
    expect(deletes.filter((l) => l === parentPath)).toHaveLength(2);
    expect(deletes.filter((l) => l === `DELETE /index.php/api/v6/projects/${child}.json`)).toHaveLength(1);
    expect(deletes.at(-1)).toBe(parentPath);
  });

  test('a user the target will not delete (404/405 on DELETE users/ID.json) is a leftover with a reason', async () => {
    const f = new Fixtures(cfg(), admin, control);
    names.set('users/404', 'pmv6-r1-user-x');
    expect(await f.track('user', 404, 'pmv6-r1-user-x')).toBe(true);
    const report = await f.cleanup();
    expect(report.deleted).toEqual([]);
    expect(report.leftovers).toEqual([{ kind: 'user', id: 404, name: 'pmv6-r1-user-x', reason: expect.stringMatching(/answered 404/) }]);
  });

  test('tracked objects of every kind are deleted files first, users last; a forgotten one is reported without a DELETE', async () => {
    const f = new Fixtures(cfg(), admin, control);
    const made: Array<[FixtureKind, number, string]> = [
      ['user', 201, 'pmv6-r1-u'],
      ['group', 202, 'pmv6-r1-g'],
      ['project', 203, 'pmv6-r1-p'],
      ['my_password', 204, 'pmv6-r1-m'],
      ['password', 205, 'pmv6-r1-pw'],
      ['file', 206, 'pmv6-r1-f.txt'],
      ['group', 207, 'pmv6-r1-gone'],
    ];
    for (const [kind, id, name] of made) {
      names.set(`${kind}s/${id}`, name);
      expect(await f.track(kind, id, name)).toBe(true);
    }
    f.forget('group', 207);
    const from = stub.received.length;
    const report = await f.cleanup();
    const sent = stub.received.slice(from);
    expect(sent.map((r) => `${r.method} ${r.url}`)).toEqual([
      'DELETE /index.php/api/v6/files/206.json',
      'DELETE /index.php/api/v6/passwords/205.json',
      'DELETE /index.php/api/v6/my_passwords/204.json',
      'DELETE /index.php/api/v6/projects/203.json',
      'DELETE /index.php/api/v6/groups/202.json',
      'DELETE /index.php/api/v6/users/201.json',
    ]);
    // A locked password can only be deleted with a reason.
    expect(sent[1]?.headers['x-unlock-reason']).toMatch(/pmv6/);
    expect(sent[0]?.headers['x-unlock-reason']).toBeUndefined();
    expect(report.leftovers).toEqual([]);
    expect(report.deleted.map((d) => d.id).sort()).toEqual([201, 202, 203, 204, 205, 206, 207]);
  });

  test('createUser without control, and any create in a read-only run, are SetupErrors', async () => {
    await expect(new Fixtures(cfg(), admin).createUser('admin')).rejects.toThrow(/needs the control protocol/);
    const readOnly = new Fixtures(cfg({ readOnly: true }), admin, control);
    await expect(readOnly.createProject()).rejects.toThrow(/read-only run/);
    await expect(readOnly.createPassword(1)).rejects.toThrow(SetupError);
  });
});
