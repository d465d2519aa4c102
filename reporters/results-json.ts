import { mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { ExpectationStatus } from '../core/expectations.ts';
import type { Outcome } from '../core/outcomes.ts';
import { redactExchange, scrub } from '../core/redact.ts';
import type { Clause } from '../suites/catalogue/clauses.ts';
import type { TestResult } from '../suites/harness/results.ts';
import type { RunResult } from '../suites/runner/run-suites.ts';
import type { Verdict } from '../suites/runner/verdict.ts';

/**
 * Additive changes keep the major; a breaking change bumps it (reporters/README.md). /2: the
 * outcome `info` (an observed INFO clause, formerly `pass`) and its count in `verdict.counts`.
 */
export const RESULTS_FORMAT = 'pmv6-results/2';

export interface CleanupSummary {
  deleted: number;
  leftovers: Array<{ kind: string; id: number | string; name: string; reason: string }>;
}

export type ResultsTest = TestResult;

export interface ResultsClause extends Pick<Clause, 'id' | 'level' | 'area' | 'section' | 'quote' | 'behaviour' | 'needsControl' | 'dependsOn' | 'tags'> {
  outcome: Outcome;
  note?: string;
  expectation?: { reason: string; status: ExpectationStatus };
  tests: ResultsTest[];
}

export interface ResultsDocument {
  format: typeof RESULTS_FORMAT;
  pmv6: string;
  runId: string;
  seed: number;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  hostname: string;
  target: { url: string; version: unknown };
  config: {
    user: string;
    password: string;
    hmac: { publicKey: string; privateKey: string } | null;
    control: { url: string; token: string } | null;
    readOnly: boolean;
    timeoutMs: number;
    selection?: { only: string[]; skip: string[] };
  };
  verdict: {
    label: Verdict['label'];
    exitCode: number;
    counts: Record<Outcome, number>;
    strict: boolean;
    expectedFailures?: string[];
    staleExpectations?: string[];
  };
  clauses: ResultsClause[];
  harnessErrors: string[];
  cleanup?: CleanupSummary;
}

/**
 * The findings every report opens with, whatever their level: a clause tagged `exposure` (one
 * user's personal data in sight of another) that failed or warned.
 */
export function exposureFindings<C extends { tags?: readonly string[] | undefined; outcome: string }>(clauses: readonly C[]): C[] {
  return clauses.filter((c) => c.tags?.includes('exposure') && (c.outcome === 'fail' || c.outcome === 'warn'));
}

// results.json: the run, the redacted configuration and every clause with its tests. Secrets
// never enter it: exchanges are redacted and every string is scrubbed on the way out.
export function resultsDocument(
  result: RunResult,
  verdict: Verdict,
  extra: { pmv6Version: string; targetVersion?: unknown; cleanup?: CleanupSummary },
): ResultsDocument {
  const { config } = result;
  const expectations = verdict.expectations;
  return {
    format: RESULTS_FORMAT,
    pmv6: extra.pmv6Version,
    runId: config.runId,
    seed: config.seed,
    startedAt: result.startedAt,
    finishedAt: result.finishedAt,
    durationMs: result.durationMs,
    hostname: hostname(),
    target: { url: config.target, version: extra.targetVersion ?? null },
    config: {
      user: config.user,
      password: '«redacted»',
      hmac: config.hmac ? { publicKey: '«redacted»', privateKey: '«redacted»' } : null,
      control: config.control ? { url: config.control.url, token: '«redacted»' } : null,
      readOnly: config.readOnly,
      timeoutMs: config.timeoutMs,
      ...(config.selection ? { selection: { only: config.selection.only ?? [], skip: config.selection.skip ?? [] } } : {}),
    },
    verdict: {
      label: verdict.label,
      exitCode: verdict.exitCode,
      counts: verdict.counts,
      strict: verdict.strict ?? false,
      ...(expectations ? { expectedFailures: expectations.expectedFailures, staleExpectations: expectations.stale } : {}),
    },
    clauses: result.clauses.map((c) => {
      const expectation = expectations?.byClause.get(c.clause.id);
      return {
        id: c.clause.id,
        level: c.clause.level,
        area: c.clause.area,
        section: c.clause.section,
        quote: c.clause.quote,
        behaviour: c.clause.behaviour,
        needsControl: c.clause.needsControl,
        ...(c.clause.dependsOn ? { dependsOn: c.clause.dependsOn } : {}),
        ...(c.clause.tags ? { tags: [...c.clause.tags] } : {}),
        outcome: c.outcome,
        ...(c.note ? { note: c.note } : {}),
        ...(expectation ? { expectation } : {}),
        tests: c.tests.map((t) => ({
          title: t.title,
          file: t.file,
          clauses: t.clauses,
          level: t.level,
          outcome: t.outcome,
          durationMs: t.durationMs,
          ...(t.note ? { note: t.note } : {}),
          ...(t.observed ? { observed: t.observed } : {}),
          ...(t.failure ? { failure: { ...t.failure, ...(t.failure.exchange ? { exchange: redactExchange(t.failure.exchange) } : {}) } } : {}),
        })),
      };
    }),
    harnessErrors: result.harnessErrors,
    ...(extra.cleanup ? { cleanup: extra.cleanup } : {}),
  };
}

export async function writeResultsJson(dir: string, doc: unknown): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'results.json');
  await writeFile(file, `${JSON.stringify(scrubbedValues(doc), null, 2)}\n`);
  return file;
}

/**
 * Decision: every string of the document (keys included) is scrubbed on its own, not the JSON
 * text as a whole: a value too deeply encoded to scan is hidden alone (redaction fails closed),
 * and the file stays valid JSON with the rest of the evidence readable.
 */
function scrubbedValues(value: unknown): unknown {
  if (typeof value === 'string') return scrub(value);
  if (Array.isArray(value)) return value.map(scrubbedValues);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrub(k), scrubbedValues(v)]));
  }
  return value;
}
