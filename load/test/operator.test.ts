// The k6-operator's path, run here: three runners started with the command lines the operator
// gives its runner pods (a LocalFile script: `sh -c "if [ ! -f …` then `k6 run --quiet
// --execution-segment … --execution-segment-sequence … <arguments> <script> --address … --paused
// --tag instance_id=N --tag testrun_name=…`), the password only in their environment (as from a
// Kubernetes Secret), each resumed through its REST API as the operator's starter does, against
// the reference server on loopback. Their stdout (the pod logs) is merged by `pmv6 load merge`
// into one verdict; the server keeps nothing of the run; no secret is in an archive or summary.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeededTarget } from '../../targets/seeded.ts';
import { REPO_ROOT } from '../engine/k6.ts';
import { MERGE_EXIT, mergeCommand, type mergeSummaries, parseInstances } from '../operator/merge.ts';
import { CI, K6, NO_K6 } from './k6-support.ts';
import { countingTarget, freePort, killGroup, resumeAll, runnerCommand, segmentArgs } from './operator-support.ts';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'pmv6-k6op-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PARALLELISM = 3;
const RATE = 6;
const SECONDS = 3;

interface Runner {
  index: number;
  address: string;
  child: ChildProcess;
  stdout: string;
  stderr: string;
  exit: Promise<number | null>;
}

/** The runner pod's command: the operator's `sh -c` LocalFile check, then its `k6 run …` (address on loopback here). */
function startRunner(index: number, port: number, script: string, target: SeededTarget, testrun: string): Runner {
  // spec.arguments: settings that are not secret
  const argLine = `-e PMV6_TARGET=${target.config.target} -e PMV6_RATE=${RATE} -e PMV6_DURATION=${SECONDS}s`;
  const command = runnerCommand({ k6: K6!.path, index, total: PARALLELISM, script, argLine, port, testrun });
  const child = spawn('sh', ['-c', command], {
    cwd: dir,
    // spec.runner.env: the user, and the password from the Secret
    env: {
      PATH: process.env['PATH'] ?? '',
      PMV6_USER: target.config.user,
      PMV6_PASSWORD: target.config.password,
      PMV6_SUMMARY_DIR: dir,
      K6_NO_USAGE_REPORT: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // its own process group: `sh -c` runs k6 as its child, and a stop must reach both
    detached: true,
  });
  const r: Runner = { index, address: `127.0.0.1:${port}`, child, stdout: '', stderr: '', exit: Promise.resolve(null) };
  child.stdout!.on('data', (d: Buffer) => (r.stdout = (r.stdout + d.toString('utf8')).slice(-4 * 1024 * 1024)));
  child.stderr!.on('data', (d: Buffer) => (r.stderr = (r.stderr + d.toString('utf8')).slice(-256 * 1024)));
  r.exit = new Promise((resolve) => child.on('close', (code) => resolve(code)));
  return r;
}

if (!K6) {
  describe('the k6-operator path', () => {
    if (CI) {
      it('needs a k6 binary under CI=true', () => {
        throw new Error(`CI=true but the k6 test cannot run: ${NO_K6}`);
      });
    } else it.skip(`skipped: ${NO_K6}`, () => {});
  });
} else {
  describe(`the k6-operator path: ${PARALLELISM} runners as the operator starts them (${K6.path})`, () => {
    let target: SeededTarget;
    let received: () => number;
    const runners: Runner[] = [];
    const script = join(REPO_ROOT, 'load', 'k6', 'mixed.js');

    beforeAll(async () => {
      ({ target, received } = await countingTarget());
      for (let i = 1; i <= PARALLELISM; i++) runners.push(startRunner(i, await freePort(), script, target, 'pmv6-mixed'));
      try {
        await resumeAll(runners, 120_000, (r) => r.stderr);
      } catch (e) {
        for (const r of runners) killGroup(r.child);
        throw e;
      }
      const deadline = setTimeout(() => {
        for (const r of runners) killGroup(r.child);
      }, 90_000);
      await Promise.all(runners.map((r) => r.exit));
      clearTimeout(deadline);
      for (const r of runners) writeFileSync(join(dir, `runner-${r.index}.log`), r.stdout + r.stderr);
    }, 300_000);
    afterAll(() => {
      for (const r of runners) if (r.child.exitCode === null) killGroup(r.child);
      return target?.close();
    });

    it('each runner printed its summary as one JSON line and wrote a file named for its instance', () => {
      for (const r of runners) {
        expect([0, 99], r.stderr.slice(-2000)).toContain(r.child.exitCode);
        const [s] = parseInstances(r.stdout, `runner ${r.index}`);
        expect(s!.id).toBe(`instance-${r.index}`);
        expect(s!.segment).toBe(segmentArgs(r.index, PARALLELISM)[0]!.split('=')[1]);
        // k6's own metrics as text, beside the threshold lines
        expect(r.stdout).toMatch(/^ {2}http_req_duration +avg=/m);
        expect(r.stdout).toMatch(/^(ok {3}|FAIL )checks rate>0\.99$/m);
      }
      expect(
        readdirSync(dir)
          .filter((f) => f.startsWith('summary-'))
          .sort(),
      ).toEqual(Array.from({ length: PARALLELISM }, (_, i) => `summary-mixed-instance-${i + 1}.json`));
    });

    it('pmv6 load merge: one verdict from the logs; counts are the sums and match what the server received', async () => {
      const logs = runners.map((r) => join(dir, `runner-${r.index}.log`));
      let text = '';
      const code = await mergeCommand([...logs, '--out', join(dir, 'merged.json')], (s) => (text += s));
      const merged = JSON.parse(readFileSync(join(dir, 'merged.json'), 'utf8')) as ReturnType<typeof mergeSummaries>;
      expect(code).toBe(merged.ok ? MERGE_EXIT.held : MERGE_EXIT.failed);
      expect(merged.instances).toHaveLength(PARALLELISM);
      const each = runners.map((r) => parseInstances(r.stdout, 'x')[0]!);
      const sum = (m: string, k: string) => each.reduce((a, s) => a + (s.metrics[m]?.values[k] ?? 0), 0);
      expect(merged.metrics['http_reqs']!.values['count']).toBe(sum('http_reqs', 'count'));
      // every request of every runner, setup and teardown included, and nothing else
      expect(merged.metrics['http_reqs']!.values['count']).toBe(received());
      // the segments split the arrival rate: the whole test's iterations, once each
      const iterations = merged.metrics['iterations']!.values['count']! + (merged.metrics['dropped_iterations']?.values['count'] ?? 0);
      expect(iterations).toBeGreaterThanOrEqual(RATE * SECONDS - 1);
      expect(iterations).toBeLessThanOrEqual(RATE * SECONDS + 1);
      expect(merged.metrics['checks']!.values['passes']).toBe(sum('checks', 'passes'));
      expect(merged.checks.filter((c) => c.fails > 0)).toEqual([]);
      const verdictOf = (metric: string, expr: string) => merged.thresholds.find((t) => t.metric === metric && t.expr === expr);
      expect(verdictOf('checks', 'rate>0.99')?.ok).toBe(true);
      expect(verdictOf('http_req_failed', 'rate<0.01')?.ok).toBe(true);
      expect(verdictOf('http_req_duration', 'p(95)<500')?.basis).toBe('bounded');
      expect(text).toMatch(/^mixed: 3 instance\(s\)/);
    });

    it('nothing the runners created is left on the server', async () => {
      const c = target.config;
      const auth = { authorization: `Basic ${Buffer.from(`${c.user}:${c.password}`).toString('base64')}`, 'content-type': 'application/json; charset=utf-8' };
      for (const kind of ['projects', 'passwords']) {
        const res = await fetch(`${c.target}/index.php/api/v6/${kind}/search/pmv6-load.json`, { headers: auth });
        const found = (await res.json()) as Array<{ name: string }>;
        expect(found, JSON.stringify(found)).toBeInstanceOf(Array);
        expect(found.filter((p) => /^pmv6-load-(?!seed)/.test(p.name)).map((p) => p.name)).toEqual([]);
      }
    });

    it('the initializer archives and inspects the script with the runners environment; no secret in that archive, the output or the summaries', async () => {
      const c = target.config;
      const secrets = [c.password, Buffer.from(`${c.user}:${c.password}`).toString('base64')];
      const archive = join(dir, 'mixed.js.archived.tar');
      // The operator's initializer: `k6 archive <script> -O <tar> <arguments> && k6 inspect
      // --execution-requirements <tar>`, with the runners' environment (k6 archive leaves the
      // system environment out: the init code must not need the credentials).
      const argLine = `-e PMV6_TARGET=${c.target} -e PMV6_RATE=${RATE} -e PMV6_DURATION=${SECONDS}s`;
      const { stdout: requirements } = await run(
        'sh',
        [
          '-c',
          `${K6!.path} archive --log-output=none ${script} -O ${archive} ${argLine} && ${K6!.path} inspect --execution-requirements --log-output=none ${archive}`,
        ],
        { cwd: dir, env: { PATH: process.env['PATH'] ?? '', PMV6_USER: c.user, PMV6_PASSWORD: c.password, K6_NO_USAGE_REPORT: 'true' }, timeout: 120_000 },
      );
      expect(JSON.parse(requirements) as unknown).toHaveProperty('totalDuration');
      const { stdout: listing } = await run('tar', ['-tf', archive]);
      expect(listing).toMatch(/metadata\.json/);
      const { stdout: contents } = await run('tar', ['-xOf', archive], { maxBuffer: 64 * 1024 * 1024 });
      expect(contents).toContain(`PMV6_TARGET`);
      const outputs = [
        contents,
        ...runners.map((r) => r.stdout + r.stderr),
        ...readdirSync(dir)
          .filter((f) => f.endsWith('.json'))
          .map((f) => readFileSync(join(dir, f), 'utf8')),
      ];
      for (const out of outputs) for (const s of secrets) expect(out.includes(s)).toBe(false);
    }, 150_000);
  });
}
