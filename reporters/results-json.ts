import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunResult } from '../suites/runner/run-suites.ts';
import type { Verdict } from '../suites/runner/verdict.ts';
import { redactExchange, scrub } from '../suites/harness/redact.ts';

export const RESULTS_FORMAT = 'pmv6-results/0';

// results.json, format 0: the run, the redacted configuration and every clause with its tests.
// Secrets never enter it: exchanges are redacted and every string is scrubbed on the way out.
export function resultsDocument(result: RunResult, verdict: Verdict, extra: { pmv6Version: string; targetVersion?: unknown }) {
  const { config } = result;
  return {
    format: RESULTS_FORMAT,
    pmv6: extra.pmv6Version,
    runId: config.runId,
    seed: config.seed,
    startedAt: result.startedAt,
    finishedAt: result.finishedAt,
    target: { url: config.target, version: extra.targetVersion ?? null },
    config: {
      user: config.user,
      password: '«redacted»',
      hmac: config.hmac ? { publicKey: '«redacted»', privateKey: '«redacted»' } : null,
      control: config.control ? { url: config.control.url, token: '«redacted»' } : null,
      readOnly: config.readOnly,
      timeoutMs: config.timeoutMs,
    },
    verdict: { label: verdict.label, exitCode: verdict.exitCode, counts: verdict.counts },
    clauses: result.clauses.map((c) => ({
      id: c.clause.id,
      level: c.clause.level,
      area: c.clause.area,
      section: c.clause.section,
      quote: c.clause.quote,
      outcome: c.outcome,
      tests: c.tests.map((t) => ({
        title: t.title,
        file: t.file,
        outcome: t.outcome,
        durationMs: t.durationMs,
        ...(t.note ? { note: t.note } : {}),
        ...(t.observed ? { observed: t.observed } : {}),
        ...(t.failure
          ? { failure: { ...t.failure, ...(t.failure.exchange ? { exchange: redactExchange(t.failure.exchange) } : {}) } }
          : {}),
      })),
    })),
    harnessErrors: result.harnessErrors,
  };
}

export async function writeResultsJson(dir: string, doc: unknown): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'results.json');
  await writeFile(file, `${scrub(JSON.stringify(doc, null, 2))}\n`);
  return file;
}

export type ResultsDocument = ReturnType<typeof resultsDocument>;
