import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { registerSecret } from '../../../core/redact.ts';
import { verdictText } from '../../../reporters/console.ts';
import { resultsDocument } from '../../../reporters/results-json.ts';
import type { RunConfig } from '../../harness/config.ts';
import { type RunResult, runSuites } from '../run-suites.ts';
import { verdictOf } from '../verdict.ts';

const password = randomBytes(12).toString('hex');
registerSecret(password, 'password');
const config: RunConfig = { target: 'http://127.0.0.1:9', user: 'admin', password, runId: 'selftest', seed: 1, readOnly: false, timeoutMs: 1000 };
const files = { include: ['suites/runner/test/fake/*.fake-suite.ts'], exclude: [] };

const outcome = (r: RunResult, id: string) => r.clauses.find((c) => c.clause.id === id)?.outcome;

describe('runner', () => {
  test('maps every kind of test result to its outcome, and a harness crash is never a violation', async () => {
    const result = await runSuites(config, { files });
    expect(outcome(result, 'PAG-03')).toBe('pass');
    expect(outcome(result, 'PAG-04')).toBe('fail');
    expect(outcome(result, 'PAG-05')).toBe('harness-error');
    expect(outcome(result, 'PAG-07')).toBe('setup-failed');
    expect(outcome(result, 'ERR-04')).toBe('skipped-unverifiable');
    expect(outcome(result, 'ADDR-02')).toBe('warn');
    expect(outcome(result, 'AUTH-04')).toBe('skipped-unverifiable');
    expect(outcome(result, 'SIZE-03')).toBe('setup-failed');
    expect(outcome(result, 'GEN-01')).toBe('untested');
    expect(outcome(result, 'GEN-02')).toBe('info');
    expect(outcome(result, 'RES-16')).toBe('pass');
    expect(outcome(result, 'RES-17')).toBe('info');
    expect(outcome(result, 'GEN-05')).toBe('warn');
    const gen02 = result.clauses.find((c) => c.clause.id === 'GEN-02')?.tests;
    expect(gen02).toEqual([
      expect.objectContaining({ outcome: 'info', observed: { 'PATCH /passwords.json': 405, reply: { status: 405, type: 'Method Not Allowed' } } }),
    ]);
    const verdict = verdictOf(result);
    expect(verdict.label).toBe('NOT CONFORMANT');
    expect(verdict.exitCode).toBe(1);

    const doc = JSON.stringify(resultsDocument(result, verdict, { pmv6Version: '0' }));
    const text = verdictText(result, verdict);
    for (const out of [doc, text]) {
      expect(out).not.toContain(password);
      expect(out).not.toContain(Buffer.from(`admin:${password}`).toString('base64'));
    }
    expect(text).toMatch(/FAIL \[PAG-04\] MUST/);
    expect(text).toMatch(/expected: status 201/);
  }, 60_000);

  test('without a violation, a harness error makes the run inconclusive (exit 3); --strict fails a SHOULD', async () => {
    const result = await runSuites({ ...config, selection: { skip: ['PAG-04', 'ADDR-02', 'AUTH'] } }, { files });
    expect(outcome(result, 'PAG-04')).toBe('disabled');
    expect(verdictOf(result)).toMatchObject({ label: 'INCONCLUSIVE', exitCode: 3 });
    const should = await runSuites({ ...config, selection: { only: ['ADDR-02', 'PAG-03'] } }, { files });
    expect(verdictOf(should)).toMatchObject({ label: 'CONFORMANT', exitCode: 0 });
    expect(verdictOf(should, true)).toMatchObject({ label: 'NOT CONFORMANT', exitCode: 1 });
  }, 60_000);

  test('observed INFO clauses neither fail a run nor make it inconclusive, also under --strict', async () => {
    const result = await runSuites({ ...config, selection: { only: ['GEN-02', 'RES-16', 'RES-17', 'PAG-03'] } }, { files });
    expect(['GEN-02', 'RES-16', 'RES-17', 'PAG-03'].map((id) => outcome(result, id))).toEqual(['info', 'pass', 'info', 'pass']);
    for (const strict of [false, true]) {
      const verdict = verdictOf(result, strict);
      expect(verdict).toMatchObject({ label: 'CONFORMANT', exitCode: 0 });
      expect(verdict.counts).toMatchObject({ pass: 2, info: 2, fail: 0, warn: 0 });
    }
    expect(verdictText(result, verdictOf(result))).toMatch(/verdict: CONFORMANT: 2\/\d+ clauses passed, 0 failed, 2 observed, 0 warned, /);
  }, 60_000);
});
