import { fileURLToPath } from 'node:url';
import { startVitest } from 'vitest/node';
import { CLAUSES, type Clause } from '../catalogue/clauses.ts';
import type { RunConfig } from '../harness/config.ts';
import { Collector, type CollectedRun } from './collector.ts';
import { CONFORMANCE_EXCLUDE, CONFORMANCE_INCLUDE } from './layout.ts';
import { clauseOutcome, type Outcome, type TestResult } from './outcomes.ts';

export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ClauseResult {
  clause: Clause;
  outcome: Outcome;
  tests: TestResult[];
  note?: string;
}

export interface RunResult {
  config: RunConfig;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  clauses: ClauseResult[];
  tests: TestResult[];
  harnessErrors: string[];
}

export interface RunSuitesOptions {
  onModuleDone?: (file: string, results: TestResult[]) => void;
  onTestDone?: (result: TestResult) => void;
  /** Other suite files than the conformance suites (the runner's own tests use this). */
  files?: { include: string[]; exclude: string[] };
}

// Runs every conformance suite against the configured target with vitest's Node API; the
// suites read the configuration through inject('pmv6'). Files run one at a time: suites change
// server-wide settings (maintenance mode, API switch) that would disturb a concurrent file.
export async function runSuites(config: RunConfig, options: RunSuitesOptions = {}): Promise<RunResult> {
  const started = Date.now();
  const collector = new Collector(PACKAGE_ROOT, options.onModuleDone, options.onTestDone);
  const vitest = await startVitest(
    'test',
    [],
    {
      config: false,
      root: PACKAGE_ROOT,
      run: true,
      watch: false,
      include: options.files?.include ?? CONFORMANCE_INCLUDE,
      exclude: options.files?.exclude ?? CONFORMANCE_EXCLUDE,
      reporters: [collector],
      provide: { pmv6: config },
      fileParallelism: false,
      // One worker imports the harness once for every file; each file still has its own session.
      isolate: false,
      testTimeout: Math.max(30_000, config.timeoutMs * 3),
      hookTimeout: Math.max(30_000, config.timeoutMs * 3),
      passWithNoTests: true,
    },
    { logLevel: 'silent' },
  );
  await vitest.close();
  return summarise(config, started, collector.run);
}

export function summarise(config: RunConfig, started: number, run: CollectedRun): RunResult {
  const byClause = new Map<string, TestResult[]>();
  for (const t of run.tests) for (const id of t.clauses) byClause.set(id, [...(byClause.get(id) ?? []), t]);
  const clauses: ClauseResult[] = CLAUSES.filter((c) => !c.retired).map((clause) => {
    const tests = byClause.get(clause.id) ?? [];
    return { clause, tests, outcome: clauseOutcome(tests.map((t) => t.outcome)) };
  });
  // A clause that depends on another (an HMAC refusal on HMAC acceptance) proves nothing while
  // its dependency does not pass: a server that refuses every signature "refuses" a bad one too.
  const outcomeOf = new Map(clauses.map((c) => [c.clause.id, c.outcome]));
  for (const c of clauses) {
    const unmet = (c.clause.dependsOn ?? []).filter((id) => outcomeOf.get(id) !== 'pass');
    if (unmet.length > 0 && ['pass', 'fail', 'warn'].includes(c.outcome)) {
      c.outcome = 'skipped-unverifiable';
      c.note = `depends on ${unmet.join(', ')}, which did not pass`;
    }
  }
  const finished = Date.now();
  return {
    config,
    startedAt: new Date(started).toISOString(),
    finishedAt: new Date(finished).toISOString(),
    durationMs: finished - started,
    clauses,
    tests: run.tests,
    harnessErrors: run.harnessErrors,
  };
}
