import { describe, expect, test } from 'vitest';
import { verdictOf } from '../../suites/runner/verdict.ts';
import { diffResults } from '../diff.ts';
import { resultsDocument } from '../results-json.ts';
import { syntheticRun } from './runs.ts';

const doc = (outcomes: Parameters<typeof syntheticRun>[0]) => {
  const run = syntheticRun(outcomes);
  return resultsDocument(run, verdictOf(run), { pmv6Version: '0.1.0' });
};

describe('diffing two runs', () => {
  test('a clause only one run has is absent in the other; a retired or new clause is never a regression', () => {
    const before = doc({});
    const after = doc({ 'PAG-03': 'fail' });
    const gone = after.clauses.splice(
      after.clauses.findIndex((c) => c.id === 'PAG-04'),
      1,
    )[0]!;
    before.clauses = before.clauses.filter((c) => c.id !== 'PAG-05');
    expect(diffResults(before, after)).toEqual([
      { id: 'PAG-03', level: 'MUST', before: 'pass', after: 'fail', regression: true, expectedFailure: false },
      { id: 'PAG-05', level: 'MUST', before: 'absent', after: 'pass', regression: false, expectedFailure: false },
      { id: gone.id, level: 'MUST', before: 'pass', after: 'absent', regression: false, expectedFailure: false },
    ]);
  });

  test('a SHOULD or INFO that went from pass to warn or fail is listed, never a regression', () => {
    const changes = diffResults(doc({}), doc({ 'ADDR-02': 'warn', 'AUTH-03': 'warn' }));
    expect(changes.map((c) => [c.id, c.regression])).toEqual([
      ['ADDR-02', false],
      ['AUTH-03', false],
    ]);
  });
});
