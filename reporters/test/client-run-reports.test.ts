import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import type { ClientRunResult } from '../../clients/run/run-client.ts';
import { writeClientRunReports } from '../clients/write.ts';
import { fixtureRun, PRINTED_SECRET } from './client-runs.ts';

// The reports of `pmv6 clients run` (issue 37): client-run.json, report.html, summary.md and
// junit.xml from one real run, each showing the failed checks with the output lines they stand on
// and the requests with their status, none showing the secret the command printed.
let result: ClientRunResult;
let files: Record<string, string>;
let summaryFile: string;

beforeAll(async () => {
  result = await fixtureRun();
  const dir = await mkdtemp(join(tmpdir(), 'pmv6-client-run-reports-'));
  summaryFile = join(dir, 'step-summary.md');
  const written = await writeClientRunReports(join(dir, 'out'), result, '0', { GITHUB_STEP_SUMMARY: summaryFile });
  files = Object.fromEntries(await Promise.all(written.map(async (f) => [f.split('/').pop()!, await readFile(f, 'utf8')])));
}, 60_000);

describe('clients run reports', () => {
  test('the run behind them: normal passes, maintenance prints a secret, proxy-502 crashes, slow hangs', () => {
    const failedIds = Object.fromEntries(result.scenarios.map((r) => [r.scenario, r.checks.filter((c) => !c.held).map((c) => c.id)]));
    expect(failedIds).toEqual({ normal: [], maintenance: ['secret', 'message'], 'proxy-502': ['crash', 'message'], slow: ['hang'] });
    expect(result.scenarios.find((r) => r.scenario === 'slow')!.sent).toEqual([
      expect.objectContaining({ method: 'POST', status: null, end: 'killed while waiting' }),
    ]);
  });

  test('four files, none with the printed secret; each failed check with its output lines', () => {
    expect(Object.keys(files).sort()).toEqual(['client-run.json', 'junit.xml', 'report.html', 'summary.md']);
    for (const [name, text] of Object.entries(files)) {
      expect(text, name).not.toContain(PRINTED_SECRET);
      expect(text, name).toMatch(/«redacted»/);
    }
    const html = files['report.html']!;
    expect(html).toContain('could not create {&#34;name&#34;:&#34;x&#34;,&#34;project_id&#34;:1,&#34;password&#34;:&#34;«redacted»&#34;}: 503');
    expect(html).toMatch(/SyntaxError/);
    expect(html).toContain('POST /index.php/api/v6/passwords.json</td><td>502');
    expect(html).toContain('killed while waiting');
    expect(html).not.toContain('<script>alert');
    expect(html).toMatch(/exits non-zero with a message/);
    const md = files['summary.md']!;
    expect(md).toMatch(/^## ❌ pmv6 clients run: NOT CONFORMANT \(exit 1\)/);
    expect(md).toMatch(/\| maintenance \| fails-cleanly \| \*\*not as expected\*\* \| 1 \| 1 \| no secret, message \|/);
    expect(md).toMatch(/line \d+: could not create/);
    expect(md).toMatch(/line \d+: SyntaxError/);
  });

  test('summary.md is appended to GITHUB_STEP_SUMMARY', async () => {
    expect(await readFile(summaryFile, 'utf8')).toBe(`${files['summary.md']}\n`);
  });

  test('junit.xml: a suite per scenario, a failure per failed check, valid against the kept XSD (xmllint)', async () => {
    const xml = files['junit.xml']!;
    expect(xml.match(/<testsuite /g)).toHaveLength(4);
    expect(xml.match(/<failure /g)).toHaveLength(5);
    expect(xml).toMatch(/<failure message="[^"]*GET|POST[^"]*still waiting/);
    const dir = await mkdtemp(join(tmpdir(), 'pmv6-client-run-junit-'));
    const file = join(dir, 'junit.xml');
    await import('node:fs/promises').then((fs) => fs.writeFile(file, xml));
    execFileSync('xmllint', ['--noout', '--schema', fileURLToPath(new URL('../schema/junit.xsd', import.meta.url)), file], { stdio: 'pipe' });
  });
});
