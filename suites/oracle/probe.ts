/**
 * Probes ask the oracle: a test that provokes places for clauses the oracle judges ends by
 * asking whether any exchange of the file so far broke them, and fails with the first that did.
 * Its file then declares those clauses, so a run of `--only` those clauses, and the kill matrix,
 * run the file whose traffic reaches the places.
 */

import { clauseById } from '../catalogue/clauses.ts';
import { ViolationError } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { activeOracle as oracle } from './oracle.ts';

export function expectOracleClean(ids: readonly string[]): void {
  const found = oracle()?.pending(ids);
  if (!found) return;
  const first = found.failures[0]!;
  throw new ViolationError({
    expected: `${first.expected ?? 'the clause'} [${found.clause}, every response]`,
    actual: `${first.actual ?? first.message} (${found.count} exchange(s) of this file)`,
    ...(first.exchange ? { exchange: first.exchange } : {}),
  });
}

/**
 * Tests that hold the file's traffic so far to the clauses the oracle judges: one test a clause,
 * so a finding fails only its own clause. `behaviour` says which traffic (it follows each
 * clause's own behaviour in the title).
 */
export function oracleTest(ids: string[], behaviour: string): void {
  // In a file whose tests run side by side, after every test declared before it.
  for (const id of ids) clauseTest(id, `${clauseById(id)?.behaviour ?? id}: ${behaviour}`, () => expectOracleClean([id]), { afterOthers: true });
}
