import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { parseExpectations } from '../../core/expectations.ts';
import { clauseById } from '../../suites/catalogue/clauses.ts';
import type { RunResult } from '../../suites/runner/run-suites.ts';
import { verdictOf } from '../../suites/runner/verdict.ts';
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
    expect(md).toMatch(/^## ❌ pmv6: NOT CONFORMANT \(exit 1\)\n\n\d+\/\d+ clauses passed, 2 failed, 2 observed, \d+ warned, 2 unverifiable/);
    expect(md).toMatch(/^\| area \| pass \| fail \| observed \| warn \| unverifiable \| setup failed \| harness error \| untested \|$/m);
    expect(md).toMatch(/^\| PAG Pagination \| 1 \| 1 \| {2}\| {2}\| {2}\| 1 \| 1 \| \d+ \|$/m);
    expect(md).toMatch(/^\| GEN General rules \| {2}\| 1 \| 1 \| 1 \| {2}\| {2}\| {2}\| \d+ \|$/m);
    expect(md).toMatch(/### Failed MUST clauses \(2\)\n\n- \*\*GEN-03\*\* MUST /);
    expect(md).toContain(
      '- **PAG-04** MUST omit rel="next" on the last page\\\n  spec: “On the last page, rel next is not returned.”\\\n  expected status 201; actual status 200\n',
    );
    expect(md).toMatch(/### Warnings \(\d+\)\n\n[\s\S]*\*\*ADDR-02\*\* SHOULD/);
    expect(md).toMatch(/### Unverifiable \(2\)\n\n(- 1 × [^\n]+\n){2}/);
    expect(md).toMatch(/- 1 × depends on AUTH-03, which no test showed to hold: AUTH-04/);
    expect(md).toMatch(/### Harness errors \(1\)/);
  });

  test('a conformant run has a green verdict and no failure sections; its INFO clauses are observations', () => {
    const run = syntheticRun();
    const md = summaryOf(run);
    const info = run.clauses.filter((c) => c.clause.level === 'INFO');
    expect(md).toMatch(
      new RegExp(
        `^## ✅ pmv6: CONFORMANT \\(exit 0\\)\n\n${run.clauses.length - info.length}/${run.clauses.length} clauses passed, 0 failed, ${info.length} observed, 0 warned,`,
      ),
    );
    expect(md.match(/^###.*$/gm)).toEqual([`### Observed: INFO clauses, what the server was seen to do; not passes (${info.length})`]);
  });

  test('lists each observed INFO clause with what its tests recorded, apart from the passes', () => {
    const md = summaryOf(fake);
    const observed = md.slice(md.indexOf('### Observed'));
    expect(observed).toMatch(/^### Observed: [^\n]* \(2\)\n\n/);
    expect(observed).toContain(
      '- **GEN-02** INFO record the reply to a method other than GET, POST, PUT and DELETE\\\n  PATCH /passwords.json = 405; reply = {"status":405,"type":"Method Not Allowed"}\n',
    );
    expect(observed).toMatch(/- \*\*RES-17\*\* INFO [^\n]*\\\n {2}password list item = \\\["id","name"\\\]\n/);
    expect(observed).not.toMatch(/RES-16|GEN-05|PAG-03/);
  });

  test('names expected failures and stale expectations apart from the failures', () => {
    const md = summaryOf(syntheticRun({ 'PAG-04': 'fail' }), true, parseExpectations({ 'PAG-04': 'known: next on last page', 'PAG-03': 'old' }, clauseById));
    expect(md).toMatch(/^## ❌ pmv6: STALE EXPECTATIONS \(exit 1\)/);
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
