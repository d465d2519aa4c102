import { relative } from 'node:path';
import type { Reporter, TestCase, TestModule, TestSpecification, Vitest } from 'vitest/node';
import { scrub } from '../../core/redact.ts';
import { CLAUSES, clauseById } from '../catalogue/clauses.ts';
import { READ_ONLY_MARK, READ_ONLY_NOTE } from '../harness/assert.ts';
import type { CleanupReport } from '../harness/fixtures.ts';
import { type RunProgress, type TestResult, testOutcome } from '../harness/results.ts';

export interface CollectedRun {
  tests: TestResult[];
  harnessErrors: string[];
  /** What the files' sessions deleted and left behind. */
  cleanup: CleanupReport;
  /** Requests the suite files sent (API, control, the oracle's look-ups). */
  requests: number;
  /** The same, by suite file. */
  requestsByFile: Record<string, number>;
}

// Gathers every conformance test's result and meta; reports progress through `onModuleDone`.
export class Collector implements Reporter {
  readonly run: CollectedRun = { tests: [], harnessErrors: [], cleanup: { deleted: [], leftovers: [] }, requests: 0, requestsByFile: {} };

  constructor(
    private readonly root: string,
    private readonly onModuleDone: (file: string, results: TestResult[]) => void = () => {},
    private readonly onTestDone: (result: TestResult) => void = () => {},
    private readonly onStart: (vitest: Vitest) => void = () => {},
    private readonly onProgress: (progress: RunProgress) => void = () => {},
  ) {}

  readonly #started = Date.now();
  #filesTotal = 0;
  #filesDone = 0;
  /** requests of the tests done in the file running */
  #inFile = 0;

  onInit(vitest: Vitest): void {
    this.onStart(vitest);
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.#filesTotal = specifications.length;
  }

  onTestCaseResult(test: TestCase): void {
    this.onTestDone(this.toResult(relative(this.root, test.module.moduleId), test));
    this.#inFile += test.meta().pmv6Requests ?? 0;
    this.#progress();
  }

  #progress(): void {
    this.onProgress({
      requests: this.run.requests + this.#inFile,
      filesDone: this.#filesDone,
      filesTotal: this.#filesTotal,
      elapsedMs: Date.now() - this.#started,
    });
  }

  onTestModuleEnd(module: TestModule): void {
    const file = relative(this.root, module.moduleId);
    const results: TestResult[] = [];
    const errors = module.errors().map((e) => scrub(e.message));
    for (const test of module.children.allTests()) results.push(this.toResult(file, test));
    // A file-level error with tests that never ran is a failed beforeAll: those tests could not
    // be set up. A file-level error with no tests (it did not even load) is the harness's.
    const stranded = results.filter((r) => r.outcome === 'disabled' && r.note === undefined);
    const cleanup = module.meta().pmv6Cleanup;
    if (cleanup) {
      this.run.cleanup.deleted.push(...cleanup.deleted);
      this.run.cleanup.leftovers.push(...cleanup.leftovers);
    }
    if (errors.length > 0 && stranded.length > 0 && errors.every((e) => e.includes(READ_ONLY_MARK))) {
      // A --read-only run refused the file's setup: its tests are disabled, not failed.
      for (const r of stranded) r.note = READ_ONLY_NOTE;
    } else if (errors.length > 0 && stranded.length > 0) {
      for (const r of stranded) {
        r.outcome = 'setup-failed';
        r.failure = { kind: 'setup', message: `the file's setup failed: ${errors.join('\n')}` };
      }
    } else {
      for (const message of errors) this.run.harnessErrors.push(`${file}: ${message}`);
    }
    const oracle = module.meta().pmv6Oracle;
    if (oracle) {
      results.push(...oracle.findings.flatMap((f) => oracleResult(file, f)));
      for (const e of oracle.errors) this.run.harnessErrors.push(`${file}: ${scrub(e)}`);
    }
    this.run.requests += module.meta().pmv6Requests ?? 0;
    this.run.requestsByFile[file] = module.meta().pmv6Requests ?? 0;
    this.run.tests.push(...results);
    this.#filesDone++;
    this.#inFile = 0;
    this.onModuleDone(file, results);
    this.#progress();
  }

  onTestRunEnd(_modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<{ message?: string }>): void {
    for (const e of unhandledErrors) this.run.harnessErrors.push(`unhandled error: ${scrub(String(e.message ?? e))}`);
  }

  private toResult(file: string, test: TestCase): TestResult {
    const meta = test.meta().pmv6;
    const result = test.result();
    const level = meta?.level ?? 'MUST';
    const outcome = meta ? testOutcome(level, result.state, meta) : 'harness-error';
    const note = meta?.note ?? (result.state === 'skipped' ? result.note : undefined);
    const failure =
      meta?.failure ?? (result.state === 'failed' ? { kind: 'harness' as const, message: scrub(result.errors.map((e) => e.message).join('\n')) } : undefined);
    const out: TestResult = {
      title: test.name,
      file,
      clauses: meta?.clauses ?? [],
      level,
      outcome: meta ? outcome : result.state === 'passed' ? 'harness-error' : outcome,
      durationMs: Math.round(test.diagnostic()?.duration ?? 0),
    };
    if (!meta) out.note = 'test carries no clause metadata (declare it with clauseTest)';
    else if (note) out.note = note;
    if (failure && result.state === 'failed') out.failure = failure;
    if (meta?.observed) out.observed = meta.observed;
    return out;
  }
}

export function knownClauseIds(): Set<string> {
  return new Set(CLAUSES.filter((c) => !c.retired).map((c) => c.id));
}

/**
 * A clause the response oracle saw broken in a file's traffic, as a result of its own: it fails
 * (MUST) or warns (SHOULD, INFO) the clause like a test, with the first exchanges that broke it.
 */
export function oracleResult(file: string, f: { clause: string; count: number; failures: TestResult['failure'][] }): TestResult[] {
  const clause = clauseById(f.clause);
  const first = f.failures[0];
  if (!clause || !first) return [];
  return [
    {
      title: `[${clause.id}] ${clause.level} ${clause.behaviour} (every response: ${f.count} in this file's traffic)`,
      file,
      clauses: [clause.id],
      level: clause.level,
      outcome: clause.level === 'MUST' ? 'fail' : 'warn',
      durationMs: 0,
      note: `response oracle: ${f.count} exchange(s) broke the clause${f.failures.length > 1 ? `; ${f.failures.length} shown` : ''}`,
      failure: first,
    },
  ];
}
