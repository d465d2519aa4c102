import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import { UsageError } from '../../core/errors.ts';
import { applyExpectations, ExpectationsError, expectationStatus, loadExpectations, parseExpectations } from '../../core/expectations.ts';

import type { Outcome } from '../../core/outcomes.ts';
import { clauseById } from '../../suites/catalogue/clauses.ts';
import { verdictOf } from '../../suites/runner/verdict.ts';
import { syntheticRun } from './runs.ts';

vi.mock('../../suites/catalogue/clauses.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../suites/catalogue/clauses.ts')>();
  const retired = { ...real.CLAUSES[0]!, id: 'GEN-99', retired: true };
  return { ...real, clauseById: (id: string) => (id === 'GEN-99' ? retired : real.clauseById(id)) };
});

async function file(text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pmv6-expectations-'));
  await writeFile(join(dir, 'expectations.json'), text);
  return join(dir, 'expectations.json');
}

describe('loading known deviations', () => {
  test('reads clause ID → reason', async () => {
    const e = await loadExpectations(await file('{"PAG-03": "prev is sent on page 1", "ADDR-02": "plain http in the lab"}'), clauseById);
    expect([...e]).toEqual([
      ['PAG-03', 'prev is sent on page 1'],
      ['ADDR-02', 'plain http in the lab'],
    ]);
  });

  test.each([
    ['an array', '["PAG-03"]', /must be a JSON object/],
    ['null', 'null', /must be a JSON object/],
    ['a string', '"PAG-03"', /must be a JSON object/],
    ['a non-string reason', '{"PAG-03": 1}', /reason for PAG-03 must be a non-empty string/],
    ['an empty reason', '{"PAG-03": " "}', /reason for PAG-03 must be a non-empty string/],
    ['an unknown clause ID', '{"PAG-3": "x"}', /"PAG-3" is not a clause ID/],
    ['an area instead of an ID', '{"PAG": "x"}', /"PAG" is not a clause ID/],
    ['a retired clause', '{"GEN-99": "x"}', /GEN-99 is retired/],
    ['text that is not JSON', '{PAG-03: x}', /is not JSON/],
  ])('rejects %s with a usage error (exit 2)', async (_what, text, message) => {
    const error = await loadExpectations(await file(text), clauseById).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExpectationsError);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(message);
  });

  test('an unreadable file is a usage error', async () => {
    await expect(loadExpectations('/nonexistent/expectations.json', clauseById)).rejects.toThrow(/cannot read the expectations file .*ENOENT/);
  });
});

describe('applying known deviations', () => {
  test.each<[Outcome, string]>([
    ['fail', 'expected-failure'],
    ['warn', 'expected-failure'],
    ['pass', 'stale-expectation'],
    ['skipped-unverifiable', 'unconfirmed'],
    ['disabled', 'unconfirmed'],
    ['setup-failed', 'unconfirmed'],
    ['harness-error', 'unconfirmed'],
    ['untested', 'unconfirmed'],
  ])('a listed clause that is %s is %s', (outcome, status) => {
    expect(expectationStatus(outcome)).toBe(status);
    const report = applyExpectations(syntheticRun({ 'PAG-03': outcome }), parseExpectations({ 'PAG-03': 'why' }, clauseById));
    expect(report.byClause.get('PAG-03')).toEqual({ reason: 'why', status });
  });

  test('sorts the listed clauses; unlisted clauses get no expectation', () => {
    const run = syntheticRun({ 'PAG-03': 'fail', 'ADDR-02': 'warn', 'PAG-04': 'fail', 'AUTH-04': 'skipped-unverifiable' });
    const report = applyExpectations(run, parseExpectations({ 'PAG-03': 'a', 'ADDR-02': 'b', 'PAG-05': 'c', 'AUTH-04': 'd' }, clauseById));
    expect(report).toMatchObject({ expectedFailures: ['ADDR-02', 'PAG-03'], stale: ['PAG-05'], unconfirmed: ['AUTH-04'] });
    expect(report.byClause.has('PAG-04')).toBe(false);
  });
});

describe('the verdict with known deviations', () => {
  const listed = parseExpectations({ 'PAG-03': 'known', 'ADDR-02': 'known SHOULD' }, clauseById);

  test('without expectations nothing changes', () => {
    expect(verdictOf(syntheticRun({ 'PAG-03': 'fail' }))).toMatchObject({ label: 'NOT CONFORMANT', exitCode: 1, strict: false });
    expect(verdictOf(syntheticRun({ 'PAG-03': 'fail' })).expectations).toBeUndefined();
  });

  test('an expected failure does not fail the run, also under --strict, and the label says the server deviates', () => {
    const run = syntheticRun({ 'PAG-03': 'fail', 'ADDR-02': 'warn' });
    expect(verdictOf(run, false, listed)).toMatchObject({ label: 'CONFORMANT WITH KNOWN DEVIATIONS', exitCode: 0 });
    expect(verdictOf(run, true, listed)).toMatchObject({ label: 'CONFORMANT WITH KNOWN DEVIATIONS', exitCode: 0 });
    // A listed SHOULD that only warned is no deviation without --strict; under --strict it is one.
    const should = parseExpectations({ 'ADDR-02': 'known SHOULD' }, clauseById);
    expect(verdictOf(syntheticRun({ 'ADDR-02': 'warn' }), false, should)).toMatchObject({ label: 'CONFORMANT', exitCode: 0 });
    expect(verdictOf(syntheticRun({ 'ADDR-02': 'warn' }), true, should)).toMatchObject({ label: 'CONFORMANT WITH KNOWN DEVIATIONS', exitCode: 0 });
    expect(verdictOf(run, false, listed).counts.fail).toBe(1);
  });

  test('a failure that is not listed still fails the run', () => {
    expect(verdictOf(syntheticRun({ 'PAG-03': 'fail', 'PAG-04': 'fail' }), false, listed)).toMatchObject({ label: 'NOT CONFORMANT', exitCode: 1 });
    expect(verdictOf(syntheticRun({ 'PAG-03': 'fail', 'ADDR-02': 'warn', 'STAT-02': 'warn' }), true, listed)).toMatchObject({
      label: 'NOT CONFORMANT',
      exitCode: 1,
    });
  });

  test('a stale expectation is reported; it fails the run only under --strict, without calling the server non-conformant', () => {
    const run = syntheticRun({ 'ADDR-02': 'warn' });
    const lax = verdictOf(run, false, listed);
    expect(lax).toMatchObject({ label: 'CONFORMANT', exitCode: 0 });
    expect(lax.expectations?.stale).toEqual(['PAG-03']);
    // The printed label matches the exit code (issue 36).
    expect(verdictOf(run, true, listed)).toMatchObject({ label: 'STALE EXPECTATIONS', exitCode: 1 });
  });

  test('under --strict a stale expectation outweighs an inconclusive run', () => {
    const run = syntheticRun({ 'PAG-05': 'harness-error' });
    expect(verdictOf(run, false, listed)).toMatchObject({ label: 'INCONCLUSIVE', exitCode: 3 });
    expect(verdictOf(run, true, listed)).toMatchObject({ label: 'STALE EXPECTATIONS', exitCode: 1 });
  });

  test('an unconfirmed expectation changes nothing', () => {
    expect(verdictOf(syntheticRun({ 'PAG-03': 'disabled', 'ADDR-02': 'skipped-unverifiable' }), true, listed)).toMatchObject({
      label: 'CONFORMANT',
      exitCode: 0,
    });
  });
});
