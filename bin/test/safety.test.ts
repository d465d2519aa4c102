import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Served, serve } from './serve-child.ts';
import { pmv6 as cli } from './spawn-cli.ts';

// Safety on a real target, end to end through the CLI against `pmv6 serve` (a child process,
// loopback): a full run leaves the counts of projects, passwords and users as they were, and an
// interrupted run exits 130/143 after deleting what it made and putting the settings back.

const JSON_CT = 'application/json; charset=utf-8';

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((r) => child.on('close', r));
  child.kill('SIGTERM');
  await closed;
}

/** What the admin sees: counts of projects, passwords (active and archived) and users. */
async function counts(s: Served): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const list of ['projects', 'projects/archived', 'passwords', 'passwords/archived', 'users']) {
    const res = await fetch(`${s.base}/index.php/api/v6/${list}/count.json`, {
      headers: { authorization: `Basic ${Buffer.from(`admin:${s.password}`).toString('base64')}`, 'content-type': JSON_CT },
    });
    expect(res.status).toBe(200);
    out[list] = ((await res.json()) as { num_items: number }).num_items;
  }
  return out;
}

/** Every write of the reference server is in its action log. */
async function logCount(s: Served): Promise<number> {
  const res = await fetch(`${s.base}/index.php/api/v6/log/count.json`, {
    headers: { authorization: `Basic ${Buffer.from(`admin:${s.password}`).toString('base64')}`, 'content-type': JSON_CT },
  });
  return ((await res.json()) as { num_items: number }).num_items;
}

async function newestLogActions(s: Served, n: number): Promise<string[]> {
  const res = await fetch(`${s.base}/index.php/api/v6/log.json`, {
    headers: { authorization: `Basic ${Buffer.from(`admin:${s.password}`).toString('base64')}`, 'content-type': JSON_CT, 'x-page-size': '1000' },
  });
  return ((await res.json()) as Array<{ action: { id: string } }>).slice(0, n).map((e) => e.action.id);
}

async function settings(s: Served): Promise<unknown> {
  const res = await fetch(`${s.base}/__control/settings`, { headers: { authorization: `Bearer ${s.token}`, 'content-type': JSON_CT } });
  return res.json();
}

describe('pmv6 run leaves no residue', () => {
  let s: Served;
  let dir: string;
  beforeAll(async () => {
    s = await serve();
    dir = await mkdtemp(join(tmpdir(), 'pmv6-safety-'));
  });
  afterAll(async () => {
    await stop(s.child);
    await rm(dir, { recursive: true, force: true });
  });
  const env = () => ({ PMV6_USER: 'admin', PMV6_PASSWORD: s.password, PMV6_CONTROL_TOKEN: s.token });
  const args = () => ['run', '--target', s.base, '--control', `${s.base}/__control`];

  test('a full run: the same counts of projects, passwords and users before and after, settings unchanged', async () => {
    const before = await counts(s);
    const settingsBefore = await settings(s);
    const r = await cli([...args(), '--report-dir', dir], env());
    expect(r.stdout).toMatch(/verdict: CONFORMANT/);
    expect(r.code).toBe(0);
    const line = /cleanup: deleted (\d+) objects created by the run; 0 left over/.exec(r.stdout);
    expect(line).not.toBeNull();
    expect(Number(line![1])).toBeGreaterThan(50);
    expect(r.stdout.indexOf('cleanup:')).toBeGreaterThan(r.stdout.indexOf('verdict:'));
    expect(await counts(s)).toEqual(before);
    expect(await settings(s)).toEqual(settingsBefore);
    const doc = JSON.parse(await readFile(join(dir, 'results.json'), 'utf8')) as { cleanup?: { deleted: number; leftovers: unknown[] } };
    expect(doc.cleanup).toEqual({ deleted: Number(line![1]), leftovers: [] });
  }, 55_000);

  test('--read-only: nothing created, changed or deleted; the writing checks are disabled with the reason', async () => {
    const before = await counts(s);
    const logBefore = await logCount(s);
    const r = await cli([...args(), '--read-only', '--report-dir', dir], env());
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/read-only run: checks that would create, change or delete data are disabled/);
    expect(r.stdout).toMatch(/verdict: CONFORMANT: \d+\/\d+ clauses passed, 0 failed, .* [1-9]\d* disabled/);
    expect(await counts(s)).toEqual(before);
    // Reads are logged too (a password shown, a refused credential); no write is.
    const actions = new Set(await newestLogActions(s, (await logCount(s)) - logBefore));
    for (const a of actions) expect(['view_password', 'unauthorized_api_request']).toContain(a);
    const doc = JSON.parse(await readFile(join(dir, 'results.json'), 'utf8')) as {
      config: { readOnly: boolean };
      clauses: Array<{ tests: Array<{ outcome: string; note?: string }> }>;
    };
    expect(doc.config.readOnly).toBe(true);
    const tests = doc.clauses.flatMap((c) => c.tests);
    const disabled = tests.filter((t) => t.outcome === 'disabled');
    expect(disabled.length).toBeGreaterThan(10);
    for (const t of disabled) expect(t.note).toMatch(/read-only run/);
    expect(tests.filter((t) => t.outcome === 'pass').length).toBeGreaterThan(5);
  }, 40_000);

  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    test(`${signal} after the first progress line: exit ${code}, cleanup printed, no residue, settings as before`, async () => {
      const before = await counts(s);
      const settingsBefore = await settings(s);
      let sent = false;
      const r = await cli(args(), env(), {
        onStdout: (all, child) => {
          if (!sent && /\.test\.ts\s/.test(all)) {
            sent = true;
            child.kill(signal);
          }
        },
      });
      expect(sent).toBe(true);
      expect(r.code).toBe(code);
      expect(r.stderr).toMatch(new RegExp(`interrupted by ${signal}: no verdict`));
      expect(r.stderr).toMatch(/cleanup: deleted \d+ objects? created by the run; 0 left over/);
      expect(r.stdout).not.toMatch(/verdict:/);
      expect(await counts(s)).toEqual(before);
      expect(await settings(s)).toEqual(settingsBefore);
    }, 40_000);
  }
});
