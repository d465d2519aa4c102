import { beforeAll, describe, expect, test } from 'vitest';
import { CLAUSES } from '../../catalogue/clauses.ts';
import { type DeclaredTest, declaredTests } from '../inventory.ts';

const active = CLAUSES.filter((c) => !c.retired);
let declared: DeclaredTest[] = [];

// The suite tests itself, from vitest's own collection of the suites (suites/runner/inventory.ts):
// every clause has a test, every test cites existing clauses through clauseTest's meta, and titles
// read as behaviours.
describe('suite self-checks', () => {
  beforeAll(async () => {
    declared = await declaredTests();
  }, 120_000);

  test('the collection finds the suites', () => {
    expect(new Set(declared.map((t) => t.file.split('/')[1])).size).toBeGreaterThan(10);
    expect(declared.length).toBeGreaterThan(100);
  });

  test('every active clause has at least one test that runs', () => {
    const covered = new Set(declared.filter((t) => t.runs).flatMap((t) => t.ids));
    expect(active.filter((c) => !covered.has(c.id)).map((c) => c.id)).toEqual([]);
  });

  test('every test is declared through clauseTest: it cites at least one clause, and only active clauses of the catalogue', () => {
    const known = new Set(active.map((c) => c.id));
    for (const t of declared) {
      expect(t.ids.length, `${t.file}: ${t.behaviour}`).toBeGreaterThan(0);
      for (const id of t.ids) expect(known.has(id), `${t.file} cites ${id}`).toBe(true);
    }
  });

  test('each test carries the level of the clauses it cites (the strongest)', () => {
    const rank = { MUST: 3, SHOULD: 2, INFO: 1 } as const;
    for (const t of declared) {
      const strongest = Math.max(...t.ids.map((id) => rank[CLAUSES.find((c) => c.id === id)?.level ?? 'INFO']));
      expect(rank[t.level], `${t.file}: ${t.behaviour}`).toBeLessThanOrEqual(strongest);
    }
  });

  test('behaviours read as imperatives without a final period', () => {
    for (const t of declared) {
      expect(t.behaviour, t.file).toMatch(/^[a-z]/);
      expect(t.behaviour, t.file).not.toMatch(/\.$/);
    }
  });
});
