import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { CLAUSES } from '../../catalogue/clauses.ts';
import { declaredTests, testFiles } from '../inventory.ts';

const SUITES = fileURLToPath(new URL('../../', import.meta.url));
const declared = declaredTests(SUITES);
const active = CLAUSES.filter((c) => !c.retired);

// The suite tests itself: every clause has a test, every test cites existing clauses, and every
// conformance test is declared through clauseTest (so it carries its clause IDs in its meta).
describe('suite self-checks', () => {
  test('every active clause has at least one test', () => {
    const covered = new Set(declared.flatMap((t) => t.ids));
    expect(active.filter((c) => !covered.has(c.id)).map((c) => c.id)).toEqual([]);
  });

  test('every test cites at least one clause, and only active clauses of the catalogue', () => {
    const known = new Set(active.map((c) => c.id));
    for (const t of declared) {
      expect(t.ids.length, `${t.file}: ${t.behaviour}`).toBeGreaterThan(0);
      for (const id of t.ids) expect(known.has(id), `${t.file} cites ${id}`).toBe(true);
    }
  });

  test('conformance files declare tests only through clauseTest', () => {
    for (const file of testFiles(SUITES)) {
      const text = readFileSync(file, 'utf8');
      expect(text, file).not.toMatch(/^\s*(test|it)(\.\w+)?\(/m);
      expect(text, file).toMatch(/clauseTest\(/);
    }
  });

  test('behaviours read as imperatives without a final period', () => {
    for (const t of declared) {
      expect(t.behaviour, t.file).toMatch(/^[a-z]/);
      expect(t.behaviour, t.file).not.toMatch(/\.$/);
    }
  });
});
