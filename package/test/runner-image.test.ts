import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { describe, expect, test } from 'vitest';

// The runner image (npm run image:runner) against the reference image (npm run image), both on
// the host network (dockerd --bridge=none in CI has no bridge). Needs a Docker engine and both
// images: under CI=true their absence FAILS the test (.ci/run builds both); elsewhere it is
// skipped with the reason.

const RUNNER = process.env.PMV6_RUNNER_IMAGE ?? 'pmv6:local';
const REFERENCE = process.env.PMV6_TEST_IMAGE ?? 'pmv6-reference:local';
const CI = /^(1|true|yes)$/i.test(process.env.CI ?? '');

interface Done {
  code: number | null;
  stdout: string;
  stderr: string;
}

function docker(args: string[], timeoutMs = 60_000): Promise<Done> {
  return new Promise((done) => {
    execFile('docker', args, { timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      done({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
  });
}

async function unavailable(): Promise<string | undefined> {
  if ((await docker(['info'], 10_000)).code !== 0) return 'no container engine reachable (docker info failed)';
  for (const image of [RUNNER, REFERENCE]) {
    if ((await docker(['image', 'inspect', image], 10_000)).code !== 0) return `image ${image} not built (npm run image:runner, npm run image)`;
  }
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer();
    s.on('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => done(port));
    });
  });
}

/** Polls until the URL answers with any status; throws past the deadline. */
async function answering(url: string, deadlineMs: number): Promise<void> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(2000) });
      return;
    } catch (e) {
      if (Date.now() > end) throw new Error(`${url} did not answer within ${deadlineMs} ms: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

const why = await unavailable();
if (why && CI) throw new Error(`the runner image test cannot run under CI: ${why}`);

describe.skipIf(why !== undefined)(`the runner image ${RUNNER}${why ? ` (skipped: ${why})` : ''}`, () => {
  test('is not root, has pmv6 as its entrypoint and prints the version', async () => {
    const info = await docker(['image', 'inspect', '-f', '{{json .Config.User}} {{json .Config.Entrypoint}}', RUNNER]);
    expect(info.stdout.trim()).toBe('"1000:1000" ["node","/opt/pmv6/node_modules/pmv6/bin/pmv6.js"]');
    const version = await docker(['run', '--rm', '--network', 'host', RUNNER, '--version']);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  test('pmv6 run --target against the reference image: conformant, exit 0', async () => {
    const port = await freePort();
    const password = randomBytes(9).toString('base64url');
    const token = randomBytes(12).toString('base64url');
    const name = `pmv6-runner-test-${randomBytes(4).toString('hex')}`;
    const started = await docker([
      'run',
      '-d',
      '--rm',
      '--name',
      name,
      '--network',
      'host',
      '-e',
      `PORT=${port}`,
      '-e',
      'PMV6_HOST=127.0.0.1',
      '-e',
      `PMV6_ADMIN_PASSWORD=${password}`,
      '-e',
      `PMV6_CONTROL_TOKEN=${token}`,
      REFERENCE,
    ]);
    expect(started.code, started.stderr).toBe(0);
    try {
      const base = `http://127.0.0.1:${port}`;
      await answering(`${base}/index.php/api/v6/version.json`, 30_000);
      const run = await docker(
        [
          'run',
          '--rm',
          '--network',
          'host',
          '-e',
          'PMV6_USER=admin',
          '-e',
          `PMV6_PASSWORD=${password}`,
          '-e',
          `PMV6_CONTROL_TOKEN=${token}`,
          RUNNER,
          'run',
          '--target',
          base,
          '--control',
          `${base}/__control`,
          '--timeout',
          '20000',
        ],
        300_000,
      );
      expect(run.stderr).not.toMatch(/internal error/);
      expect(run.code, `${run.stdout.slice(-2000)}${run.stderr}`).toBe(0);
      expect(run.stdout).toMatch(/verdict: CONFORMANT: \d+\/\d+ clauses passed, 0 failed/);
      expect(`${run.stdout}${run.stderr}`).not.toContain(password);
    } finally {
      await docker(['rm', '-f', name], 30_000);
    }
  }, 330_000);
});

// Issue 36: the image writes its reports (and journals) into the folder the README mounts, as the
// user the README runs it as. Checked on the image's definition, which needs no engine, and by the
// CLI reading the variables the image sets.
describe('the runner image writes into the mounted folder (definition)', () => {
  test('the Dockerfile points reports and journals at /work/pmv6-report; both READMEs run it as the folder owner with that mount', async () => {
    const { readFile } = await import('node:fs/promises');
    const dockerfile = await readFile(new URL('../runner.Dockerfile', import.meta.url), 'utf8');
    expect(dockerfile).toMatch(/^ENV .*PMV6_REPORT_DIR=\/work\/pmv6-report\b/m);
    expect(dockerfile).toMatch(/^ENV .*PMV6_STATE_DIR=\/work\/pmv6-report\/state\b/m);
    for (const readme of ['../README.md', '../../README.md']) {
      const text = await readFile(new URL(readme, import.meta.url), 'utf8');
      const line = /docker run --rm --network host[^`]*pmv6:local run --target/.exec(text)?.[0] ?? '';
      expect(line, readme).toContain('--user "$(id -u):$(id -g)"');
      expect(line, readme).toContain('-v "$PWD/pmv6-report:/work/pmv6-report"');
    }
  });

  test('PMV6_REPORT_DIR: pmv6 run writes its reports there without --report-dir', async () => {
    const { mkdtemp, readdir, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { pmv6 } = await import('../../bin/test/spawn-cli.ts');
    const dir = await mkdtemp(join(tmpdir(), 'pmv6-report-env-'));
    try {
      const r = await pmv6(['run', '--only', 'VER', '--quiet'], { PMV6_REPORT_DIR: join(dir, 'pmv6-report') }, { timeoutMs: 120_000 });
      expect(r.code, r.stderr).toBe(0);
      expect((await readdir(join(dir, 'pmv6-report'))).sort()).toEqual(expect.arrayContaining(['junit.xml', 'report.html', 'results.json', 'summary.md']));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
