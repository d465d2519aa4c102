import { EXIT, type Outcome } from './outcomes.ts';
import type { RunResult } from './run-suites.ts';

export interface Verdict {
  label: 'CONFORMANT' | 'NOT CONFORMANT' | 'INCONCLUSIVE';
  exitCode: number;
  counts: Record<Outcome, number>;
}

// Exit 1 only for a failed MUST (or a SHOULD under --strict); harness errors and failed setups
// make the run inconclusive (exit 3), never a violation of the server.
export function verdictOf(result: RunResult, strict = false): Verdict {
  const counts: Record<Outcome, number> = {
    pass: 0,
    fail: 0,
    warn: 0,
    'skipped-unverifiable': 0,
    disabled: 0,
    'setup-failed': 0,
    'harness-error': 0,
    untested: 0,
  };
  for (const c of result.clauses) counts[c.outcome]++;
  const violated = result.clauses.some(
    (c) => c.outcome === 'fail' || (strict && c.outcome === 'warn' && c.clause.level === 'SHOULD'),
  );
  if (violated) return { label: 'NOT CONFORMANT', exitCode: EXIT.violations, counts };
  const broken = counts['harness-error'] + counts['setup-failed'] + result.harnessErrors.length;
  if (broken > 0) return { label: 'INCONCLUSIVE', exitCode: EXIT.inconclusive, counts };
  return { label: 'CONFORMANT', exitCode: EXIT.conformant, counts };
}
