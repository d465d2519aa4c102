import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseExpectations } from '../../core/expectations.ts';
import { clauseById } from '../../suites/catalogue/clauses.ts';
import { verdictOf } from '../../suites/runner/verdict.ts';
import { resultsDocument } from '../results-json.ts';
import { writeReports } from '../write-reports.ts';
import { fakeRun, secretForms, withSecretTest } from './runs.ts';

describe('pmv6 run --report-dir', () => {
  test('writes results.json, summary.md, report.html and junit.xml, none holding a secret', async () => {
    const result = withSecretTest(await fakeRun());
    const verdict = verdictOf(result, true, parseExpectations({ 'PAG-04': `known ${secretForms()[1]}` }, clauseById));
    const doc = resultsDocument(result, verdict, { pmv6Version: '0.1.0', cleanup: { deleted: 1, leftovers: [] } });
    const dir = await mkdtemp(join(tmpdir(), 'pmv6-reports-'));
    const step = join(dir, 'step-summary.md');
    const written = await writeReports(join(dir, 'out'), doc, { GITHUB_STEP_SUMMARY: step });
    expect(written.map((f) => f.slice(dir.length + 5))).toEqual(['results.json', 'summary.md', 'report.html', 'junit.xml']);
    expect((await readdir(join(dir, 'out'))).sort()).toEqual(['junit.xml', 'report.html', 'results.json', 'summary.md']);
    for (const file of [...written, step]) {
      const text = await readFile(file, 'utf8');
      expect(text).toContain('redacted');
      for (const s of secretForms()) expect(text, file).not.toContain(s);
    }
  }, 60_000);
});
