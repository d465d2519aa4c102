// pmv6's own runner of suite files: it imports each file (which declares its tests and hooks
// through suites/harness/suite-api.ts) and runs them in the process that asks, with no test
// framework, bundler or worker process in between.
//
// Decision: a file's beforeAll hooks run in order before its first test, and not at all when every
// test of the file is skipped; a failed beforeAll leaves the file's tests not run (the Collector
// reports them as setup-failed); afterAll hooks run after the tests, the last registered first, also
// after a failure. Tests run one after another in the order declared. Each test and each hook
// has a deadline; a test past it is failed and its signal aborted.
import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runBeside } from '../harness/gate.ts';
import type { TestMeta } from '../harness/results.ts';
import { collectDeclarations, type DeclaredCase, type FileMeta, type SuiteDeclarations, TestSkipped } from '../harness/suite-api.ts';
import { childScope, currentScope, inScope, type TrafficScope } from '../harness/traffic.ts';
import { onDisk, PACKAGE_ROOT, sourceName } from './layout.ts';

export interface CaseRun {
  title: string;
  meta: TestMeta;
  state: 'passed' | 'failed' | 'skipped';
  /** why it was skipped, or the error that failed it when the test did not record one */
  note?: string;
  error?: string;
  durationMs: number;
  /** requests sent while it ran */
  requests: number;
}

export interface FileRun {
  file: string;
  cases: CaseRun[];
  /** a failed beforeAll: the tests after it did not run */
  setupError?: string;
  /** the file did not load, or an afterAll failed */
  errors: string[];
  meta: FileMeta;
}

export interface FileRunOptions {
  /** Aborting stops the file: no new test starts, the running one's signal is aborted, afterAll runs. */
  signal?: AbortSignal | undefined;
  testTimeoutMs: number;
  hookTimeoutMs: number;
  onCaseDone?: (run: CaseRun) => void;
}

/** The files (relative to the package root, sorted) that match an include pattern and no exclude pattern. */
export function suiteFiles(include: string[], exclude: string[]): string[] {
  const inc = include.map(globRegExp);
  const exc = exclude.map(globRegExp);
  const all = readdirSync(join(PACKAGE_ROOT, 'suites'), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => sourceName(relative(PACKAGE_ROOT, join(d.parentPath, d.name)).split(sep).join('/')));
  return all.filter((f) => inc.some((r) => r.test(f)) && !exc.some((r) => r.test(f))).sort();
}

// `**/` any folders (or none), `/**` at the end anything below, `*` any name part.
function globRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const rest = pattern.slice(i);
    if (rest.startsWith('**/')) {
      out += '(?:.*/)?';
      i += 2;
    } else if (rest === '/**') {
      out += '(?:/.*)?';
      break;
    } else if (rest.startsWith('**')) {
      out += '.*';
      i += 1;
    } else if (pattern[i] === '*') out += '[^/]*';
    else out += pattern[i]!.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

let loads = 0;

/**
 * Imports a suite file afresh (its own module instance: the file's state and declarations are
 * new for every run; the harness it imports is shared) and returns what it declared.
 */
export function loadSuiteFile(file: string): Promise<SuiteDeclarations> {
  const url = `${pathToFileURL(join(PACKAGE_ROOT, onDisk(file))).href}?pmv6-load=${++loads}`;
  return collectDeclarations(() => import(url));
}

class Deadline extends Error {
  override name = 'Deadline';
}

/**
 * Decision (issue 25): a test's or hook's deadline is one of inactivity, not of wall time: it
 * expires when `ms` pass with no request of its own answered (`progress`, the requests its scope
 * has sent), and in any case after ten times `ms`. A slow, populated installation makes a test
 * that sends two hundred requests one after another take longer, and a deadline of our own must
 * not turn that into an inconclusive verdict; a test that hangs still ends.
 */
async function withDeadline<T>(ms: number, what: string, fn: () => Promise<T> | T, onExpiry?: () => void, progress?: () => number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const started = Date.now();
  const cap = progress ? ms * 10 : ms;
  let seen = progress?.() ?? 0;
  let last = started;
  const expiry = new Promise<never>((_, reject) => {
    const expire = (why: string) => {
      onExpiry?.();
      reject(new Deadline(why));
    };
    const check = () => {
      const now = Date.now();
      const sent = progress?.() ?? 0;
      if (sent !== seen) {
        seen = sent;
        last = now;
      }
      if (now - started >= cap) return expire(`${what} did not end within ${cap} ms`);
      if (now - last >= ms) return expire(progress ? `${what} had no request answered for ${ms} ms` : `${what} did not end within ${ms} ms`);
      timer = setTimeout(check, Math.min(1000, ms - (now - last), cap - (now - started)));
    };
    timer = setTimeout(check, Math.min(1000, ms));
  });
  try {
    return await Promise.race([Promise.resolve().then(fn), expiry]);
  } finally {
    clearTimeout(timer);
  }
}

/** The run stopped because the target stopped answering: the tests not run are harness errors, not skipped. */
export class TargetStopped extends Error {
  override name = 'TargetStopped';
}

/** An error as one line: `TypeError: boom`. */
export function errorText(e: unknown): string {
  const err = e as { name?: string; message?: string } | null;
  return err && typeof err.message === 'string' ? `${err.name ?? 'Error'}: ${err.message}` : String(e);
}

/**
 * Runs a loaded file's hooks and tests in a traffic scope of the file's own (its requests, and
 * each test's, are counted there whatever else runs beside it); `scope.sent` is the file's count.
 */
export function runSuiteFile(file: string, declared: SuiteDeclarations, options: FileRunOptions, scope: TrafficScope = { file, sent: 0 }): Promise<FileRun> {
  return inScope(scope, () => runFile(file, declared, options));
}

async function runFile(file: string, declared: SuiteDeclarations, options: FileRunOptions): Promise<FileRun> {
  const run: FileRun = { file, cases: [], errors: [], meta: {} };
  const pending = declared.tests.filter((t) => t.body !== undefined);
  const notRun = (t: DeclaredCase, note?: string): CaseRun => ({
    title: t.title,
    meta: t.meta,
    state: 'skipped',
    ...(note ? { note } : {}),
    durationMs: 0,
    requests: 0,
  });
  if (pending.length === 0) {
    for (const t of declared.tests) run.cases.push(done(notRun(t, t.meta.note), options));
    return run;
  }
  try {
    for (const hook of declared.beforeAll) await withDeadline(options.hookTimeoutMs, 'beforeAll', () => hook({ meta: run.meta }), undefined, sentHere());
  } catch (e) {
    run.setupError = errorText(e);
  }
  const caseOf = async (t: DeclaredCase): Promise<CaseRun> => {
    if (!t.body) return done(notRun(t, t.meta.note), options);
    if (run.setupError !== undefined) return done(notRun(t), options);
    if (options.signal?.aborted) {
      const reason: unknown = options.signal.reason;
      return done(
        reason instanceof TargetStopped
          ? { ...notRun(t), state: 'failed', error: `not run: ${reason.message}` }
          : notRun(t, 'not run: the run was interrupted'),
        options,
      );
    }
    return done(await runCase(t, t.body, options), options);
  };
  if (declared.testsTogether === undefined) for (const t of declared.tests) run.cases.push(await caseOf(t));
  else {
    // Side by side between the tests declared `afterOthers`, each of which runs on its own;
    // reported in the order declared.
    const cases: CaseRun[] = [];
    let group: number[] = [];
    const flush = async () => {
      await Promise.all(group.map(async (i) => (cases[i] = await runBeside(declared.alone !== undefined, () => caseOf(declared.tests[i]!)))));
      group = [];
    };
    for (const [i, t] of declared.tests.entries()) {
      if (!t.afterOthers) {
        group.push(i);
        continue;
      }
      await flush();
      cases[i] = await caseOf(t);
    }
    await flush();
    run.cases.push(...cases);
  }
  for (const hook of [...declared.afterAll].reverse()) {
    try {
      await withDeadline(options.hookTimeoutMs, 'afterAll', () => hook({ meta: run.meta }), undefined, sentHere());
    } catch (e) {
      run.errors.push(errorText(e));
    }
  }
  return run;
}

/** The requests the calling scope (a file's, for its hooks) has sent so far, as a function. */
function sentHere(): () => number {
  const scope = currentScope();
  return () => scope?.sent ?? 0;
}

function done(c: CaseRun, options: FileRunOptions): CaseRun {
  options.onCaseDone?.(c);
  return c;
}

function runCase(t: DeclaredCase, body: NonNullable<DeclaredCase['body']>, options: FileRunOptions): Promise<CaseRun> {
  const scope = childScope();
  return inScope(scope, () => runCaseIn(scope, t, body, options));
}

async function runCaseIn(scope: TrafficScope, t: DeclaredCase, body: NonNullable<DeclaredCase['body']>, options: FileRunOptions): Promise<CaseRun> {
  const started = performance.now();
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const meta = t.meta;
  const ctx = {
    meta,
    signal: controller.signal,
    skip(note: string): never {
      throw new TestSkipped(note);
    },
  };
  const ended = (state: CaseRun['state'], extra: Partial<CaseRun> = {}): CaseRun => ({
    title: t.title,
    meta,
    state,
    durationMs: Math.round(performance.now() - started),
    requests: scope.sent,
    ...extra,
  });
  try {
    const timeout = t.timeoutMs ?? options.testTimeoutMs;
    await withDeadline(
      timeout,
      'the test',
      () => body(ctx),
      () => controller.abort(new Deadline(`the test had no request answered for ${timeout} ms`)),
      // Decision (issue 39): the file's requests, not the test's alone. Tests of one file side by
      // side wait on readings another of them sends (every-list's shared growth and probe): under
      // load such a reading took over 30 s while the waiting tests' own counts stood still, and
      // they went inconclusive on a target that was answering. A test of a file that sends
      // nothing more still meets the deadline; in a file whose tests run one after another the
      // two counts are the same.
      () => (scope.parent ?? scope).sent,
    );
    return ended('passed');
  } catch (e) {
    if (e instanceof TestSkipped) return ended('skipped', { note: e.message });
    return ended('failed', { error: errorText(e) });
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}
