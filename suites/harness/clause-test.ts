import { cut, KEPT_CHARS } from '../../core/exchange.ts';
import { scrub } from '../../core/redact.ts';
import { type Clause, clauseById, type Level } from '../catalogue/clauses.ts';
import {
  isReadOnlyRefusal,
  NoResponseError,
  PreconditionError,
  READ_ONLY_NOTE,
  SettingsLockedError,
  SetupError,
  UnverifiableError,
  ViolationError,
} from './assert.ts';
import { getRunConfig, type RunConfig } from './config.ts';
import { toCurl } from './curl.ts';
import { leftOut, testTitle } from './declare.ts';
import { OwnershipError } from './ownership.ts';
import type { FailureRecord, TestMeta } from './results.ts';
import { declareTest, type SuiteTestContext, TestSkipped } from './suite-api.ts';

export interface ClauseTestContext {
  config: RunConfig;
  clauses: Clause[];
  /** Records implementation-defined behaviour (what the server does where the spec is silent). */
  observe(key: string, value: unknown): void;
  /** Ends the test as skipped-unverifiable: the target cannot show whether it holds. */
  unverifiable(reason: string): never;
  signal: AbortSignal;
}

const RANK: Record<Level, number> = { MUST: 3, SHOULD: 2, INFO: 1 };

// Declares a conformance test: titled `[ID] LEVEL behaviour` from the catalogue, with the clause
// IDs in its meta so reporters never parse titles.
export function clauseTest(
  ids: string | string[],
  behaviour: string,
  fn: (t: ClauseTestContext) => Promise<void> | void,
  options: { timeout?: number; afterOthers?: true } = {},
): void {
  const list = Array.isArray(ids) ? ids : [ids];
  const clauses = list.map((id) => {
    const clause = clauseById(id);
    if (!clause || clause.retired) throw new Error(`clauseTest: "${id}" is not an active clause of the catalogue`);
    return clause;
  });
  const level = clauses.map((c) => c.level).reduce((a, b) => (RANK[b] > RANK[a] ? b : a));
  const title = testTitle(list, level, behaviour);
  // Selection and the need for the control protocol are known when the file is collected: a test
  // left out then is skipped with its reason, and the file's hooks do not run for it.
  const config = getRunConfig();
  const reason = leftOut(clauses, config);
  if (reason) {
    declareTest({ title, meta: { clauses: list, level, behaviour, ...reason } });
    return;
  }
  const body = async (ctx: SuiteTestContext) => {
    const own = ctx.meta;
    const skipWith = (outcome: NonNullable<TestMeta['outcome']>, note: string): never => {
      own.outcome = outcome;
      own.note = note;
      return ctx.skip(note);
    };
    const t: ClauseTestContext = {
      config,
      clauses,
      signal: ctx.signal,
      observe(key, value) {
        own.observed = { ...own.observed, [key]: value };
      },
      unverifiable: (reason) => skipWith('skipped-unverifiable', reason),
    };
    try {
      await fn(t);
    } catch (e) {
      if (e instanceof TestSkipped) throw e;
      if (e instanceof PreconditionError) skipWith('skipped-unverifiable', e.message);
      // --read-only: the check would have created, changed or deleted something; nothing was sent.
      if (isReadOnlyRefusal(e)) skipWith('disabled', READ_ONLY_NOTE);
      // The settings could not be read at the start of the run: none is changed.
      if (e instanceof SettingsLockedError) skipWith('skipped-unverifiable', e.message);
      if (e instanceof UnverifiableError) skipWith('skipped-unverifiable', scrub(e.message));
      // Past its deadline (or interrupted) the runner has already ended the test as a harness
      // error; what its requests met after that (a closed client) says nothing about the server.
      own.failure = ctx.signal.aborted ? cancelledRecord(ctx.signal.reason, e) : failureRecord(e);
      throw e;
    }
  };
  declareTest({
    title,
    meta: { clauses: list, level, behaviour },
    body,
    ...(options.timeout ? { timeoutMs: options.timeout } : {}),
    ...(options.afterOthers ? { afterOthers: true } : {}),
  });
}

function cancelledRecord(reason: unknown, e: unknown): FailureRecord {
  const why = reason instanceof Error ? reason.message : String(reason ?? 'the test was cancelled');
  return { kind: 'harness', message: scrub(`harness: ${why}; what the test met after that is not judged (${(e as Error)?.name ?? 'Error'})`) };
}

export function failureRecord(e: unknown): FailureRecord {
  if (e instanceof NoResponseError) {
    return { kind: 'harness', message: scrub(e.message), exchange: e.exchange, curl: scrub(toCurl(e.exchange)) };
  }
  if (e instanceof ViolationError) {
    const record: FailureRecord = { kind: 'violation', message: scrub(e.message), expected: scrub(e.expected), actual: scrub(e.actual) };
    if (e.exchange) {
      // ViolationError keeps its exchange redacted and cut (suites/harness/assert.ts `keep`).
      record.exchange = e.exchange;
      record.curl = scrub(toCurl(e.exchange));
    }
    return record;
  }
  if (e instanceof SetupError) return { kind: 'setup', message: scrub(e.message) };
  // A write the run's ledger refused (an object the run did not make and verify): the harness's
  // own decision, said in one line; a stack would only show where the guard sits.
  if (e instanceof OwnershipError) return { kind: 'harness', message: scrub(e.message) };
  const err = e as Error;
  return {
    kind: 'harness',
    message: scrub(`${err?.name ?? 'Error'}: ${cut(err?.message ?? String(e), KEPT_CHARS)}\n${err?.stack?.split('\n').slice(1, 6).join('\n') ?? ''}`),
  };
}
