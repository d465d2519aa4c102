import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { AREAS, type Area, CLAUSES, clauseById, clausesMatching, normalise, RESTATED, UNTESTABLE } from '../clauses.ts';

const SPEC_COPY = fileURLToPath(new URL('../spec/password-manager-api-v6.md', import.meta.url));
// ARCHITECTURE.md: the normative spec lives at ../shared/spec/ beside the repository.
const SHARED_SPEC = fileURLToPath(new URL('../../../../shared/spec/password-manager-api-v6.md', import.meta.url));
const IDS_FILE = fileURLToPath(new URL('../ids.json', import.meta.url));

const specText = readFileSync(SPEC_COPY, 'utf8');
const spec = normalise(specText);
const headings = specText
  .split('\n')
  .filter((l) => l.startsWith('## '))
  .map((l) => normalise(l.slice(3)));
const register = JSON.parse(readFileSync(IDS_FILE, 'utf8')) as unknown;
const active = CLAUSES.filter((c) => !c.retired);

describe('normalise', () => {
  test('collapses runs of whitespace, line breaks included, and trims', () => {
    expect(normalise('  a \t b\n\n c  ')).toBe('a b c');
  });

  test('keeps table separators, backticks and quotation marks', () => {
    expect(normalise('| `Link` | rel="next" |')).toBe('| `Link` | rel="next" |');
  });
});

describe('spec copy', () => {
  test.skipIf(!existsSync(SHARED_SPEC))('equals the shared spec byte for byte', () => {
    expect(readFileSync(SPEC_COPY).equals(readFileSync(SHARED_SPEC))).toBe(true);
  });
});

describe('quotes', () => {
  test.each(CLAUSES.map((c) => [c.id, c.quote] as const))('%s quotes the spec word for word', (_id, quote) => {
    expect(quote.trim()).not.toBe('');
    expect(spec).toContain(normalise(quote));
  });

  test.each(UNTESTABLE.map((u) => [u.quote] as const))('untestable "%s" is in the spec', (quote) => {
    expect(spec).toContain(normalise(quote));
  });

  test.each(RESTATED.map((r) => [r.quote] as const))('restated "%s" is in the spec', (quote) => {
    expect(spec).toContain(normalise(quote));
  });

  test('every untestable entry says why', () => {
    for (const u of UNTESTABLE) expect(u.why.trim(), u.quote).not.toBe('');
  });
});

describe('sections', () => {
  const sections = [...CLAUSES.map((c) => [c.id, c.section] as const), ...RESTATED.map((r) => [r.quote, r.section] as const)];
  test.each(sections)('%s names a section of the spec', (_who, section) => {
    const [top, ...rest] = section.split(' › ');
    expect(headings).toContain(top);
    for (const part of rest) expect(spec).toContain(part);
  });
});

describe('IDs', () => {
  test("match AREA-NN with a known area that equals the clause's area", () => {
    for (const c of CLAUSES) {
      expect(c.id).toMatch(/^[A-Z]+-\d{2}$/);
      const prefix = c.id.split('-')[0] as Area;
      expect(Object.keys(AREAS), c.id).toContain(prefix);
      expect(c.area, c.id).toBe(prefix);
    }
  });

  test('are unique', () => {
    const ids = CLAUSES.map((c) => c.id);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  test('equal the register in ids.json exactly, active and retired alike', () => {
    expect(Array.isArray(register)).toBe(true);
    const issued = register as string[];
    expect(
      issued.filter((id, i) => issued.indexOf(id) !== i),
      'duplicates in ids.json',
    ).toEqual([]);
    expect([...CLAUSES.map((c) => c.id)].sort()).toEqual([...issued].sort());
  });

  test('are numbered from 01 without gaps within each area', () => {
    // Retired clauses stay in CLAUSES, so a gap means an ID was deleted instead of retired.
    for (const area of Object.keys(AREAS)) {
      const numbers = CLAUSES.filter((c) => c.area === area)
        .map((c) => Number(c.id.split('-')[1]))
        .sort((a, b) => a - b);
      expect(numbers, area).toEqual(numbers.map((_, i) => i + 1));
    }
  });
});

describe('fields', () => {
  test('levels are MUST, SHOULD or INFO', () => {
    for (const c of CLAUSES) expect(['MUST', 'SHOULD', 'INFO'], c.id).toContain(c.level);
  });

  test('behaviour is non-empty, starts lower-case and has no trailing period', () => {
    for (const c of CLAUSES) {
      expect(c.behaviour.trim(), c.id).not.toBe('');
      expect(c.behaviour, c.id).toMatch(/^[a-z]/);
      expect(c.behaviour, c.id).not.toMatch(/\.\s*$/);
      expect(c.behaviour, c.id).toBe(c.behaviour.trim());
    }
  });

  test('behaviours are unique, so no statement is catalogued twice', () => {
    const b = CLAUSES.map((c) => c.behaviour);
    expect(b.filter((x, i) => b.indexOf(x) !== i)).toEqual([]);
  });

  test('needsControl is a boolean', () => {
    for (const c of CLAUSES) expect(typeof c.needsControl, c.id).toBe('boolean');
  });

  test('dependsOn and coveredBy name active clauses', () => {
    for (const c of CLAUSES) for (const d of c.dependsOn ?? []) expect(clauseById(d)?.retired, `${c.id} → ${d}`).toBeFalsy();
    for (const c of CLAUSES) for (const d of c.dependsOn ?? []) expect(clauseById(d), `${c.id} → ${d}`).toBeDefined();
    for (const r of RESTATED) {
      for (const id of r.coveredBy) {
        expect(clauseById(id), `${r.quote} → ${id}`).toBeDefined();
        expect(clauseById(id)?.retired, `${r.quote} → ${id}`).toBeFalsy();
      }
    }
  });

  test('at least 60 clauses are active', () => {
    expect(active.length).toBeGreaterThanOrEqual(60);
  });

  test('every area has an active clause', () => {
    for (const area of Object.keys(AREAS))
      expect(
        active.some((c) => c.area === area),
        area,
      ).toBe(true);
  });
});

describe('lookup', () => {
  test('clauseById finds a clause and returns undefined for an unknown ID', () => {
    expect(clauseById('PAG-03')?.behaviour).toBe('omit rel="prev" on the first page');
    expect(clauseById('NOPE-99')).toBeUndefined();
  });

  test('clausesMatching selects by area and by ID, in catalogue order, without duplicates', () => {
    const auth = clausesMatching(['AUTH']);
    expect(auth.length).toBeGreaterThan(0);
    expect(auth.every((c) => c.area === 'AUTH')).toBe(true);
    const mixed = clausesMatching(['PAG-03', 'VER', 'PAG-03']);
    expect(mixed.map((c) => c.id)).toEqual(active.filter((c) => c.id === 'PAG-03' || c.area === 'VER').map((c) => c.id));
  });

  test('clausesMatching returns nothing for an unknown selector', () => {
    expect(clausesMatching(['NOPE-99'])).toEqual([]);
    expect(clausesMatching([])).toEqual([]);
  });
});
