// What a suite file declares when it is imported: its tests (through clauseTest) and the hooks
// that set up and clean up the file. The runner (suites/runner/suite-runner.ts) imports each file
// inside `collectDeclarations` and runs what it declared; nothing here sends a request.
import type { CleanupReport } from './fixtures.ts';
import type { TestMeta } from './results.ts';

/** What a file's hooks leave for the runner. */
export interface FileMeta {
  /** What the file's session deleted and left behind. */
  cleanup?: CleanupReport;
}

export interface SuiteTestContext {
  /** The test's own meta: the runner reads outcome, note, failure and observations from it. */
  meta: TestMeta;
  /** Aborted when the run is interrupted or the test's time is up. */
  signal: AbortSignal;
  /** Ends the test as skipped, with the reason. */
  skip(note: string): never;
}

export type TestBody = (ctx: SuiteTestContext) => Promise<void> | void;
export type FileHook = (file: { meta: FileMeta }) => Promise<void> | void;

export interface DeclaredCase {
  title: string;
  meta: TestMeta;
  /** absent for a test declared as skipped */
  body?: TestBody;
  timeoutMs?: number;
  /**
   * In a file whose tests run side by side (`testsSideBySide`): the test runs on its own, when
   * every test declared before it has ended and before those after it start (a test that judges
   * what the others sent, oracleTest; a test that changes a setting).
   */
  afterOthers?: true;
}

export interface SuiteDeclarations {
  tests: DeclaredCase[];
  beforeAll: FileHook[];
  afterAll: FileHook[];
  /** Why the file runs alone (see `runsAlone`); absent: it runs side by side with others. */
  alone?: string;
  /** Why the file's tests may run side by side (see `testsSideBySide`); absent: one after another. */
  testsTogether?: string;
}

/** Thrown by `skip()`: the test ends skipped, not failed. */
export class TestSkipped extends Error {
  override name = 'TestSkipped';
}

let collecting: SuiteDeclarations | undefined;
let queue: Promise<unknown> = Promise.resolve();

function current(what: string): SuiteDeclarations {
  if (!collecting) throw new Error(`${what} is declared at the top of a suite file, which the runner imports`);
  return collecting;
}

/**
 * Imports a suite file (`load`) and returns what it declared. Files are collected one at a time,
 * so that each declaration lands in its own file.
 */
export function collectDeclarations(load: () => Promise<unknown>): Promise<SuiteDeclarations> {
  const next = queue.then(async () => {
    const declarations: SuiteDeclarations = { tests: [], beforeAll: [], afterAll: [] };
    collecting = declarations;
    try {
      await load();
      return declarations;
    } finally {
      collecting = undefined;
    }
  });
  queue = next.catch(() => {});
  return next;
}

/** Declares a test of the file being collected (suites declare theirs with clauseTest). */
export function declareTest(test: DeclaredCase): void {
  current('a test').tests.push(test);
}

/**
 * Declares that the file runs with nothing else in flight: it reads what every other file's
 * writes change (whole lists as the Admin, the action log) and compares it with what it read
 * before. Files side by side see the target's settings only as they were before the run; a
 * test that changes a setting does it inside `Session.withSettings`, which has the target to
 * itself while it runs (suites/harness/gate.ts).
 */
export function runsAlone(reason: string): void {
  current('runsAlone').alone = reason;
}

/**
 * Declares that the file's tests run side by side, sharing --concurrency: none writes what
 * another reads (they read what the file made once, in a shared promise). A test declared
 * `afterOthers` runs on its own; a test beside others that opens an exclusive section (a fault,
 * a reset; a setting in a file that runs alone) is a harness error, and one that changes a
 * setting through Session.withSettings in a file that does not run alone holds the others back
 * as another file's section does (suites/harness/gate.ts). Files whose tests compare one state
 * (the log files, the relations) keep them one after another.
 */
export function testsSideBySide(reason: string): void {
  current('testsSideBySide').testsTogether = reason;
}

/** Runs once before the file's first test (not at all when every test of the file is skipped). */
export function beforeAll(hook: FileHook): void {
  current('beforeAll').beforeAll.push(hook);
}

/** Runs once after the file's tests, also after a failure; the last registered runs first. */
export function afterAll(hook: FileHook): void {
  current('afterAll').afterAll.push(hook);
}
