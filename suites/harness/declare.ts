// What a test's declaration holds besides its body, from its clauses and the run's configuration
// alone: its title, and why the run leaves it out. clauseTest (clause-test.ts) declares every test
// through these; the suite inventory's index (suites/runner/inventory.ts) reads them too, to
// report a file none of whose tests would run without importing it. Light on purpose: `pmv6 run
// --list` loads this and not the client, the schemas or the fixtures.
import type { Clause, Level } from '../catalogue/clauses.ts';
import { selects } from '../catalogue/selection.ts';
import { basicRefused, type RunConfig } from './config.ts';
import type { TestMeta } from './results.ts';

/** A test's title: `[ID, ID] LEVEL behaviour`. */
export function testTitle(ids: readonly string[], level: Level, behaviour: string): string {
  return `[${ids.join(', ')}] ${level} ${behaviour}`;
}

/**
 * Why a test of these clauses is left out of a run with this configuration (declared without a
 * body, skipped with this outcome and note), or undefined when it runs.
 */
export function leftOut(clauses: Clause[], config: RunConfig): Pick<TestMeta, 'outcome' | 'note'> | undefined {
  return !selects(clauses, config.selection)
    ? { outcome: 'disabled', note: 'not selected (--only/--skip)' }
    : clauses.some((c) => c.needsControl) && !config.control
      ? { outcome: 'skipped-unverifiable', note: 'needs the control protocol (--control), which this run does not have' }
      : clauses.some((c) => c.needsBasic) && basicRefused(config) !== undefined
        ? { outcome: 'skipped-unverifiable', note: basicRefused(config)! }
        : undefined;
}
