import type { Exchange } from '../../core/exchange.ts';
import { type Outcome, weightiest } from '../../core/outcomes.ts';
import type { Level } from '../catalogue/clauses.ts';

export interface FailureRecord {
  kind: 'violation' | 'setup' | 'harness';
  message: string;
  expected?: string;
  actual?: string;
  exchange?: Exchange;
  curl?: string;
}

// What a conformance test declares, and leaves for the runner as it runs.
export interface TestMeta {
  clauses: string[];
  level: Level;
  /** what the test checks, as declared (the title is `[IDs] LEVEL behaviour`) */
  behaviour: string;
  outcome?: 'skipped-unverifiable' | 'disabled';
  note?: string;
  failure?: FailureRecord;
  observed?: Record<string, unknown>;
}

/** How far a run has come: what the live progress line shows. */
export interface RunProgress {
  /** requests sent so far: the files done, and the tests done in the file running */
  requests: number;
  filesDone: number;
  filesTotal: number;
  elapsedMs: number;
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

// A test's outcome follows its level: a MUST violation fails, a SHOULD or INFO one warns; an
// INFO test that ran to its end recorded what the server does, which is an observation, not a pass.
export function testOutcome(level: Level, state: 'passed' | 'failed' | 'skipped' | 'pending', meta: TestMeta | undefined): Outcome {
  if (state === 'passed') return level === 'INFO' ? 'info' : 'pass';
  if (state === 'skipped' || state === 'pending') return meta?.outcome ?? 'disabled';
  const kind = meta?.failure?.kind ?? 'harness';
  if (kind === 'setup') return 'setup-failed';
  if (kind === 'harness') return 'harness-error';
  return level === 'MUST' ? 'fail' : 'warn';
}

// A clause takes the weightiest outcome of its tests (core/outcomes.ts). An INFO clause never
// passes: a test of a MUST that also cites it and passed leaves it observed.
export function clauseOutcome(outcomes: Outcome[], level: Level): Outcome {
  const outcome = weightiest(outcomes);
  return level === 'INFO' && outcome === 'pass' ? 'info' : outcome;
}
