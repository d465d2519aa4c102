import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

// Issue 36: signals sent to npx alone. npm exec (npm 11) runs `sh -c 'pmv6 …'` and passes SIGINT
// and SIGTERM on to that shell only (@npmcli/run-script signal-manager), then waits for it. Debian's
// dash stays between npx and pmv6; bash execs a lone command, so with --script-shell=bash pmv6 is
// npx's own child. Measured here through npx in a project whose node_modules links this checkout.

const ROOT = resolve(import.meta.dirname, '../..');
let project: string;

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'pmv6-npx-'));
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'npx-signals', version: '1.0.0', private: true, dependencies: { pmv6: `file:${ROOT}` } }),
  );
  mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(project, 'node_modules', 'pmv6'));
  symlinkSync('../pmv6/bin/pmv6.js', join(project, 'node_modules', '.bin', 'pmv6'));
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

/** The environment of a user's shell: none of the test runner's npm, vitest or pmv6 settings. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(([k]) => !/^(npm_|VITEST|PMV6_)/i.test(k) && k !== 'NODE_OPTIONS' && k !== 'TEST');
  return { ...Object.fromEntries(kept), NO_COLOR: '1', ...extra };
}

const stat = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return '';
  }
};
/** Running (a zombie is gone). */
const alive = (pid: number) => /^\d+ \(.*\) [^Z]/.test(stat(pid));
const comm = (pid: number) => /^\d+ \((.*)\) /.exec(stat(pid))?.[1] ?? '';
const parentOf = (pid: number) => Number(/\) \S+ (\d+)/.exec(stat(pid))?.[1] ?? 0);
const childrenOf = (pid: number) =>
  readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map(Number)
    .filter((p) => parentOf(p) === pid);

interface Npx {
  child: ChildProcess;
  output: () => string;
  /** Resolves when npx has exited, with whether pmv6 was still running at that moment. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; pmv6Running: boolean }>;
  /** pmv6's node process (below the shell, if one stands between). */
  pmv6: () => number;
}

function npx(args: string[], env: NodeJS.ProcessEnv): Npx {
  const child = spawn('npx', args, { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  let pid = 0;
  const pmv6 = () => {
    if (pid) return pid;
    for (const c of childrenOf(child.pid!)) {
      if (comm(c) === 'node') pid = c;
      else for (const g of childrenOf(c)) if (comm(g) === 'node') pid = g;
    }
    return pid;
  };
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; pmv6Running: boolean }>((done) =>
    child.on('exit', (code, signal) => done({ code, signal, pmv6Running: pid !== 0 && alive(pid) })),
  );
  return { child, output: () => out, exited, pmv6 };
}

async function until(what: string, test: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Ends whatever of ours is still running (npx, the shell, pmv6), by pid. */
function reap(n: Npx): void {
  for (const pid of [n.pmv6(), ...childrenOf(n.child.pid!), n.child.pid!]) if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
}

const HINT = /^pmv6: started by npx through (sh|dash), which stays between them: .* start it with npx --script-shell=bash \(or npm_config_script_shell=bash\)/m;

describe('signals sent to npx alone (issue 36)', { timeout: 90_000 }, () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    test(`npx --script-shell=bash pmv6 serve: ${signal} to npx alone reaches pmv6, which stops, and npx exits only after it`, async () => {
      const n = npx(['--script-shell=bash', '--no', '--', 'pmv6', 'serve', '--port', '0'], userEnv());
      try {
        await until('serve to listen', () => n.output().includes('listening on'));
        // No shell between: pmv6 is npx's own child.
        expect(parentOf(n.pmv6())).toBe(n.child.pid);
        n.child.kill(signal);
        const end = await n.exited;
        expect(end.pmv6Running, n.output()).toBe(false);
        expect(end.code, n.output()).toBe(0);
        expect(n.output()).toMatch(/^pmv6 reference server stopped$/m);
        expect(n.output()).not.toMatch(HINT);
      } finally {
        reap(n);
      }
    });
  }

  test('npm_config_script_shell=bash npx pmv6 run: SIGTERM to npx alone interrupts the run, which cleans up and reports, and npx waits for it (exit 143)', async () => {
    const n = npx(['--no', '--', 'pmv6', 'run', '--only', 'OPS', '--concurrency', '1'], userEnv({ npm_config_script_shell: 'bash' }));
    try {
      await until('the run to start', () => /ends the run within/.test(n.output()));
      await new Promise((r) => setTimeout(r, 1_000));
      expect(parentOf(n.pmv6())).toBe(n.child.pid);
      n.child.kill('SIGTERM');
      const end = await n.exited;
      const out = n.output();
      expect(end.pmv6Running, out).toBe(false);
      expect(end.code, out).toBe(143);
      expect(out).toMatch(/^pmv6 run: interrupted by SIGTERM: no verdict$/m);
      expect(out).toMatch(/^cleanup: deleted \d+ objects? created by the run; 0 left over$/m);
      expect(out).not.toMatch(/^\s+at /m);
    } finally {
      reap(n);
    }
  });

  // What dash does; a /bin/sh that is bash runs a lone command in its own place.
  test.skipIf(!realpathSync('/bin/sh').endsWith('dash'))(
    'through the default sh (dash): pmv6 says so in one line with the fix; as it says, SIGINT to npx alone does not reach it, and on SIGTERM npx does not wait for it',
    async () => {
      const shell = npx(['--no', '--', 'pmv6', 'serve', '--port', '0'], userEnv());
      try {
        await until('serve to listen', () => shell.output().includes('listening on'));
        const pmv6 = shell.pmv6();
        expect(parentOf(pmv6)).not.toBe(shell.child.pid);
        expect(shell.output()).toMatch(HINT);
        shell.child.kill('SIGINT');
        await new Promise((r) => setTimeout(r, 2_000));
        expect(alive(pmv6), shell.output()).toBe(true);
        expect(shell.output()).not.toMatch(/server stopped/);
        shell.child.kill('SIGTERM');
        // npx ends by the signal itself, without waiting for pmv6's exit code (as it does through bash).
        const end = await shell.exited;
        expect([end.code, end.signal], shell.output()).toEqual([null, 'SIGTERM']);
        // pmv6 notices that npx and its shell are gone (bin/pmv6.js) and stops on its own.
        await until('pmv6 to stop after its parents', () => !alive(pmv6), 5_000);
      } finally {
        reap(shell);
      }
    },
  );
});
