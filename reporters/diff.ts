import type { Outcome } from '../core/outcomes.ts';
import type { Level } from '../suites/catalogue/clauses.ts';
import type { ResultsDocument } from './results-json.ts';

export interface OutcomeChange {
  id: string;
  level: Level;
  before: Outcome | 'absent';
  after: Outcome | 'absent';
  /** a MUST that passed and now fails, not listed as a known deviation in the new run */
  regression: boolean;
  expectedFailure: boolean;
}

/** The clauses whose outcome differs between two runs, in the new run's catalogue order. */
export function diffResults(before: ResultsDocument, after: ResultsDocument): OutcomeChange[] {
  const old = new Map(before.clauses.map((c) => [c.id, c]));
  const changes: OutcomeChange[] = [];
  for (const c of after.clauses) {
    const was = old.get(c.id)?.outcome ?? 'absent';
    old.delete(c.id);
    if (was === c.outcome) continue;
    const expectedFailure = c.expectation?.status === 'expected-failure';
    changes.push({
      id: c.id,
      level: c.level,
      before: was,
      after: c.outcome,
      regression: c.level === 'MUST' && was === 'pass' && c.outcome === 'fail' && !expectedFailure,
      expectedFailure,
    });
  }
  for (const c of old.values()) changes.push({ id: c.id, level: c.level, before: c.outcome, after: 'absent', regression: false, expectedFailure: false });
  return changes;
}

export function diffText(before: ResultsDocument, after: ResultsDocument, changes: OutcomeChange[]): string {
  const runs = `old: run ${before.runId} ${before.startedAt} ${before.target.url}\nnew: run ${after.runId} ${after.startedAt} ${after.target.url}`;
  if (changes.length === 0) return `${runs}\nno clause changed its outcome\n`;
  const lines = changes.map(
    (c) =>
      `${c.id.padEnd(8)} ${c.level.padEnd(6)} ${c.before} → ${c.after}` +
      `${c.regression ? '  REGRESSION' : ''}${c.expectedFailure ? '  (known deviation)' : ''}`,
  );
  const regressions = changes.filter((c) => c.regression).length;
  return `${runs}\n${lines.join('\n')}\n${changes.length} clause${changes.length === 1 ? '' : 's'} changed, ${regressions} MUST regressed (pass → fail)\n`;
}
