import { randomBytes } from 'node:crypto';
import type { Exchange } from '../../core/exchange.ts';
import type { Outcome } from '../../core/outcomes.ts';
import { registerSecret } from '../../core/redact.ts';
import { CLAUSES } from '../../suites/catalogue/clauses.ts';
import type { RunConfig } from '../../suites/harness/config.ts';
import type { TestResult } from '../../suites/harness/results.ts';
import { type RunResult, runSuites } from '../../suites/runner/run-suites.ts';

export const password = randomBytes(12).toString('hex');
/** Put into every kind of field unredacted; no file a reporter writes may contain it. */
export const planted = `planted-${randomBytes(9).toString('hex')}`;
registerSecret(password, 'password');
registerSecret(planted, 'planted secret');

export const secretForms = () => [
  password,
  planted,
  Buffer.from(`admin:${password}`).toString('base64'),
  Buffer.from(`admin:${planted}`).toString('base64'),
  Buffer.from(planted).toString('base64'),
];

export const config: RunConfig = {
  target: 'http://127.0.0.1:9',
  user: 'admin',
  password,
  runId: 'selftest',
  seed: 1,
  readOnly: false,
  timeoutMs: 1000,
};

/** The runner on the fake suites: every outcome, from real vitest results. */
export function fakeRun(overrides: Partial<RunConfig> = {}): Promise<RunResult> {
  return runSuites({ ...config, ...overrides }, { files: { include: ['suites/runner/test/fake/*.fake-suite.ts'], exclude: [] } });
}

// A MUST violation whose every field carries the planted secret, and hostile text for escaping.
export function secretTest(): TestResult {
  const exchange: Exchange = {
    request: {
      method: 'GET',
      url: `http://127.0.0.1:9/index.php/api/v6/projects.json?note=${planted}`,
      headers: { Authorization: `Basic ${Buffer.from(`admin:${planted}`).toString('base64')}`, 'X-Note': planted },
    },
    response: { status: 200, headers: { 'content-type': 'text/html' }, body: `<b>]]></b> & "q" \u0000\u001b\uFFFE\uD800 ${planted}` },
    durationMs: 3,
  };
  return {
    title: '[GEN-03] MUST return every response body as JSON',
    file: 'suites/general/json-bodies.test.ts',
    clauses: ['GEN-03'],
    level: 'MUST',
    outcome: 'fail',
    durationMs: 3,
    note: `note ${planted}`,
    observed: { seen: planted },
    failure: {
      kind: 'violation',
      message: `expected: JSON\nactual:   <html> ${planted}\u0007`,
      expected: 'JSON',
      actual: `<html> \u0007 ${planted} | *bold* \`tick\``,
      exchange,
      curl: `curl -u admin:${planted} http://127.0.0.1:9/`,
    },
  };
}

export function withSecretTest(result: RunResult): RunResult {
  const t = secretTest();
  return {
    ...result,
    tests: [...result.tests, t],
    clauses: result.clauses.map((c) => (c.clause.id === 'GEN-03' ? { ...c, outcome: 'fail', tests: [...c.tests, t] } : c)),
    harnessErrors: [...result.harnessErrors, `suites/x.test.ts: crashed with ${planted}`],
  };
}

/**
 * A run without vitest: every active clause with one test of the given outcome (default pass, and
 * info for an INFO clause, as the runner makes it), an info test with an observation.
 */
export function syntheticRun(outcomes: Record<string, Outcome> = {}, rest: Outcome = 'pass'): RunResult {
  const clauses = CLAUSES.filter((c) => !c.retired).map((clause) => {
    const outcome = outcomes[clause.id] ?? (rest === 'pass' && clause.level === 'INFO' ? 'info' : rest);
    const test: TestResult = {
      title: `[${clause.id}] ${clause.level} ${clause.behaviour}`,
      file: `suites/${clause.area.toLowerCase()}/x.test.ts`,
      clauses: [clause.id],
      level: clause.level,
      outcome,
      durationMs: 5,
      ...(outcome === 'skipped-unverifiable' ? { note: 'needs the control protocol' } : {}),
      ...(outcome === 'info' ? { observed: { [`seen at ${clause.id}`]: { status: 405 } } } : {}),
      ...(['fail', 'warn'].includes(outcome)
        ? { failure: { kind: 'violation' as const, message: 'expected: a\nactual:   b', expected: 'a', actual: 'b' } }
        : {}),
    };
    return { clause, outcome, tests: outcome === 'untested' ? [] : [test] };
  });
  return {
    config,
    startedAt: '2025-01-02T03:04:05.678Z',
    finishedAt: '2025-01-02T03:04:15.678Z',
    durationMs: 10_000,
    clauses,
    tests: clauses.flatMap((c) => c.tests),
    harnessErrors: [],
  };
}
