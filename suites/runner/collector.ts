import { scrub } from '../../core/redact.ts';
import { clauseById } from '../catalogue/clauses.ts';
import { READ_ONLY_MARK, READ_ONLY_NOTE } from '../harness/assert.ts';
import type { CleanupReport } from '../harness/fixtures.ts';
import { type RunProgress, type TestResult, testOutcome } from '../harness/results.ts';
import type { OracleFinding } from '../oracle/oracle.ts';
import type { CaseRun, FileRun } from './suite-runner.ts';

/** How errorText (./suite-runner.ts) starts a PreconditionError's text. */
const PRECONDITION = 'PreconditionError: ';

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

/** What the response oracle found in one file's traffic. */
export interface FileFindings {
  findings: OracleFinding[];
  errors: string[];
}

// Gathers every conformance test's result and meta; reports progress as tests and files end.
export class Collector {
  readonly run: CollectedRun = { tests: [], harnessErrors: [], cleanup: { deleted: [], leftovers: [] }, requests: 0, requestsByFile: {} };

  constructor(
    private readonly onModuleDone: (file: string, results: TestResult[]) => void = () => {},
    private readonly onTestDone: (result: TestResult) => void = () => {},
    private readonly onProgress: (progress: RunProgress) => void = () => {},
  ) {}

  readonly #started = Date.now();
  #filesTotal = 0;
  #filesDone = 0;
  /** requests of the tests done in each file running */
  readonly #inFile = new Map<string, number>();

  runStart(files: number): void {
    this.#filesTotal = files;
  }

  caseDone(file: string, c: CaseRun): void {
    this.onTestDone(toResult(file, c));
    this.#inFile.set(file, (this.#inFile.get(file) ?? 0) + c.requests);
    this.#progress();
  }

  #progress(): void {
    this.onProgress({
      requests: this.run.requests + [...this.#inFile.values()].reduce((a, b) => a + b, 0),
      filesDone: this.#filesDone,
      filesTotal: this.#filesTotal,
      elapsedMs: Date.now() - this.#started,
    });
  }

  /** A file ended: its tests, its hooks' errors, its cleanup, the oracle's findings in its traffic. */
  fileDone(run: FileRun, oracle: FileFindings | undefined, requests: number): void {
    const file = run.file;
    const results = run.cases.map((c) => toResult(file, c));
    const cleanup = run.meta.cleanup;
    if (cleanup) {
      this.run.cleanup.deleted.push(...cleanup.deleted);
      this.run.cleanup.leftovers.push(...cleanup.leftovers);
      if (cleanup.untouched?.length) (this.run.cleanup.untouched ??= []).push(...cleanup.untouched);
    }
    // A failed beforeAll leaves the file's tests that would have run not run: they could not be set up.
    const setupError = run.setupError === undefined ? undefined : scrub(run.setupError);
    const stranded = results.filter((_r, i) => setupError !== undefined && run.cases[i]?.state === 'skipped' && run.cases[i]?.note === undefined);
    if (setupError?.includes(READ_ONLY_MARK)) {
      // A --read-only run refused the file's setup: its tests are disabled, not failed.
      for (const r of stranded) r.note = READ_ONLY_NOTE;
    } else if (setupError?.startsWith(PRECONDITION)) {
      // The file's setup met a precondition the target does not meet (HTTP Basic refused): its
      // tests are unverifiable with the reason, as a test's own precondition makes them.
      for (const r of stranded) {
        r.outcome = 'skipped-unverifiable';
        r.note = `the file's setup: ${setupError.slice(PRECONDITION.length)}`;
      }
    } else if (setupError !== undefined) {
      for (const r of stranded) {
        r.outcome = 'setup-failed';
        r.failure = { kind: 'setup', message: `the file's setup failed: ${setupError}` };
      }
    }
    for (const message of run.errors) this.run.harnessErrors.push(`${file}: ${scrub(message)}`);
    if (oracle) {
      results.push(...oracle.findings.flatMap((f) => oracleResult(file, f)));
      for (const e of oracle.errors) this.run.harnessErrors.push(`${file}: ${scrub(e)}`);
    }
    this.run.requests += requests;
    this.run.requestsByFile[file] = requests;
    this.run.tests.push(...results);
    this.#filesDone++;
    this.#inFile.delete(file);
    this.onModuleDone(file, results);
    this.#progress();
  }

  /** An error outside any file's tests and hooks (an unhandled rejection during the run). */
  harnessError(message: string): void {
    this.run.harnessErrors.push(`unhandled error: ${scrub(message)}`);
  }
}

function toResult(file: string, c: CaseRun): TestResult {
  const meta = c.meta;
  const level = meta.level;
  const failure = meta.failure ?? (c.state === 'failed' ? { kind: 'harness' as const, message: scrub(c.error ?? 'the test failed') } : undefined);
  const out: TestResult = {
    title: c.title,
    file,
    clauses: meta.clauses,
    level,
    outcome: testOutcome(level, c.state, meta),
    durationMs: c.durationMs,
  };
  const note = meta.note ?? (c.state === 'skipped' ? c.note : undefined);
  if (note) out.note = note;
  if (failure && c.state === 'failed') out.failure = failure;
  if (meta.observed) out.observed = meta.observed;
  return out;
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
