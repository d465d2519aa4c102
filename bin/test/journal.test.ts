import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { changedSince, type Installation, runObjects, snapshot, startInstallation } from './hostile/installation.ts';
import { type Hostile, startHostile } from './hostile/proxy.ts';
import { BIN, pmv6 } from './spawn-cli.ts';

// Issue 36: nothing a run made survives it, whatever ends it. Runs against an installation in this
// process behind a proxy that holds every request (20 ms, 150 ms), killed at a random moment
// (printed), then `pmv6 cleanup`; and SIGTERM with a CI runner's grace of 10 s. A subset of the
// suites (settings sections and creations of every kind) keeps the cost small.
// Decision (runtime, issue 38): every case has its own installation, proxy and state folder, and
// mostly waits on the proxy's held requests: the cases run side by side (describe.concurrent).

const PASSWORD = `pw-${randomBytes(6).toString('hex')}`;
const TOKEN = `tok-${randomBytes(8).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'pmv6-journal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The areas the kill runs select: settings sections (api-access, GEN) and creations of every kind (OPS). */
const ONLY = 'GEN,OPS';
/** A CI runner's grace between SIGTERM and SIGKILL. */
const GRACE_MS = 10_000;

interface Case {
  inst: Installation;
  proxy: Hostile;
  before: ReturnType<typeof snapshot>;
  settingsBefore: Record<string, unknown>;
  state: string;
  env: Record<string, string>;
  target: string[];
}

async function setUp(ms: number, name: string): Promise<Case> {
  const inst = await startInstallation(PASSWORD, TOKEN);
  const proxy = await startHostile(inst.url, { delay: { match: () => true, ms } });
  const state = join(dir, name);
  return {
    inst,
    proxy,
    before: snapshot(inst.server),
    settingsBefore: await inst.settings(),
    state,
    env: { PMV6_USER: inst.user, PMV6_PASSWORD: PASSWORD, PMV6_CONTROL_TOKEN: TOKEN, PMV6_STATE_DIR: state, NO_COLOR: '1' },
    target: ['--target', proxy.url, '--control', `${proxy.url}/__control`],
  };
}

async function tearDown(c: Case): Promise<void> {
  await c.proxy.close();
  await c.inst.close();
}

/** `pmv6 run` that gets `signal` `afterMs` after it opened its journal; resolves when it has ended. */
function runUntil(
  c: Case,
  signal: NodeJS.Signals,
  afterMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string; signalledAt?: number; endedAt: number }> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, [BIN, 'run', ...c.target, '--only', ONLY, '--concurrency', '2', '--timeout', '3000'], {
      env: { ...process.env, ...c.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let signalledAt: number | undefined;
    let timer: NodeJS.Timeout | undefined;
    child.stdout!.on('data', (d) => {
      stdout += d;
      if (timer === undefined && /^journal: /m.test(stdout))
        timer = setTimeout(() => {
          signalledAt = Date.now();
          child.kill(signal);
        }, afterMs);
    });
    child.stderr!.on('data', (d) => (stderr += d));
    const wall = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(wall);
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ...(signalledAt ? { signalledAt } : {}), endedAt: Date.now() });
    });
  });
}

describe.concurrent('a run killed at any moment leaves nothing that pmv6 cleanup does not remove', () => {
  for (const ms of [20, 150]) {
    test(`SIGKILL at a random moment of a run against a ${ms} ms target, then pmv6 cleanup: nothing left, every setting as before`, async () => {
      const c = await setUp(ms, `kill-${ms}`);
      const at = randomInt(500, 6_000);
      try {
        const killed = await runUntil(c, 'SIGKILL', at);
        const leftBefore = runObjects(c.inst.server, c.before).length;
        const clean = await pmv6(['cleanup', ...c.target], c.env, { timeoutMs: 120_000 });
        const context = `killed ${at} ms after the journal opened; ${leftBefore} objects and settings ${JSON.stringify(await c.inst.settings())} before the cleanup\n${killed.stdout.slice(-800)}\n--- cleanup ${clean.code}\n${clean.stdout}${clean.stderr}`;
        expect(clean.code, context).toBe(0);
        expect(runObjects(c.inst.server, c.before), context).toEqual([]);
        expect(await c.inst.settings(), context).toEqual(c.settingsBefore);
        expect(changedSince(c.inst.server, c.before), context).toEqual([]);
        // Said by reads: the lists were read again after the deletes.
        expect(clean.stdout, context).toMatch(/^left: nothing \(every list read again\)$/m);
        // A second cleanup finds nothing.
        const again = await pmv6(['cleanup', ...c.target], c.env);
        expect(again.stdout, again.stdout).toMatch(/^cleanup: removed 0 objects/m);
      } finally {
        await tearDown(c);
      }
    }, 240_000);
  }

  test('a later run names what a killed run left, with the command that removes it; --cleanup-first removes it', async () => {
    const c = await setUp(20, 'next-run');
    try {
      await runUntil(c, 'SIGKILL', 2_500);
      const left = runObjects(c.inst.server, c.before).length;
      const next = await pmv6(['run', ...c.target, '--only', 'VER', '--read-only'], c.env, { timeoutMs: 120_000 });
      // Either the API is usable and the run names what is left, or a setting the killed run
      // changed locks it out and the run names the run that changed it, with the command.
      const locked = /^pmv6 run: pmv6 run [0-9a-f]{6} \(started .*\) changed .* and did not put (it|them) back .*put it back with: pmv6 cleanup --target /m;
      if (next.code === 2) expect(next.stderr, next.stderr).toMatch(locked);
      // (Files go with their containers: the count is of the listed kinds.)
      else if (left > 0)
        expect(next.stderr, next.stderr).toMatch(/^pmv6 run: the target holds \d+ objects? of earlier pmv6 runs .*remove them with: pmv6 cleanup --target /m);
      const first = await pmv6(['run', ...c.target, '--only', 'VER', '--cleanup-first'], c.env, { timeoutMs: 120_000 });
      expect(first.stdout, first.stdout + first.stderr).toMatch(/^left: nothing \(every list read again\)$/m);
      expect(first.code, first.stdout + first.stderr).toBe(0);
      expect(runObjects(c.inst.server, c.before)).toEqual([]);
      expect(await c.inst.settings()).toEqual(c.settingsBefore);
    } finally {
      await tearDown(c);
    }
  }, 240_000);

  test('SIGTERM against a 150 ms target: ends within a CI grace of 10 s, and the leftovers it names are what the target holds', async () => {
    const c = await setUp(150, 'term');
    const at = randomInt(1_000, 5_000);
    try {
      const r = await runUntil(c, 'SIGTERM', at);
      const context = `SIGTERM ${at} ms after the journal opened\n${r.stdout.slice(-600)}\n${r.stderr}`;
      expect(r.code, context).toBe(143);
      expect(r.endedAt - r.signalledAt!, context).toBeLessThan(GRACE_MS);
      expect(r.stderr, context).not.toMatch(/^\s+at /m);
      expect(r.stderr, context).not.toMatch(/DELETE not sent/);
      const held = runObjects(c.inst.server, c.before)
        .map((o) => `${o.kind} ${o.id}`)
        .sort();
      const named = [...r.stderr.matchAll(/^ {2}(password|project|my_password|group|user|file) (\d+) /gm)].map((m) => `${m[1]} ${m[2]}`).sort();
      expect(named, context).toEqual(held);
      if (held.length > 0) expect(r.stderr, context).not.toMatch(/at least 0 left over/);
      else expect(await c.inst.settings(), context).toEqual(c.settingsBefore);
    } finally {
      await tearDown(c);
    }
  }, 240_000);
});

describe.concurrent('ids a hostile target gives are never written to, in a path or a body (issue 36)', () => {
  test('creation replies (API and control) carry pre-existing ids of every kind: no request body names one, nothing pre-existing changes, the run ends', async () => {
    const inst = await startInstallation(PASSWORD, TOKEN);
    const victims = Object.entries(inst.victims).map(([k, v]) => [k === 'bigVictim' ? 'project' : k, v] as const);
    const named: string[] = [];
    const proxy = await startHostile(inst.url, {
      rewriteCreations: { victims: inst.victims, perKind: 3 },
      onRequest: (method, path, body) => {
        if (method === 'GET' || !body) return;
        for (const [kind, id] of victims)
          if (new RegExp(`"(project_id|parent_id)"\\s*:\\s*"?${id}\\b`).test(body) && (kind === 'project' || kind === 'bigVictim'))
            named.push(`${method} ${path} ${body.slice(0, 120)}`);
      },
    });
    const before = snapshot(inst.server);
    try {
      const env = { PMV6_USER: inst.user, PMV6_PASSWORD: PASSWORD, PMV6_CONTROL_TOKEN: TOKEN, PMV6_STATE_DIR: join(dir, 'ids'), NO_COLOR: '1' };
      const r = await pmv6(
        ['run', '--target', proxy.url, '--control', `${proxy.url}/__control`, '--only', 'OPS,RES,GEN', '--timeout', '2000', '--concurrency', '2'],
        env,
        {
          timeoutMs: 200_000,
        },
      );
      const context = `${r.stdout.slice(-1500)}\n${r.stderr}`;
      expect(r.signal, context).toBeNull();
      expect(named, context).toEqual([]);
      expect(changedSince(inst.server, before), context).toEqual([]);
      expect(proxy.rewritten.length, context).toBeGreaterThan(0);
    } finally {
      await proxy.close();
      await inst.close();
    }
  }, 240_000);
});

describe.concurrent('the gate never turns green without testing the intended target (issue 36)', () => {
  const cases: Array<[string, string[], Record<string, string>, RegExp]> = [
    ['PMV6_TARGET without --target', ['run'], { PMV6_TARGET: 'http://127.0.0.1:9' }, /PMV6_TARGET is set .* give --target/],
    [
      'credentials in the environment without --target',
      ['run'],
      { PMV6_USER: 'admin', PMV6_PASSWORD: 'x' },
      /PMV6_USER, PMV6_PASSWORD are set but no --target/,
    ],
    ['--target given twice', ['run', '--target', 'http://127.0.0.1:9', '--target', 'http://127.0.0.1:10'], {}, /--target is given more than once/],
    ['every area skipped', ['run', '--only', 'VER', '--skip', 'VER'], {}, /nothing would be checked/],
    ['pmv6 cleanup without --target', ['cleanup'], {}, /--target is required/],
  ];
  for (const [what, args, env, message] of cases)
    test(`${what}: exit 2, one line`, async () => {
      const r = await pmv6(args, {
        PMV6_USER: '',
        PMV6_PASSWORD: '',
        PMV6_CONTROL_TOKEN: '',
        PMV6_HMAC_PUBLIC: '',
        PMV6_HMAC_PRIVATE: '',
        PMV6_TARGET: '',
        ...env,
      });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    });
});
