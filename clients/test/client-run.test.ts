import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { compiledCheckout } from '../../package/checkout-build.mjs';
import { crashTrace, DEFAULT_SCENARIOS, hideSecrets, listRead, unwalkedLists } from '../run/expectations.ts';
import { runClient, type ScenarioResult } from '../run/run-client.ts';
import type { ScenarioName } from '../scenarios.ts';

// `pmv6 clients run`: the test client as a command (clients/test-client/cli-client.ts) passes
// every default scenario; each bug seen in real clients (issue 29) is caught under the scenario
// that shows it, with the command's output and the check that failed.
// Decision (runtime, issue 38): the client as the checkout's compiled JavaScript, as bin/pmv6.js
// runs the CLI (package/checkout-build.mjs), not compiled through tsx in each of its processes;
// through tsx where that tree cannot be made.
const ROOT = resolve(import.meta.dirname, '../..');
const compiled = await compiledCheckout(ROOT);
const CLIENT = compiled
  ? [process.execPath, join(compiled, 'clients', 'test-client', 'cli-client.js')]
  : [process.execPath, '--import', 'tsx', join(ROOT, 'clients', 'test-client', 'cli-client.ts')];
// The test client gives up on a reply after 5 s; the slow scenario holds each reply 30 s.
const DEADLINE_MS = 12_000;

const failed = (r: ScenarioResult) => r.checks.filter((c) => !c.held).map((c) => c.what);
const by = (rs: ScenarioResult[], s: ScenarioName) => rs.find((r) => r.scenario === s)!;

// Every case has kits (reference servers) of its own and mostly waits on the client: side by side.
describe.concurrent('pmv6 clients run', () => {
  test('the conforming client passes every default scenario: exit 0, no finding', async () => {
    const result = await runClient({
      command: CLIENT,
      scenarios: [...DEFAULT_SCENARIOS],
      deadlineMs: DEADLINE_MS,
      jobs: 3,
    });
    for (const r of result.scenarios) expect(failed(r), `${r.scenario}: ${r.output.join('\n')}`).toEqual([]);
    expect(result.exitCode).toBe(0);
    // It walked the 45 seeded passwords (3 pages) under normal, and failed with the server's message under maintenance.
    expect(by(result.scenarios, 'normal').output.join('\n')).toMatch(/\b4[5-9] passwords/);
    expect(by(result.scenarios, 'maintenance').output.join('\n')).toMatch(/Maintenance Mode/);
  }, 120_000);

  test.each<[string, ScenarioName, string[]]>([
    ['crash-on-missing-next', 'normal', ['exits 0', 'prints no crash trace']],
    ['no-timeout', 'slow', ['gives up on a reply held 12 s (a timeout of its own)']],
    [
      'swallow-errors',
      'maintenance',
      ['fails (a non-zero exit), not an empty or partial result', "shows the server's error (its message, or the status of an HTML page)"],
    ],
    ['first-page-only', 'normal', ['reads every page of each list it reads']],
    ['secret-in-error', 'maintenance', ['prints no secret (a password, a key, a password it sent)']],
  ])(
    'the bug %s is caught under %s',
    async (bug, scenario, checks) => {
      const result = await runClient({ command: [...CLIENT, '--bug', bug], scenarios: [scenario], deadlineMs: DEADLINE_MS });
      const r = result.scenarios[0]!;
      expect(failed(r)).toEqual(checks);
      expect(result.exitCode).toBe(1);
      // The report shows what the command printed, and never a secret.
      if (bug === 'crash-on-missing-next' || bug === 'secret-in-error') expect(r.output.length).toBeGreaterThan(0);
      // …and the requests it sent, in order, with their answers.
      if (bug !== 'no-timeout') expect(r.sent[0]).toMatchObject({ method: 'POST', target: expect.stringMatching(/\/index\.php\/api\/v6\/passwords\.json$/) });
      for (const line of r.output) expect(hideSecrets(line)).toBe(line);
    },
    60_000,
  );

  // Issue 37: the failures clients meet in the field. A client that trusts every reply to be whole
  // JSON with a known type crashes on each, and is shown under each with its trace.
  test('the bug crash-on-odd-replies is caught under each proxy page, the unknown error type and the cut body', async () => {
    const scenarios: ScenarioName[] = ['proxy-502', 'proxy-503', 'proxy-504', 'error-extra-fields', 'connection-closed'];
    const result = await runClient({ command: [...CLIENT, '--bug', 'crash-on-odd-replies'], scenarios, deadlineMs: DEADLINE_MS, jobs: 3 });
    for (const r of result.scenarios) {
      expect(failed(r), r.scenario).toContain('prints no crash trace');
      const trace = r.checks.find((c) => c.what === 'prints no crash trace')!;
      expect(trace.detail).toBe('Node.js stack');
      expect(trace.lines!.length, r.scenario).toBeGreaterThan(0);
    }
    expect(result.exitCode).toBe(1);
  }, 60_000);

  test('a command that cannot start is a failed scenario, not a crash of the kit', async () => {
    const result = await runClient({ command: ['/nonexistent/client'], scenarios: ['normal'], deadlineMs: DEADLINE_MS });
    expect(result.exitCode).toBe(1);
    expect(result.scenarios[0]!.output.join('\n')).toMatch(/cannot start \/nonexistent\/client/);
  }, 30_000);
});

describe('clients run: judgements', () => {
  test('crash traces of the common runtimes are recognised; a clean error line is none', () => {
    expect(crashTrace('Traceback (most recent call last):\n  File "c.py", line 3')?.name).toBe('Python traceback');
    expect(crashTrace('TypeError: x\n    at main (/app/client.js:10:5)')?.name).toBe('Node.js stack');
    expect(crashTrace('panic: runtime error\n\ngoroutine 1 [running]:')?.name).toBe('Go panic');
    expect(crashTrace('\tat com.acme.Client.list(Client.java:42)')?.name).toBe('Java stack');
    expect(crashTrace('error: 503 This installation is in Maintenance Mode.')?.name).toBeUndefined();
  });

  test('a list read to its last page is walked; one that stopped early is named with the pages read', () => {
    const link = (last: number) => ({
      link: `<http://x/index.php/api/v6/passwords/page/1.json>; rel="first", <http://x/index.php/api/v6/passwords/page/${last}.json>; rel="last"`,
    });
    const reads = [listRead('/passwords.json', 200, link(3), '[]')!, listRead('/passwords/page/2.json', 200, link(3), '[]')!];
    expect(unwalkedLists(reads)).toEqual([{ list: '/passwords', read: [1, 2], last: 3 }]);
    expect(unwalkedLists([...reads, listRead('/passwords/page/3.json', 200, link(3), '[]')!])).toEqual([]);
    expect(listRead('/passwords/count.json', 200, link(3), '{}')).toBeUndefined();
    expect(listRead('/passwords/7.json', 200, {}, '{"id":7}')).toBeUndefined();
  });

  test('keyed credentials in output are secrets even when the kit never saw them', () => {
    expect(hideSecrets('sent {"name":"a","password":"hunter2-xyz"}')).toBe('sent {"name":"a","password":"«redacted»"}');
    expect(hideSecrets('login with password=abcd1234&user=x')).toBe('login with password=«redacted»&user=x');
    expect(hideSecrets('3 passwords listed')).toBe('3 passwords listed');
  });
});
