import { readFile } from 'node:fs/promises';
import { UsageError } from './errors.ts';
import { OUTCOMES, type Outcome } from './outcomes.ts';

/** How an expectations file learns which clause IDs exist (the catalogue's clauseById). */
export type ClauseLookup = (id: string) => { retired?: boolean } | undefined;

/** The part of a run result that expectations read. */
export interface ClauseOutcomes {
  clauses: ReadonlyArray<{ clause: { id: string }; outcome: Outcome }>;
}

/** Clause ID → why the target is known to deviate from it. */
export type Expectations = ReadonlyMap<string, string>;

export type ExpectationStatus = 'expected-failure' | 'stale-expectation' | 'unconfirmed';

export interface ClauseExpectation {
  reason: string;
  status: ExpectationStatus;
}

export interface ExpectationReport {
  byClause: Map<string, ClauseExpectation>;
  expectedFailures: string[];
  stale: string[];
  unconfirmed: string[];
}

/** A bad expectations file is a usage error: the CLI maps it to exit 2. */
export class ExpectationsError extends UsageError {
  override name = 'ExpectationsError';
}

export async function loadExpectations(file: string, clauseById: ClauseLookup): Promise<Expectations> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ExpectationsError(`cannot read the expectations file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ExpectationsError(`${file} is not JSON: ${(e as Error).message}`);
  }
  return parseExpectations(value, clauseById, file);
}

export function parseExpectations(value: unknown, clauseById: ClauseLookup, source = 'expectations'): Expectations {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ExpectationsError(`${source} must be a JSON object mapping clause IDs to reasons, e.g. {"PAG-03": "why"}`);
  }
  const out = new Map<string, string>();
  for (const [id, reason] of Object.entries(value)) {
    const clause = clauseById(id);
    if (!clause) throw new ExpectationsError(`${source}: "${id}" is not a clause ID (see pmv6 clauses)`);
    if (clause.retired) throw new ExpectationsError(`${source}: clause ${id} is retired; remove it`);
    if (typeof reason !== 'string' || reason.trim() === '') {
      throw new ExpectationsError(`${source}: the reason for ${id} must be a non-empty string`);
    }
    out.set(id, reason);
  }
  return out;
}

// Decision: only a fail or a warn confirms a known deviation; a pass (or an observed INFO clause)
// makes it stale (the deviation is gone, the entry should be removed); any other outcome
// (unverifiable, disabled, setup-failed, harness-error, untested) neither confirms nor refutes it.
export function expectationStatus(outcome: Outcome): ExpectationStatus {
  const view = OUTCOMES[outcome];
  if (view.verdict === 'violation' || view.verdict === 'violation-under-strict') return 'expected-failure';
  if (view.holds) return 'stale-expectation';
  return 'unconfirmed';
}

export function applyExpectations(result: ClauseOutcomes, expectations: Expectations): ExpectationReport {
  const report: ExpectationReport = { byClause: new Map(), expectedFailures: [], stale: [], unconfirmed: [] };
  for (const c of result.clauses) {
    const reason = expectations.get(c.clause.id);
    if (reason === undefined) continue;
    const status = expectationStatus(c.outcome);
    report.byClause.set(c.clause.id, { reason, status });
    if (status === 'expected-failure') report.expectedFailures.push(c.clause.id);
    else if (status === 'stale-expectation') report.stale.push(c.clause.id);
    else report.unconfirmed.push(c.clause.id);
  }
  for (const [id, reason] of expectations) {
    if (!report.byClause.has(id)) {
      report.byClause.set(id, { reason, status: 'unconfirmed' });
      report.unconfirmed.push(id);
    }
  }
  return report;
}
