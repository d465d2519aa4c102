import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { type Expectations, parseExpectations } from '../../core/expectations.ts';
import type { Outcome } from '../../core/outcomes.ts';
import { resultsDocument, writeResultsJson } from '../../reporters/results-json.ts';
import { syntheticRun } from '../../reporters/test/runs.ts';
import { clauseById } from '../../suites/catalogue/clauses.ts';
import { verdictOf } from '../../suites/runner/verdict.ts';
import { pmv6 as run } from './spawn-cli.ts';

let dir: string;
let step: string;

// Never the job summary of the CI that runs these tests.
const pmv6 = (args: string[]) => run(args, { GITHUB_STEP_SUMMARY: step });

async function results(name: string, outcomes: Record<string, Outcome>, expectations?: Expectations): Promise<string> {
  const run = syntheticRun(outcomes);
  return writeResultsJson(join(dir, name), resultsDocument(run, verdictOf(run, false, expectations), { pmv6Version: '0.1.0' }));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pmv6-report-cli-'));
  step = join(dir, 'step-summary.md');
  await writeFile(step, '');
});

describe('pmv6 report', () => {
  test('--help explains both forms and exits 0; the command is listed', async () => {
    const r = await pmv6(['report', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/pmv6 report RESULTS\.json --out DIR/);
    expect(r.stdout).toMatch(/pmv6 report --diff OLD\.json NEW\.json/);
    expect((await pmv6(['--help'])).stdout).toMatch(/report\s+render summary\.md/);
  });

  test('re-renders summary.md, report.html and junit.xml from results.json', async () => {
    const file = await results('render', { 'PAG-03': 'fail' });
    const out = join(dir, 'render-out');
    const r = await pmv6(['report', file, '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual([join(out, 'summary.md'), join(out, 'report.html'), join(out, 'junit.xml')]);
    expect(await readFile(join(out, 'summary.md'), 'utf8')).toMatch(/NOT CONFORMANT[\s\S]*\*\*PAG-03\*\*/);
    expect(await readFile(join(out, 'junit.xml'), 'utf8')).toMatch(/<failure message="expected a, actual b" type="MUST">/);
    expect(await readFile(join(out, 'report.html'), 'utf8')).toMatch(/^<!doctype html>/i);
    expect(await readFile(step, 'utf8')).toMatch(/NOT CONFORMANT/);
  });

  test.each([
    [['report'], /give one results file/],
    [['report', 'a.json', 'b.json', '--out', 'x'], /give one results file/],
    [['report', 'a.json'], /--out DIR is required/],
    [['report', '--diff', 'a.json'], /--diff needs exactly two results files/],
    [['report', '--diff', 'a.json', 'b.json', '--out', 'x'], /takes no --out/],
    [['report', '--frob'], /frob/],
  ])('usage error: %j exits 2 with one line', async (args, message) => {
    const r = await pmv6(args);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
  });

  test('an unreadable, non-JSON, invalid or old-format file exits 2 with one clear line', async () => {
    const good = await results('good', {});
    const notJson = join(dir, 'not.json');
    await writeFile(notJson, 'results!');
    const invalid = join(dir, 'invalid.json');
    await writeFile(invalid, JSON.stringify({ ...JSON.parse(await readFile(good, 'utf8')), clauses: 'none' }));
    const old = join(dir, 'old.json');
    await writeFile(old, JSON.stringify({ ...JSON.parse(await readFile(good, 'utf8')), format: 'pmv6-results/0' }));
    for (const [args, message] of [
      [['report', join(dir, 'missing.json'), '--out', dir], /cannot read .*missing\.json: ENOENT/],
      [['report', '--diff', good, notJson], /not\.json is not JSON/],
      [['report', '--diff', invalid, good], /invalid\.json is not a valid pmv6-results\/2 document: \/clauses must be array/],
      [['report', '--diff', good, old], /old\.json is format pmv6-results\/0; this pmv6 reads pmv6-results\/2/],
    ] as const) {
      const r = await pmv6([...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    }
  });

  test('--diff: a MUST that went from pass to fail is a regression (exit 1)', async () => {
    const r = await pmv6(['report', '--diff', await results('d-old', {}), await results('d-new', { 'PAG-03': 'fail', 'ADDR-02': 'warn' })]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^PAG-03 {3}MUST {3}pass → fail {2}REGRESSION$/m);
    expect(r.stdout).toMatch(/^ADDR-02 +SHOULD +pass → warn$/m);
    expect(r.stdout).toMatch(/2 clauses changed, 1 MUST regressed \(pass → fail\)/);
  });

  test('--diff: other changes are listed and exit 0', async () => {
    const r = await pmv6([
      'report',
      '--diff',
      await results('e-old', { 'PAG-03': 'fail', 'ADDR-02': 'warn' }),
      await results('e-new', { 'PAG-04': 'harness-error', 'ADDR-02': 'pass', 'AUTH-01': 'skipped-unverifiable' }),
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^PAG-03 +MUST +fail → pass$/m);
    expect(r.stdout).toMatch(/^PAG-04 +MUST +pass → harness-error$/m);
    expect(r.stdout).toMatch(/^ADDR-02 +SHOULD +warn → pass$/m);
    expect(r.stdout).toMatch(/^AUTH-01 +MUST +pass → skipped-unverifiable$/m);
    expect(r.stdout).toMatch(/4 clauses changed, 0 MUST regressed/);
  });

  test('--diff: a MUST that now fails as a listed known deviation is not a regression', async () => {
    const r = await pmv6([
      'report',
      '--diff',
      await results('f-old', {}),
      await results('f-new', { 'PAG-03': 'fail' }, parseExpectations({ 'PAG-03': 'accepted' }, clauseById)),
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^PAG-03 +MUST +pass → fail {2}\(known deviation\)$/m);
  });

  test('--diff: two runs with the same outcomes', async () => {
    const same = await results('g', {});
    const r = await pmv6(['report', '--diff', same, same]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^old: run selftest [^\n]+\nnew: run selftest [^\n]+\nno clause changed its outcome\n$/);
  });
});
