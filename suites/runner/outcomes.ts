import type { Level } from '../catalogue/clauses.ts';
import type { Exchange } from '../harness/exchange.ts';

export type Outcome =
  | 'pass'
  | 'fail'
  | 'warn'
  | 'skipped-unverifiable'
  | 'disabled'
  | 'setup-failed'
  | 'harness-error'
  | 'untested';

export interface FailureRecord {
  kind: 'violation' | 'setup' | 'harness';
  message: string;
  expected?: string;
  actual?: string;
  exchange?: Exchange;
  curl?: string;
}

// What a conformance test leaves in its vitest task meta for the runner.
export interface TestMeta {
  clauses: string[];
  level: Level;
  outcome?: 'skipped-unverifiable' | 'disabled';
  note?: string;
  failure?: FailureRecord;
  observed?: Record<string, unknown>;
}

declare module 'vitest' {
  interface TaskMeta {
    pmv6?: TestMeta;
  }
}

export interface TestResult {
  title: string;
  file: string;
  clauses: string[];
  level: Level;
  outcome: Outcome;
  durationMs: number;
  note?: string;
  failure?: FailureRecord;
  observed?: Record<string, unknown>;
}

// A failed test's outcome follows its level: a MUST violation fails, a SHOULD or INFO one warns.
export function testOutcome(level: Level, state: 'passed' | 'failed' | 'skipped' | 'pending', meta: TestMeta | undefined): Outcome {
  if (state === 'passed') return 'pass';
  if (state === 'skipped' || state === 'pending') return meta?.outcome ?? 'disabled';
  const kind = meta?.failure?.kind ?? 'harness';
  if (kind === 'setup') return 'setup-failed';
  if (kind === 'harness') return 'harness-error';
  return level === 'MUST' ? 'fail' : 'warn';
}

// A clause takes the weightiest outcome among its tests: a shown violation outweighs a harness
// error in another test of the same clause, which outweighs a pass; a clause passes when some of
// its tests passed and the others could not be verified on this target.
const WEIGHT: Record<Outcome, number> = {
  fail: 7,
  warn: 6,
  'harness-error': 5,
  'setup-failed': 4,
  pass: 3,
  'skipped-unverifiable': 2,
  disabled: 1,
  untested: 0,
};

export function clauseOutcome(outcomes: Outcome[]): Outcome {
  let best: Outcome = 'untested';
  for (const o of outcomes) if (WEIGHT[o] > WEIGHT[best]) best = o;
  return best;
}

export const EXIT = { conformant: 0, violations: 1, usage: 2, inconclusive: 3 } as const;
