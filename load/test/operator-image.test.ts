// The runner image (npm run image:k6) as the k6-operator uses it: two containers of pmv6-k6:local
// (or PMV6_K6_IMAGE) with the operator's runner command (`sh -c` LocalFile check, paused k6 run
// with segments and instance tags), the credentials only in the container's environment (as from
// a Secret), a volume at /pmv6/out, resumed by the starter's PATCH /v1/status; host network,
// reference server on loopback. Without a Docker engine or the image (`npm run image:k6` builds it):
// under CI=true the test FAILS (.ci/run builds the image); elsewhere it is skipped with the reason.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeededTarget } from '../../targets/seeded.ts';
import { mergeSummaries, parseInstances } from '../operator/merge.ts';
import { countingTarget, freePort, patchResume, resumeAll, runnerCommand } from './operator-support.ts';

const run = promisify(execFile);
const IMAGE = process.env['PMV6_K6_IMAGE'] || 'pmv6-k6:local';
const PARALLELISM = 2;

function missing(): string | undefined {
  try {
    execFileSync('docker', ['image', 'inspect', IMAGE], { stdio: 'ignore', timeout: 15_000 });
    return undefined;
  } catch {
    return `no Docker engine or no image ${IMAGE} (npm run image:k6 builds it)`;
  }
}

const why = missing();
if (why && /^(1|true|yes)$/i.test(process.env['CI'] ?? '')) throw new Error(`the k6 runner image test cannot run under CI: ${why}`);
if (why) {
  describe('the k6 runner image', () => {
    it.skip(`skipped: ${why}`, () => {});
  });
} else {
  describe(`the k6 runner image ${IMAGE}: ${PARALLELISM} containers as the operator runs them`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'pmv6-k6image-'));
    chmodSync(dir, 0o777); // the image runs as uid 1000
    const names = Array.from({ length: PARALLELISM }, (_, i) => `pmv6-k6op-${process.pid}-${i + 1}`);
    const runners: Array<{ index: number; address: string; child: ChildProcess; log: string; exit: Promise<number | null> }> = [];
    let target: SeededTarget;
    let received: () => number;

    beforeAll(async () => {
      ({ target, received } = await countingTarget());
      const c = target.config;
      for (let i = 1; i <= PARALLELISM; i++) {
        const port = await freePort();
        const command = runnerCommand({
          k6: 'k6',
          index: i,
          total: PARALLELISM,
          script: '/pmv6/load/k6/mixed.js',
          argLine: `-e PMV6_TARGET=${c.target} -e PMV6_RATE=4 -e PMV6_DURATION=3s`,
          port,
          testrun: 'pmv6-mixed',
        });
        // `-e NAME` with no value: docker takes the value from its own environment, not the command line
        const child = spawn(
          'docker',
          [
            'run',
            '--rm',
            '--network',
            'host',
            '--name',
            names[i - 1]!,
            '-e',
            'PMV6_USER',
            '-e',
            'PMV6_PASSWORD',
            '-v',
            `${dir}:/pmv6/out`,
            '--entrypoint',
            'sh',
            IMAGE,
            '-c',
            command,
          ],
          { env: { PATH: process.env['PATH'] ?? '', PMV6_USER: c.user, PMV6_PASSWORD: c.password }, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        const r = { index: i, address: `127.0.0.1:${port}`, child, log: '', exit: Promise.resolve<number | null>(null) };
        const keep = (d: Buffer) => (r.log = (r.log + d.toString('utf8')).slice(-4 * 1024 * 1024));
        child.stdout!.on('data', keep);
        child.stderr!.on('data', keep);
        r.exit = new Promise((resolve) => child.on('close', resolve));
        runners.push(r);
      }
      const deadline = setTimeout(() => {
        for (const n of names) execFile('docker', ['rm', '-f', n], () => {});
      }, 150_000);
      try {
        await resumeAll(runners, 120_000, (r) => r.log, patchResume);
        await Promise.all(runners.map((r) => r.exit));
      } finally {
        clearTimeout(deadline);
      }
    }, 200_000);
    afterAll(async () => {
      for (const n of names) await run('docker', ['rm', '-f', n]).catch(() => {});
      await target?.close();
      rmSync(dir, { recursive: true, force: true });
    }, 60_000);

    it('each container ran its segment, printed its JSON line and wrote its own file to the volume; merged, the counts are what the server answered', () => {
      for (const r of runners) expect([0, 99], r.log.slice(-3000)).toContain(r.child.exitCode);
      expect(readdirSync(dir).sort()).toEqual(['summary-mixed-instance-1.json', 'summary-mixed-instance-2.json']);
      const merged = mergeSummaries(runners.flatMap((r) => parseInstances(r.log, `container ${r.index}`)));
      expect(merged.metrics['http_reqs']!.values['count']).toBe(received());
      expect(merged.checks.filter((c) => c.fails > 0)).toEqual([]);
      const fromFiles = mergeSummaries(readdirSync(dir).flatMap((f) => parseInstances(readFileSync(join(dir, f), 'utf8'), f)));
      expect(fromFiles.metrics['http_reqs']!.values['count']).toBe(received());
    });

    it('nothing left on the server; no secret in the logs or the files', async () => {
      const c = target.config;
      const basic = Buffer.from(`${c.user}:${c.password}`).toString('base64');
      for (const kind of ['projects', 'passwords']) {
        const res = await fetch(`${c.target}/index.php/api/v6/${kind}/search/pmv6-load.json`, {
          headers: { authorization: `Basic ${basic}`, 'content-type': 'application/json; charset=utf-8' },
        });
        const found = (await res.json()) as Array<{ name: string }>;
        expect(found.filter((p) => /^pmv6-load-(?!seed)/.test(p.name)).map((p) => p.name)).toEqual([]);
      }
      const outputs = [...runners.map((r) => r.log), ...readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8'))];
      for (const out of outputs) for (const s of [c.password, basic]) expect(out.includes(s)).toBe(false);
    });
  });
}
