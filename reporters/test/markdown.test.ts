import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import type { RunResult } from '../../suites/runner/run-suites.ts';
import { verdictOf } from '../../suites/runner/verdict.ts';
import { parseExpectations } from '../expectations.ts';
import { renderSummary, writeSummary } from '../markdown.ts';
import { resultsDocument } from '../results-json.ts';
import { fakeRun, secretForms, syntheticRun, withSecretTest } from './runs.ts';

let fake: RunResult;
beforeAll(async () => {
  fake = withSecretTest(await fakeRun());
}, 60_000);

const summaryOf = (result: RunResult, strict = false, expectations?: ReturnType<typeof parseExpectations>) =>
  renderSummary(resultsDocument(result, verdictOf(result, strict, expectations), { pmv6Version: '0.1.0' }));

describe('summary.md', () => {
  test('says the verdict, counts by area and outcome, the failed clauses and why clauses were unverifiable', () => {
    const md = summaryOf(fake);
    expect(md).toMatch(/^## ❌ pmv6: NOT CONFORMANT \(exit 1\)\n\n\d+\/\d+ clauses passed, 2 failed, \d+ warned, 2 unverifiable/);
    expect(md).toMatch(/^\| area \| pass \| fail \| warn \| unverifiable \| setup failed \| harness error \| untested \|$/m);
    expect(md).toMatch(/^\| PAG Pagination \| 1 \| 1 \|  \|  \| 1 \| 1 \| \d+ \|$/m);
    expect(md).toMatch(/### Failed MUST clauses \(2\)\n\n- \*\*GEN-03\*\* MUST /);
    expect(md).toContain('- **PAG-04** MUST omit rel="next" on the last page\\\n  spec: “On the last page, rel next is not returned.”\\\n  expected status 201; actual status 200\n');
    expect(md).toMatch(/### Warnings \(\d+\)\n\n[\s\S]*\*\*ADDR-02\*\* SHOULD/);
    expect(md).toMatch(/### Unverifiable \(2\)\n\n(- 1 × [^\n]+\n){2}/);
    expect(md).toMatch(/- 1 × depends on AUTH-03, which did not pass: AUTH-04/);
    expect(md).toMatch(/### Harness errors \(1\)/);
  });

  test('a conformant run has a green verdict and no failure sections', () => {
    const md = summaryOf(syntheticRun());
    expect(md).toMatch(/^## ✅ pmv6: CONFORMANT \(exit 0\)/);
    expect(md).not.toMatch(/###/);
  });

  test('names expected failures and stale expectations apart from the failures', () => {
    const md = summaryOf(syntheticRun({ 'PAG-04': 'fail' }), true, parseExpectations({ 'PAG-04': 'known: next on last page', 'PAG-03': 'old' }));
    expect(md).toMatch(/^## ❌ pmv6: CONFORMANT \(exit 1\)/);
    expect(md).toMatch(/Stale expectations \(listed as known deviations, but passed; they fail the run under --strict\): PAG-03/);
    expect(md).toMatch(/### Known deviations that failed as expected \(1\)\n\n- \*\*PAG-04\*\* MUST [^\n]*\(known deviation: known: next on last page\)\\\n/);
    expect(md).not.toMatch(/Failed MUST clauses/);
  });

  test('escapes Markdown, keeps each item on one line, and holds no secret', () => {
    const md = summaryOf(fake);
    const line = md.split('\n').find((l) => l.startsWith('  expected JSON'));
    expect(line).toBe('  expected JSON; actual \\<html\\> \\\\x07 «redacted:planted secret» \\| \\*bold\\* \\`tick\\`');
    for (const s of secretForms()) expect(md).not.toContain(s);
  });

  test('writeSummary writes DIR/summary.md and appends to $GITHUB_STEP_SUMMARY only when it is set', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pmv6-summary-'));
    const step = join(dir, 'step-summary.md');
    await writeFile(step, 'earlier step\n');
    const doc = resultsDocument(fake, verdictOf(fake), { pmv6Version: '0.1.0' });
    const file = await writeSummary(join(dir, 'out'), doc, { GITHUB_STEP_SUMMARY: step });
    const text = await readFile(file, 'utf8');
    expect(await readFile(step, 'utf8')).toBe(`earlier step\n${text}\n`);
    await writeSummary(join(dir, 'out2'), doc, {});
    expect(await readFile(step, 'utf8')).toBe(`earlier step\n${text}\n`);
  });
});
