import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { parseExpectations } from '../../core/expectations.ts';
import { OUTCOME_ORDER } from '../../core/outcomes.ts';
import { AREAS, clauseById } from '../../suites/catalogue/clauses.ts';
import type { RunResult } from '../../suites/runner/run-suites.ts';
import { verdictOf } from '../../suites/runner/verdict.ts';
import { RESULTS_SCHEMA_FILE, readResultsFile, resultsErrors } from '../read-results.ts';
import { type ResultsDocument, resultsDocument, writeResultsJson } from '../results-json.ts';
import { fakeRun, secretForms, withSecretTest } from './runs.ts';

let result: RunResult;
let doc: ResultsDocument;
beforeAll(async () => {
  result = withSecretTest(await fakeRun());
  doc = resultsDocument(result, verdictOf(result), { pmv6Version: '0.1.0' });
}, 60_000);

const clone = (): Record<string, unknown> => JSON.parse(JSON.stringify(doc)) as Record<string, unknown>;

describe('results.json format pmv6-results/2', () => {
  test('a document from a real run validates against the published schema', () => {
    expect(doc.format).toBe('pmv6-results/2');
    expect(resultsErrors(JSON.parse(JSON.stringify(doc)))).toEqual([]);
    const pag04 = doc.clauses.find((c) => c.id === 'PAG-04');
    expect(pag04).toMatchObject({ behaviour: expect.any(String), needsControl: false, outcome: 'fail' });
    expect(doc.clauses.find((c) => c.id === 'AUTH-04')).toMatchObject({ dependsOn: ['AUTH-03'], note: expect.stringMatching(/AUTH-03/) });
    expect(doc.durationMs).toBeGreaterThan(0);
    // An observed INFO clause is info, with what its test recorded; never pass.
    expect(doc.clauses.find((c) => c.id === 'GEN-02')).toMatchObject({
      outcome: 'info',
      tests: [{ outcome: 'info', observed: { 'PATCH /passwords.json': 405 } }],
    });
    expect(doc.verdict.counts).toMatchObject({ info: 2 });
    expect(doc.clauses.filter((c) => c.level === 'INFO' && c.outcome === 'pass')).toEqual([]);
  });

  test('strict, known deviations and cleanup validate too', () => {
    const expectations = parseExpectations({ 'PAG-04': 'paging is broken', 'PAG-03': 'fixed since', 'VER-01': 'not run' }, clauseById);
    const withAll = resultsDocument(result, verdictOf(result, true, expectations), {
      pmv6Version: '0.1.0',
      targetVersion: { version: '6.0' },
      cleanup: { deleted: 3, leftovers: [{ kind: 'user', id: 7, name: 'pmv6-x-user-1', reason: 'users are not deleted' }] },
    });
    expect(resultsErrors(JSON.parse(JSON.stringify(withAll)))).toEqual([]);
    expect(withAll.verdict).toMatchObject({ strict: true, expectedFailures: ['PAG-04'], staleExpectations: ['PAG-03'] });
    expect(withAll.clauses.find((c) => c.id === 'VER-01')?.expectation).toEqual({ reason: 'not run', status: 'unconfirmed' });
  });

  test('the schema knows every outcome of the outcome table, and counts each', async () => {
    type Schema = { $defs: { outcome: { enum: string[] } }; properties: { verdict: { properties: { counts: { required: string[]; properties: object } } } } };
    const schema = JSON.parse(await readFile(RESULTS_SCHEMA_FILE, 'utf8')) as Schema;
    expect(schema.$defs.outcome.enum).toEqual(OUTCOME_ORDER);
    expect(schema.properties.verdict.properties.counts.required).toEqual(OUTCOME_ORDER);
    expect(Object.keys(schema.properties.verdict.properties.counts.properties)).toEqual(OUTCOME_ORDER);
    expect(Object.keys(doc.verdict.counts)).toEqual(OUTCOME_ORDER);
  });

  test('the schema knows every area of the catalogue', async () => {
    const schema = JSON.parse(await readFile(RESULTS_SCHEMA_FILE, 'utf8')) as { $defs: { clause: { properties: { area: { enum: string[] } } } } };
    expect(schema.$defs.clause.properties.area.enum).toEqual(Object.keys(AREAS));
  });

  test.each<[string, (d: Record<string, unknown>) => void, RegExp]>([
    ['a missing field', (d) => delete d.runId, /runId/],
    ['an undocumented field', (d) => (d.extra = 1), /additional properties/],
    ['an unknown outcome', (d) => ((d.clauses as Array<{ outcome: string }>)[0]!.outcome = 'passed'), /clauses\/0\/outcome/],
    ['another format', (d) => (d.format = 'pmv6-results/0'), /format/],
    ['the format before the outcome info', (d) => (d.format = 'pmv6-results/1'), /format/],
    ['counts without info', (d) => delete (d.verdict as { counts: Record<string, number> }).counts.info, /verdict\/counts/],
    ['a password that is not redacted', (d) => ((d.config as { password: string }).password = 'hunter22'), /config\/password/],
    ['a bad date', (d) => (d.startedAt = 'yesterday'), /startedAt/],
    [
      'an unknown expectation status',
      (d) => ((d.clauses as Array<Record<string, unknown>>)[0]!.expectation = { reason: 'r', status: 'maybe' }),
      /expectation\/status/,
    ],
  ])('rejects %s', (_what, mutate, error) => {
    const bad = clone();
    mutate(bad);
    expect(resultsErrors(bad).join('\n')).toMatch(error);
  });

  test('rejects what is not a document at all', () => {
    for (const v of [null, [], 'x', 3, {}]) expect(resultsErrors(v).length).toBeGreaterThan(0);
  });

  test('results.json round-trips through readResultsFile and holds no secret', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pmv6-results-'));
    const file = await writeResultsJson(dir, doc);
    const text = await readFile(file, 'utf8');
    for (const s of secretForms()) expect(text).not.toContain(s);
    expect((await readResultsFile(file)).runId).toBe('selftest');
  });

  test('an unreadable, non-JSON, old-format or invalid file is a one-line usage error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pmv6-results-'));
    const write = async (name: string, text: string) => {
      await writeFile(join(dir, name), text);
      return join(dir, name);
    };
    await expect(readResultsFile(join(dir, 'missing.json'))).rejects.toThrow(/cannot read .*ENOENT/);
    await expect(readResultsFile(await write('a.json', '{'))).rejects.toThrow(/is not JSON/);
    await expect(readResultsFile(await write('b.json', JSON.stringify({ ...clone(), format: 'pmv6-results/0' })))).rejects.toThrow(
      /format pmv6-results\/0; this pmv6 reads pmv6-results\/2/,
    );
    await expect(readResultsFile(await write('b1.json', JSON.stringify({ ...clone(), format: 'pmv6-results/1' })))).rejects.toThrow(
      /format pmv6-results\/1; this pmv6 reads pmv6-results\/2/,
    );
    const invalid = readResultsFile(await write('c.json', JSON.stringify({ ...clone(), seed: -1 })));
    await expect(invalid).rejects.toMatchObject({ name: 'ResultsFileError', message: expect.stringMatching(/^[^\n]*\/seed must be >= 0[^\n]*$/) });
  });
});
