import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { NEEDS_BASIC } from '../../suites/harness/config.ts';
import { changedSince, runObjects, snapshot, startInstallation } from './hostile/installation.ts';
import { startHostile } from './hostile/proxy.ts';
import { pmv6 } from './spawn-cli.ts';

// Issue 36: an installation that allows HMAC only runs end to end with the Admin's HMAC keys. The
// reference server (in this process) is set to HMAC only before the run, behind a proxy that
// records every Authorization header: nothing goes over HTTP Basic, the clauses about Basic are
// unverifiable with the reason, and the run leaves nothing. AUTH (Basic and HMAC clauses) and OPS
// (creations of every kind, control-made users) keep the cost small.

const PASSWORD = `pw-${randomBytes(6).toString('hex')}`;
const TOKEN = `tok-${randomBytes(8).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'pmv6-hmac-only-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('a run against an installation set to HMAC only signs every request with HMAC, ends with a verdict, names what it did not check, and leaves nothing', async () => {
  const inst = await startInstallation(PASSWORD, TOKEN);
  const put = await fetch(`${inst.url}/__control/settings`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ auth_methods: 'hmac' }),
  });
  expect(put.status).toBe(200);
  const settingsBefore = await inst.settings();
  const before = snapshot(inst.server);
  const basic: string[] = [];
  const proxy = await startHostile(inst.url, {
    onRequest: (method, path, _body, authorization) => {
      if (/^basic /i.test(authorization ?? '') && !path.startsWith('/__control')) basic.push(`${method} ${path}`);
    },
  });
  const report = join(dir, 'report');
  const env = {
    PMV6_USER: inst.user,
    PMV6_PASSWORD: PASSWORD,
    PMV6_HMAC_PUBLIC: inst.hmac.publicKey,
    PMV6_HMAC_PRIVATE: inst.hmac.privateKey,
    PMV6_CONTROL_TOKEN: TOKEN,
    PMV6_STATE_DIR: join(dir, 'state'),
    NO_COLOR: '1',
  };
  const target = ['--target', proxy.url, '--control', `${proxy.url}/__control`];
  try {
    const r = await pmv6(['run', ...target, '--only', 'AUTH,OPS', '--depth', 'quick', '--report-dir', report], env, { timeoutMs: 120_000 });
    const context = `${r.stdout.slice(-1500)}\n${r.stderr}`;
    expect(r.stderr, context).toMatch(
      /^pmv6 run: the target refused HTTP Basic for user "admin" and accepted the HMAC keys \(it allows HMAC only, as its settings say\): every request is signed with HMAC; the checks that need HTTP Basic are unverifiable$/m,
    );
    expect(r.code, context).toBe(0);
    expect(r.stdout, context).toMatch(/^verdict: CONFORMANT: .* \d+ unverifiable/m);
    expect(r.stdout, context).toMatch(/^not checked, HTTP Basic refused \(HMAC only\): .*AUTH-02, .*AUTH-12, AUTH-13, AUTH-14/m);
    expect(r.stdout + r.stderr, context).not.toMatch(/HARNESS ERROR|harness error|^\s+at /m);
    // The preflight's one Basic GET (refused), and nothing else over Basic.
    expect(basic, context).toEqual(['GET /index.php/api/v6/version.json']);
    const doc = JSON.parse(readFileSync(join(report, 'results.json'), 'utf8')) as {
      harnessErrors: string[];
      clauses: Array<{ id: string; outcome: string; tests: Array<{ outcome: string; note?: string }> }>;
    };
    expect(doc.harnessErrors).toEqual([]);
    const clause = (id: string) => doc.clauses.find((c) => c.id === id)!;
    // The clauses about Basic: unverifiable, with the reason, never judged from HMAC traffic.
    for (const id of ['AUTH-02', 'AUTH-06', 'AUTH-12', 'AUTH-13', 'AUTH-14']) {
      expect(clause(id).outcome, id).toBe('skipped-unverifiable');
      expect(
        clause(id).tests.every((t) => t.outcome === 'skipped-unverifiable' && t.note?.startsWith(NEEDS_BASIC)),
        id,
      ).toBe(true);
    }
    // HMAC itself and the creations of every kind were checked (over HMAC).
    expect(['pass', 'info']).toContain(clause('AUTH-03').outcome);
    expect(clause('AUTH-04').outcome).toBe('pass');
    expect(doc.clauses.filter((c) => c.id.startsWith('OPS-') && c.outcome === 'pass').length).toBeGreaterThan(5);
    // Nothing left, nothing pre-existing changed, the settings as before (HMAC only).
    expect(r.stdout, context).toMatch(/^cleanup: deleted \d+ objects created by the run; 0 left over$/m);
    expect(runObjects(inst.server, before), context).toEqual([]);
    expect(changedSince(inst.server, before), context).toEqual([]);
    expect(await inst.settings()).toEqual(settingsBefore);
    // pmv6 cleanup signs in the same way, and finds nothing.
    const clean = await pmv6(['cleanup', ...target], env, { timeoutMs: 60_000 });
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);
    expect(clean.stdout, clean.stdout).toMatch(/^cleanup: removed 0 objects/m);
    expect(basic.filter((b) => b !== 'GET /index.php/api/v6/version.json')).toEqual([]);
  } finally {
    await proxy.close();
    await inst.close();
  }
}, 180_000);

test('Basic refused and no HMAC keys: exit 2, and the line says how to run over HMAC', async () => {
  const inst = await startInstallation(PASSWORD, TOKEN);
  try {
    await fetch(`${inst.url}/__control/settings`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ auth_methods: 'hmac' }),
    });
    const r = await pmv6(['run', '--target', inst.url, '--only', 'VER'], { PMV6_USER: inst.user, PMV6_PASSWORD: PASSWORD, NO_COLOR: '1' });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/401 on GET .*give the Admin's HMAC keys \(PMV6_HMAC_PUBLIC and PMV6_HMAC_PRIVATE/);
  } finally {
    await inst.close();
  }
}, 60_000);
