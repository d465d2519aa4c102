import { EXIT } from '../../core/errors.ts';
import { applyExpectations, type ExpectationReport, type Expectations } from '../../core/expectations.ts';
import { OUTCOMES, type Outcome, zeroCounts } from '../../core/outcomes.ts';

import type { RunResult } from './run-suites.ts';

/**
 * Decision (issue 27): a run whose only violations are known deviations (--expectations) is not
 * labelled CONFORMANT: the label says the server deviates where it was told it would, and a CI
 * that greps the label cannot take it for a clean one. The exit code stays 0.
 */
export type VerdictLabel = 'CONFORMANT' | 'CONFORMANT WITH KNOWN DEVIATIONS' | 'NOT CONFORMANT' | 'INCONCLUSIVE' | 'STALE EXPECTATIONS' | 'NOTHING CHECKED';

export interface Verdict {
  label: VerdictLabel;
  exitCode: number;
  counts: Record<Outcome, number>;
  strict?: boolean;
  /** present when known deviations were given (--expectations) */
  expectations?: ExpectationReport;
}

// Exit 1 only for a failed MUST (or a SHOULD under --strict); harness errors and failed setups
// make the run inconclusive (exit 3), never a violation of the server. What each outcome does is
// its `verdict` in core/outcomes.ts: an observed INFO clause (`info`) does neither.
//
// Known deviations: a listed clause that fails or warns does not fail the run. A listed clause
// that passes is a stale expectation; under --strict it fails the run (exit 1) like pytest's
// strict xfail, and the label says so (issue 36: the printed verdict matches the exit code): it
// is STALE EXPECTATIONS, not CONFORMANT and not NOT CONFORMANT.
/**
 * Decision (issue 36): a run in which no clause was checked (every test disabled, skipped or not
 * selected, no harness error) proves nothing: NOTHING CHECKED, exit 2, never CONFORMANT.
 */
export function nothingChecked(result: RunResult, verdict: Verdict): Verdict {
  const unchecked = new Set<Outcome>(['disabled', 'skipped-unverifiable', 'untested']);
  if (result.harnessErrors.length > 0 || result.clauses.some((c) => !unchecked.has(c.outcome))) return verdict;
  return { ...verdict, label: 'NOTHING CHECKED', exitCode: EXIT.usage };
}

export function verdictOf(result: RunResult, strict = false, expectations?: Expectations): Verdict {
  const counts = zeroCounts();
  for (const c of result.clauses) counts[c.outcome]++;
  const report = expectations ? applyExpectations(result, expectations) : undefined;
  const expected = new Set(report?.expectedFailures ?? []);
  const extra = { strict, ...(report ? { expectations: report } : {}) };
  const violates = (c: RunResult['clauses'][number]) => {
    const effect = OUTCOMES[c.outcome].verdict;
    return effect === 'violation' || (strict && effect === 'violation-under-strict' && c.clause.level === 'SHOULD');
  };
  const violated = result.clauses.some((c) => !expected.has(c.clause.id) && violates(c));
  const deviations = result.clauses.filter((c) => expected.has(c.clause.id) && violates(c)).length;
  if (violated) return { label: 'NOT CONFORMANT', exitCode: EXIT.violations, counts, ...extra };
  const stale = strict && (report?.stale.length ?? 0) > 0;
  if (stale) return { label: 'STALE EXPECTATIONS', exitCode: EXIT.violations, counts, ...extra };
  const broken = result.clauses.filter((c) => OUTCOMES[c.outcome].verdict === 'inconclusive').length + result.harnessErrors.length;
  if (broken > 0) return { label: 'INCONCLUSIVE', exitCode: EXIT.inconclusive, counts, ...extra };
  return { label: deviations > 0 ? 'CONFORMANT WITH KNOWN DEVIATIONS' : 'CONFORMANT', exitCode: EXIT.conformant, counts, ...extra };
}
