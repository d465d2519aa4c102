import { describe, expect, test } from 'vitest';
import { verdictOf } from '../../suites/runner/verdict.ts';
import { verdictText } from '../console.ts';
import { renderHtml } from '../html.ts';
import { renderSummary } from '../markdown.ts';
import { exposureFindings, resultsDocument } from '../results-json.ts';
import { syntheticRun } from './runs.ts';

// Issue 35: cross-user exposure of personal data opens every report, whatever its level, and is
// told apart in results.json by its clause's tag.

describe('cross-user exposure of personal data', () => {
  const run = syntheticRun({ 'GEN-17': 'warn', 'GEN-03': 'fail' });
  const doc = resultsDocument(run, verdictOf(run), { pmv6Version: '0.1.0' });

  test('results.json tags the clause, and only a failed or warned one is a finding', () => {
    const clause = doc.clauses.find((c) => c.id === 'GEN-17');
    expect(clause?.tags).toEqual(['exposure']);
    expect(exposureFindings(doc.clauses).map((c) => c.id)).toEqual(['GEN-17']);
    const quiet = syntheticRun();
    expect(exposureFindings(resultsDocument(quiet, verdictOf(quiet), { pmv6Version: '0.1.0' }).clauses)).toEqual([]);
  });

  test('the console, summary.md and report.html show it before anything else', () => {
    const text = verdictText(run, verdictOf(run));
    expect(text.indexOf('CROSS-USER EXPOSURE OF PERSONAL DATA (1)')).toBeGreaterThanOrEqual(0);
    expect(text.indexOf('CROSS-USER EXPOSURE')).toBeLessThan(text.indexOf('area'));
    expect(text).toMatch(/\[GEN-17\] SHOULD/);
    const md = renderSummary(doc);
    expect(md).toMatch(/^## [^\n]+\n\n[^\n]+\n\n### ⚠️ Cross-user exposure of personal data[^\n]*\(1\)\n\n- \*\*GEN-17\*\* SHOULD/);
    const html = renderHtml(doc);
    expect(html.indexOf('id="exposure"')).toBeGreaterThan(0);
    expect(html.indexOf('id="exposure"')).toBeLessThan(html.indexOf('id="matrix"'));
    expect(renderHtml(resultsDocument(syntheticRun(), verdictOf(syntheticRun()), { pmv6Version: '0.1.0' }))).not.toContain('id="exposure"');
  });
});
