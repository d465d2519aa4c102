import { describe, expect, test } from 'vitest';
import { OUTCOME_ORDER, OUTCOMES, type Outcome } from '../../../core/outcomes.ts';
import { clauseById } from '../../catalogue/clauses.ts';
import type { RunConfig } from '../../harness/config.ts';
import { clauseOutcome, type TestResult, testOutcome } from '../../harness/results.ts';
import { summarise } from '../run-suites.ts';

const config: RunConfig = { target: 'http://127.0.0.1:9', user: 'admin', password: 'x', runId: 'selftest', seed: 1, readOnly: false, timeoutMs: 1000 };

function result(id: string, outcome: Outcome): TestResult {
  const level = clauseById(id)?.level ?? 'MUST';
  return { title: `[${id}] ${level} t`, file: 'suites/x.test.ts', clauses: [id], level, outcome, durationMs: 1 };
}

const outcomeOf = (tests: TestResult[], id: string) => summarise(config, Date.now(), { tests, harnessErrors: [] }).clauses.find((c) => c.clause.id === id);

describe('outcomes', () => {
  test('a passed INFO test is observed (info), a passed MUST or SHOULD test passes', () => {
    expect(testOutcome('INFO', 'passed', { clauses: ['GEN-02'], level: 'INFO', behaviour: 'b' })).toBe('info');
    expect(testOutcome('MUST', 'passed', { clauses: ['GEN-01'], level: 'MUST', behaviour: 'b' })).toBe('pass');
    expect(testOutcome('SHOULD', 'passed', { clauses: ['ADDR-02'], level: 'SHOULD', behaviour: 'b' })).toBe('pass');
    // A deviation found by an INFO test warns (the kill matrix counts that as killed).
    expect(testOutcome('INFO', 'failed', { clauses: ['GEN-02'], level: 'INFO', behaviour: 'b', failure: { kind: 'violation', message: 'm' } })).toBe('warn');
  });

  test('info sits above pass and below every problem; an INFO clause never passes', () => {
    expect(clauseOutcome(['pass', 'info'], 'INFO')).toBe('info');
    expect(clauseOutcome(['pass'], 'INFO')).toBe('info');
    expect(clauseOutcome(['pass', 'skipped-unverifiable'], 'MUST')).toBe('pass');
    for (const problem of ['fail', 'warn', 'harness-error', 'setup-failed'] as const) {
      expect(clauseOutcome(['info', problem, 'pass'], 'INFO')).toBe(problem);
      expect(OUTCOMES[problem].weight).toBeGreaterThan(OUTCOMES.info.weight);
    }
    expect(clauseOutcome(['info', 'skipped-unverifiable', 'disabled'], 'INFO')).toBe('info');
    expect(clauseOutcome([], 'INFO')).toBe('untested');
  });

  test('the weights are distinct: a clause outcome never depends on the order of its tests', () => {
    expect(new Set(OUTCOME_ORDER.map((o) => OUTCOMES[o].weight)).size).toBe(OUTCOME_ORDER.length);
  });

  test('a dependency holds when it passed or, an INFO clause, was observed (AUTH-03 for the HMAC clauses)', () => {
    expect(clauseById('AUTH-03')?.level).toBe('INFO');
    expect(clauseById('AUTH-04')?.dependsOn).toContain('AUTH-03');
    const observed = outcomeOf([result('AUTH-03', 'info'), result('AUTH-04', 'pass')], 'AUTH-04');
    expect(observed).toMatchObject({ outcome: 'pass' });
    expect(observed?.note).toBeUndefined();
    for (const unmet of ['warn', 'skipped-unverifiable', 'harness-error'] as const) {
      const c = outcomeOf([result('AUTH-03', unmet), result('AUTH-04', 'fail')], 'AUTH-04');
      expect(c, unmet).toMatchObject({ outcome: 'skipped-unverifiable', note: 'depends on AUTH-03, which no test showed to hold' });
    }
    // An INFO clause that depends on AUTH-03 is voided as well when AUTH-03 does not hold.
    const info = clauseById('AUTH-05');
    expect(info).toMatchObject({ level: 'INFO', dependsOn: ['AUTH-03'] });
    expect(outcomeOf([result('AUTH-03', 'warn'), result('AUTH-05', 'info')], 'AUTH-05')?.outcome).toBe('skipped-unverifiable');
    expect(outcomeOf([result('AUTH-03', 'info'), result('AUTH-05', 'info')], 'AUTH-05')?.outcome).toBe('info');
  });

  test("a dependency one of whose tests held stays met when a sibling test of it warns: the dependents keep their own verdicts", () => {
    const c = outcomeOf([result('AUTH-03', 'info'), result('AUTH-03', 'warn'), result('AUTH-04', 'pass')], 'AUTH-04');
    expect(c).toMatchObject({ outcome: 'pass' });
    expect(outcomeOf([result('AUTH-03', 'info'), result('AUTH-03', 'warn')], 'AUTH-03')?.outcome).toBe('warn');
  });
});
