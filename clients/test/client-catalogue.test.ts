import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { CLAUSES } from '../../suites/catalogue/clauses.ts';
import { CLIENT_AREAS, CLIENT_CLAUSES, clientClauseById, normalise } from '../../suites/catalogue/client-clauses.ts';

const spec = normalise(readFileSync(fileURLToPath(new URL('../../suites/catalogue/spec/password-manager-api-v6.md', import.meta.url)), 'utf8'));
const specText = readFileSync(fileURLToPath(new URL('../../suites/catalogue/spec/password-manager-api-v6.md', import.meta.url)), 'utf8');
const headings = specText
  .split('\n')
  .filter((l) => l.startsWith('## '))
  .map((l) => normalise(l.slice(3)));
const REGISTER = fileURLToPath(new URL('../../suites/catalogue/client-ids.json', import.meta.url));

describe('client clause catalogue', () => {
  test.each(CLIENT_CLAUSES.map((c) => [c.id, c.quote] as const))('%s quotes the spec word for word', (_id, quote) => {
    expect(quote.trim()).not.toBe('');
    expect(spec).toContain(normalise(quote));
  });

  test.each(CLIENT_CLAUSES.map((c) => [c.id, c.section] as const))('%s names a section of the spec', (_id, section) => {
    const [top, ...rest] = section.split(' › ');
    expect(headings).toContain(top);
    for (const part of rest) expect(spec).toContain(part);
  });

  test('IDs are AREA-NN of a client area, unique, numbered from 01 without gaps', () => {
    const ids = CLIENT_CLAUSES.map((c) => c.id);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    for (const c of CLIENT_CLAUSES) {
      expect(c.id).toMatch(/^[A-Z]+-\d{2}$/);
      expect(Object.keys(CLIENT_AREAS)).toContain(c.area);
      expect(c.id.split('-')[0]).toBe(c.area);
    }
    for (const area of Object.keys(CLIENT_AREAS)) {
      const numbers = CLIENT_CLAUSES.filter((c) => c.area === area)
        .map((c) => Number(c.id.split('-')[1]))
        .sort((a, b) => a - b);
      expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    }
  });

  test('IDs equal the register in client-ids.json exactly, retired ones included', () => {
    expect(existsSync(REGISTER)).toBe(true);
    const issued = JSON.parse(readFileSync(REGISTER, 'utf8')) as string[];
    expect(issued.filter((id, i) => issued.indexOf(id) !== i)).toEqual([]);
    expect(CLIENT_CLAUSES.map((c) => c.id).sort()).toEqual([...issued].sort());
  });

  test('client areas and IDs never collide with the server catalogue', () => {
    const serverAreas = new Set(CLAUSES.map((c) => c.area as string));
    for (const area of Object.keys(CLIENT_AREAS)) expect(serverAreas.has(area)).toBe(false);
  });

  test('levels, behaviours and needsControl follow the catalogue format', () => {
    for (const c of CLIENT_CLAUSES) {
      expect(['MUST', 'SHOULD', 'INFO'], c.id).toContain(c.level);
      expect(c.behaviour, c.id).toMatch(/^[a-z]/);
      expect(c.behaviour, c.id).not.toMatch(/\.\s*$/);
      expect(c.needsControl, c.id).toBe(false);
    }
    const b = CLIENT_CLAUSES.map((c) => c.behaviour);
    expect(b.filter((x, i) => b.indexOf(x) !== i)).toEqual([]);
  });

  test('lookup finds a clause and returns undefined for an unknown ID', () => {
    expect(clientClauseById('CLI-05')?.level).toBe('MUST');
    expect(clientClauseById('PAG-03')).toBeUndefined();
  });
});
