import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { formatDateTime } from '../../../fixtures/reference-server/src/context.ts';
import type { ReferenceServer } from '../../../fixtures/reference-server/src/index.ts';
import { type EmbeddedTarget, startEmbeddedTarget } from '../../../targets/embedded.ts';
import { ApiClient } from '../../harness/client.ts';
import type { RunConfig } from '../../harness/config.ts';
import { ControlClient } from '../../harness/control.ts';
import { Ledger } from '../../harness/ownership.ts';
import { sendJson, startStub } from '../../harness/test/stub-server.ts';
import { onExchange } from '../../harness/traffic.ts';
import { cleanupText, mergeCleanup, restoreSettings, settingsAlarm, snapshotSettings, sweep } from '../cleanup.ts';

describe('runner cleanup: settings restore and the final sweep', () => {
  let t: EmbeddedTarget;
  let admin: ApiClient;
  let control: ControlClient;
  beforeAll(async () => {
    t = await startEmbeddedTarget({ runId: 'abc123' }, { http: true });
    admin = new ApiClient({ target: t.config.target, auth: { kind: 'basic', user: t.config.user, password: t.config.password } });
    control = new ControlClient({ ...t.config.control! });
  });
  afterAll(async () => {
    await control.close();
    await admin.close();
    await t.close();
  });

  const create = async (path: string, body: Record<string, unknown>): Promise<number> => {
    const ex = await admin.post(path, body);
    expect(ex.response?.status).toBe(201);
    return (ex.json as { id: number }).id;
  };

  test('puts back the settings that differ from the start of the run, and only those', async () => {
    const before = (await snapshotSettings(t.config)).settings;
    expect(before).toMatchObject({ api_enabled: true, maintenance_mode: false });
    await control.putSettings({ maintenance_mode: true, num_items_lists: 7 });
    const r = await restoreSettings(t.config, before);
    expect(r.restored.sort()).toEqual(['maintenance_mode', 'num_items_lists']);
    expect(r.unrestored).toBeUndefined();
    expect(await control.getSettings()).toEqual(before);
    expect(await restoreSettings(t.config, before)).toEqual({ restored: [] });
    expect(await snapshotSettings({ ...t.config, readOnly: true })).toEqual({});
  });

  test("the sweep deletes exactly this run's objects (pmv6-<run>-…), archived ones too, and leaves everything else", async () => {
    const foreign = await create('/projects.json', { name: 'customer-project', parent_id: 0 });
    const foreignPassword = await create('/passwords.json', { name: 'pmv6-otherrun-x-password-1', project_id: foreign });
    const mine = await create('/projects.json', { name: 'pmv6-abc123-t1-project-1', parent_id: 0 });
    const minePassword = await create('/passwords.json', { name: 'pmv6-abc123-t1-password-2', project_id: foreign });
    const archived = await create('/passwords.json', { name: 'pmv6-abc123-t1-password-3', project_id: foreign });
    expect((await admin.put(`/passwords/${archived}/archive.json`)).response?.status).toBe(204);
    const user = await control.createUser({ username: 'pmv6-abc123-t1-user-4', password: 'pw-12345678-abc', role: 'normal user' });
    const otherUser = await control.createUser({ username: 'someone-else', password: 'pw-12345678-abc', role: 'normal user' });
    const locked = await create('/passwords.json', { name: 'pmv6-abc123-t1-password-5', project_id: foreign });
    expect((await admin.put(`/passwords/${locked}/lock.json`)).response?.status).toBe(204);
    const myPassword = await create('/my_passwords.json', { name: 'pmv6-abc123-t1-my-password-6' });
    const otherMyPassword = await create('/my_passwords.json', { name: 'personal' });
    const group = await create('/groups.json', { name: 'pmv6-abc123-t1-group-7' });
    const otherGroup = await create('/groups.json', { name: 'customer-group' });

    const report = await sweep(t.config, undefined);
    expect(report.leftovers).toEqual([]);
    expect(report.unknown).toEqual([]);
    expect(report.deleted.map((d) => `${d.kind}:${d.id}`).sort()).toEqual(
      [
        `password:${minePassword}`,
        `password:${archived}`,
        `password:${locked}`,
        `my_password:${myPassword}`,
        `project:${mine}`,
        `group:${group}`,
        `user:${user.id}`,
      ].sort(),
    );
    expect((await admin.get(`/my_passwords/${otherMyPassword}.json`)).response?.status).toBe(200);
    expect((await admin.get(`/groups/${otherGroup}.json`)).response?.status).toBe(200);
    expect((await admin.get(`/projects/${foreign}.json`)).response?.status).toBe(200);
    expect((await admin.get(`/passwords/${foreignPassword}.json`)).response?.status).toBe(200);
    expect((await admin.get(`/users/${otherUser.id}.json`)).response?.status).toBe(200);
    expect((await admin.get(`/users/${user.id}.json`)).response?.status).toBe(404);
    expect(await sweep({ ...t.config, readOnly: true }, undefined)).toEqual({ deleted: [], leftovers: [], unknown: [] });
  });

  test('merging: what the sweep removed is no longer a leftover; the text lists leftovers by id and name', () => {
    const files = {
      deleted: [{ kind: 'project' as const, id: 1, name: 'pmv6-r-a' }],
      leftovers: [
        { kind: 'password' as const, id: 2, name: 'pmv6-r-b', reason: 'DELETE answered 500' },
        { kind: 'user' as const, id: 3, name: 'pmv6-r-c', reason: 'DELETE users/3.json answered 405' },
      ],
    };
    const merged = mergeCleanup(files, {
      deleted: [{ kind: 'password', id: 2, name: 'pmv6-r-b' }],
      leftovers: [{ kind: 'user', id: 3, name: 'pmv6-r-c', reason: 'still listed after the sweep' }],
      unknown: [],
    });
    expect(merged.deleted).toHaveLength(2);
    expect(merged.leftovers).toEqual([files.leftovers[1]]);
    const text = cleanupText(merged, { restored: ['maintenance_mode'] });
    expect(text).toMatch(/^cleanup: deleted 2 objects created by the run; 1 left over:\n {2}user 3 pmv6-r-c: DELETE users\/3\.json answered 405\n/);
    expect(text).toMatch(/settings: put back maintenance_mode/);
  });
});

describe('the sweep on a populated installation', () => {
  test('reads a list of many pages to its end, several pages at a time, and reads the lists once when the ledger held everything; a creation the ledger missed costs a second reading', async () => {
    let server: ReferenceServer | undefined;
    const t = await startEmbeddedTarget({ runId: 'pop123' }, { http: true, mutate: (s) => (server = s) });
    const admin = new ApiClient({ target: t.config.target, auth: { kind: 'basic', user: t.config.user, password: t.config.password } });
    const pages: string[] = [];
    const stop = onExchange((o) => {
      const m = /\/passwords\/page\/(\d+)\.json$/.exec(new URL(o.exchange.request.url).pathname);
      if (m) pages.push(m[1]!);
    });
    try {
      const project = (await admin.post('/projects.json', { name: 'customer-project', parent_id: 0 })).json as { id: number };
      // 5,500 passwords of others, named to sort before the run's: the run's are on page 6 of 1000.
      server!.store.passwords.seed(project.id, 5500, server!.adminId, formatDateTime(Date.now()), () => null, 'aaa-');
      const ledger = new Ledger('pop123');
      const held = (await admin.post('/passwords.json', { name: `${ledger.prefix}password-1`, project_id: project.id })).json as { id: number };
      ledger.record('password', String(held.id), `${ledger.prefix}password-1`);
      const first = await sweep(t.config, ledger);
      expect(first).toEqual({ deleted: [{ kind: 'password', id: held.id, name: `${ledger.prefix}password-1` }], leftovers: [], unknown: [] });
      // One reading: page 1, then pages 2–5 and 6–9 at once (past the end a list answers an empty page).
      expect(pages.map(Number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      pages.length = 0;
      // A creation whose reply was lost: only the lists know it; it is read back, deleted, and the lists read again.
      const lost = (await admin.post('/passwords.json', { name: `${ledger.prefix}password-2`, project_id: project.id })).json as { id: number };
      const second = await sweep(t.config, ledger);
      expect(second).toEqual({ deleted: [{ kind: 'password', id: lost.id, name: `${ledger.prefix}password-2` }], leftovers: [], unknown: [] });
      expect(pages.filter((p) => p === '6')).toHaveLength(2);
      expect((await admin.get(`/passwords/${lost.id}.json`)).response?.status).toBe(404);
      expect((await admin.get('/passwords/count.json')).json).toMatchObject({ num_items: 5500 });
    } finally {
      stop();
      await admin.close();
      await t.close();
    }
  });
});

describe('runner cleanup against a target that does not cooperate', () => {
  const TOKEN = 'control-token-cleanup-0123456789';
  const before = {
    api_enabled: true,
    maintenance_mode: false,
    auth_methods: 'basic+hmac',
    api_users: 'all',
    hmac_key_expiry_days: null,
    num_items_lists: 20,
  } as const;

  test('a restore the target does not take is read back, printed first with the control request, the token left to the environment', async () => {
    // The control protocol answers every PUT with 200 and keeps Maintenance Mode on.
    const stub = await startStub((req, res) => sendJson(res, 200, { ...before, maintenance_mode: true, api_users: req.method === 'PUT' ? 'all' : 'api_only' }));
    try {
      const config: RunConfig = {
        target: stub.url,
        user: 'admin',
        password: 'pw',
        runId: 'r9',
        seed: 1,
        readOnly: false,
        timeoutMs: 1000,
        control: { url: `${stub.url}/__control`, token: TOKEN },
      };
      const r = await restoreSettings(config, { ...before });
      expect(r.unrestored?.map((u) => u.key)).toEqual(['maintenance_mode', 'api_users']);
      expect(r.restored).toEqual([]);
      const alarm = settingsAlarm(r);
      expect(alarm).toMatch(
        /^!!! pmv6: THE TARGET'S SETTINGS ARE NOT AS THEY WERE BEFORE THE RUN !!!\n!!! {3}maintenance_mode: now true, was false before the run\n/,
      );
      expect(alarm).toContain(
        `curl -X PUT -H "Authorization: Bearer $PMV6_CONTROL_TOKEN" -H 'Content-Type: application/json' --data '{"maintenance_mode":false,"api_users":"all"}' '${stub.url}/__control/settings'`,
      );
      expect(alarm).not.toContain(TOKEN);
      expect(cleanupText({ deleted: [], leftovers: [] }, r)).toMatch(/settings: NOT as before the run: maintenance_mode, api_users/);
      // The settings cannot be read at all: every one is unknown, and printed.
      await stub.close();
      const dead = await restoreSettings({ ...config, timeoutMs: 300 }, { ...before });
      expect(dead.unrestored?.map((u) => u.key)).toEqual(Object.keys(before));
      expect(settingsAlarm(dead)).toMatch(/maintenance_mode: unknown \(could not be read\), was false/);
      expect(cleanupText({ deleted: [], leftovers: [] }, dead)).toMatch(/settings: unknown \(could not be read after the run\): api_enabled/);
      expect(cleanupText({ deleted: [], leftovers: [] }, dead)).not.toMatch(/NOT as before/);
    } finally {
      await stub.close().catch(() => {});
    }
  });

  test('a settings reply that lacks a setting is no snapshot: the run changes none', async () => {
    const stub = await startStub((_req, res) => sendJson(res, 200, { api_enabled: true, auth_methods: 'basic' }));
    try {
      const config: RunConfig = {
        target: stub.url,
        user: 'admin',
        password: 'pw',
        runId: 'r9',
        seed: 1,
        readOnly: false,
        timeoutMs: 1000,
        control: { url: `${stub.url}/__control`, token: TOKEN },
      };
      expect(await snapshotSettings(config)).toEqual({ error: expect.stringMatching(/lacks maintenance_mode, api_users/) });
    } finally {
      await stub.close();
    }
  });

  test('a list the sweep cannot read is unknown, never "nothing found"', async () => {
    const stub = await startStub((req, res) =>
      req.url.includes('/users/') ? sendJson(res, 500, { error: true, type: 'Internal Server Error', message: 'boom' }) : sendJson(res, 200, []),
    );
    try {
      const config: RunConfig = { target: stub.url, user: 'admin', password: 'pw', runId: 'r9', seed: 1, readOnly: false, timeoutMs: 1000 };
      const report = await sweep(config, new Ledger('r9'));
      expect(report.unknown).toEqual([{ list: '/users', reason: 'GET /users/page/1.json answered 500' }]);
      const text = cleanupText(mergeCleanup({ deleted: [], leftovers: [] }, report));
      expect(text).toMatch(
        /^cleanup: deleted 0 objects created by the run; at least 0 left over \(unknown: 1 list could not be read\)\n {2}unknown: \/users: GET/,
      );
    } finally {
      await stub.close();
    }
  });
});
