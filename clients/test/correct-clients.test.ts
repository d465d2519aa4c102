import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { runClient } from '../run/run-client.ts';
import { SCENARIOS, type ScenarioName } from '../scenarios.ts';

// Issue 37: no false alarm, proven on correct clients in four languages (correct-clients/, README
// there). Each creates 32 passwords, pages through every list it reads by Link rel="next", prints
// records with the word "password" in them and makes several calls under one deadline with a
// 10 s timeout each; each passes every scenario with no finding. Under CI a missing toolchain is a
// failure; elsewhere the language is skipped with the reason.
const HERE = join(import.meta.dirname, 'correct-clients');
// Decision (runtime, issue 38): slow first, the one that waits out three timeouts (30 s): it
// runs on one job from the start while the others take the rest.
const ALL = ['slow', ...(Object.keys(SCENARIOS) as ScenarioName[]).filter((s) => s !== 'slow')] as ScenarioName[];
// A request may be held 15 s; under slow each client gives up three calls after 10 s each (30 s
// in all, waiting, beside the other scenarios). Decision: 10 s, not less: on this machine shared
// by five (load 30 on 2 cores) a 5 s timeout fired in scenarios that answer at once.
const DEADLINE_MS = 15_000;
const tmp = mkdtempSync(join(tmpdir(), 'pmv6-correct-clients-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const missing = (tool: string, pkg: string) => {
  const reason = `${tool} is not installed (Debian package ${pkg})`;
  if (process.env.CI === 'true') throw new Error(`${reason}: CI must install it (.ci/run)`);
  return reason;
};

/** The command of each client, or why it cannot run here. */
async function commandOf(lang: string): Promise<string[] | string> {
  switch (lang) {
    case 'python':
      return has('python3') ? ['python3', join(HERE, 'python/client.py')] : missing('python3', 'python3');
    case 'shell':
      return has('curl') ? ['sh', join(HERE, 'shell/client.sh')] : missing('curl', 'curl');
    case 'node':
      return [process.execPath, join(HERE, 'node/client.mjs')];
    default: {
      if (!has('go')) return missing('go', 'golang-go');
      // Go 1.19, standard library only: no module is downloaded (GOPROXY=off), caches under a temp dir.
      const out = join(tmp, 'go-client');
      const env = { ...process.env, GOCACHE: join(tmp, 'gocache'), GOPATH: join(tmp, 'gopath'), GOPROXY: 'off', GOFLAGS: '-mod=mod', CGO_ENABLED: '0' };
      // Decision (runtime, issue 38): built without blocking this process, where the other
      // clients' kits answer meanwhile (with CGO_ENABLED=0 the standard library is compiled too:
      // 7 s of CPU).
      const failed = await new Promise<string | undefined>((resolve) =>
        execFile('go', ['build', '-o', out, '.'], { cwd: join(HERE, 'go'), env, encoding: 'utf8', timeout: 120_000 }, (error, _stdout, stderr) =>
          resolve(error ? stderr || error.message : undefined),
        ),
      );
      if (failed !== undefined) throw new Error(`go build failed: ${failed}`);
      return [out];
    }
  }
}

describe.concurrent('correct clients pass every scenario with no finding', () => {
  test.each(['python', 'go', 'shell', 'node'])(
    '%s',
    async (lang) => {
      const command = await commandOf(lang);
      if (typeof command === 'string') {
        console.warn(`skipped the ${lang} client: ${command}`);
        return;
      }
      const result = await runClient({ command, scenarios: ALL, deadlineMs: DEADLINE_MS, maxMs: 120_000, jobs: 4 });
      for (const r of result.scenarios) {
        const failed = r.checks.filter((c) => !c.held).map((c) => `${c.what}: ${c.detail ?? ''}`);
        expect(failed, `${lang} under ${r.scenario}:\n${r.output.join('\n')}`).toEqual([]);
        expect(r.findings, `${lang} under ${r.scenario}`).toEqual([]);
      }
      const normal = result.scenarios.find((r) => r.scenario === 'normal')!;
      // It did what real clients do: 32 creates, every page of the 77 passwords, 32 deletes.
      expect(normal.sent.filter((s) => s.method === 'POST')).toHaveLength(32);
      expect(normal.sent.filter((s) => s.method === 'GET' && /passwords\/page\/4\.json$/.test(s.target))).toHaveLength(1);
      expect(normal.output.join('\n')).toMatch(/listed \d+ projects/);
      const slow = result.scenarios.find((r) => r.scenario === 'slow')!;
      expect(slow.sent.filter((s) => s.end === 'gave up').length).toBeGreaterThanOrEqual(3);
      expect(slow.ms).toBeGreaterThan(DEADLINE_MS);
      expect(result.exitCode).toBe(0);
    },
    180_000,
  );
});
