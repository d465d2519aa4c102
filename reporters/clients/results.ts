/**
 * The client report of one kit run, `pmv6-client-results/1` (schema/client-results.schema.json):
 * the kit, the verdict, every client clause with its outcome over all clients, and each client
 * (User-Agent and credentials) with its clauses and findings. Secrets never enter it: exchanges
 * are redacted by the kit (core/redact.ts) and every string is scrubbed on the way out.
 */

import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ClientRecord, KitSnapshot, StoredFinding } from '../../clients/ledger.ts';
import { OUTCOMES } from '../../core/outcomes.ts';
import { scrub } from '../../core/redact.ts';
import { CLIENT_CLAUSES, type ClientClause } from '../../suites/catalogue/client-clauses.ts';

export const CLIENT_RESULTS_FORMAT = 'pmv6-client-results/1';
export const CLIENT_RESULTS_SCHEMA_FILE = new URL('./schema/client-results.schema.json', import.meta.url);

/** pass: checked, no finding; fail: a MUST finding; warn: a SHOULD or INFO finding; untested: no request it applies to. */
export type ClientOutcome = 'pass' | 'fail' | 'warn' | 'untested';

export interface ClientClauseResult extends Pick<ClientClause, 'id' | 'level' | 'area' | 'section' | 'quote' | 'behaviour'> {
  outcome: ClientOutcome;
  checked: number;
  findings: number;
}

export interface ClientResult {
  id: string;
  userAgent: string | null;
  credentials: string;
  requests: number;
  probes: number;
  firstAt: string;
  lastAt: string;
  outcome: ClientOutcome;
  clauses: Array<{ id: string; outcome: ClientOutcome; checked: number; findings: number; probeFindings: number }>;
  findings: StoredFinding[];
}

export interface ClientResultsDocument {
  format: typeof CLIENT_RESULTS_FORMAT;
  pmv6: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  hostname: string;
  kit: { url: string; hmacWindowSeconds: number; scenarios: Array<{ at: string; scenario: string }> };
  verdict: {
    label: 'CONFORMANT' | 'NOT CONFORMANT' | 'INCONCLUSIVE';
    exitCode: 0 | 1 | 3;
    strict: boolean;
    requests: number;
    findings: number;
    counts: Record<ClientOutcome, number>;
  };
  clauses: ClientClauseResult[];
  clients: ClientResult[];
  kitErrors: string[];
}

function outcomeOf(clause: ClientClause, checked: number, findings: number): ClientOutcome {
  if (findings > 0) return clause.level === 'MUST' ? 'fail' : 'warn';
  return checked > 0 ? 'pass' : 'untested';
}

// Client clause outcomes weigh as the outcome table says (core/outcomes.ts).
const heaviest = (outcomes: ClientOutcome[]): ClientOutcome =>
  outcomes.reduce<ClientOutcome>((a, b) => (OUTCOMES[b].weight > OUTCOMES[a].weight ? b : a), 'untested');

export function clientResultsDocument(
  snapshot: KitSnapshot,
  extra: { pmv6Version: string; url: string; hmacWindowSeconds: number; strict?: boolean },
): ClientResultsDocument {
  const active = CLIENT_CLAUSES.filter((c) => !c.retired);
  const clients: ClientResult[] = snapshot.clients.map((rec: ClientRecord) => {
    const clauses = active.map((c) => {
      const checked = rec.checked[c.id] ?? 0;
      const findings = rec.findings[c.id] ?? 0;
      return { id: c.id, outcome: outcomeOf(c, checked, findings), checked, findings, probeFindings: rec.probeFindings[c.id] ?? 0 };
    });
    return {
      id: rec.id,
      userAgent: rec.userAgent,
      credentials: rec.credentials,
      requests: rec.requests,
      probes: rec.probes,
      firstAt: rec.firstAt,
      lastAt: rec.lastAt,
      outcome: heaviest(clauses.map((c) => c.outcome)),
      clauses,
      findings: [...rec.examples].sort((a, b) => a.seq - b.seq),
    };
  });
  const clauses: ClientClauseResult[] = active.map((c) => {
    const checked = clients.reduce((n, cl) => n + (cl.clauses.find((x) => x.id === c.id)?.checked ?? 0), 0);
    const findings = clients.reduce((n, cl) => n + (cl.clauses.find((x) => x.id === c.id)?.findings ?? 0), 0);
    return {
      id: c.id,
      level: c.level,
      area: c.area,
      section: c.section,
      quote: c.quote,
      behaviour: c.behaviour,
      outcome: outcomeOf(c, checked, findings),
      checked,
      findings,
    };
  });
  const counts: Record<ClientOutcome, number> = { pass: 0, fail: 0, warn: 0, untested: 0 };
  for (const c of clauses) counts[c.outcome]++;
  const strict = extra.strict ?? false;
  const failing = counts.fail > 0 || (strict && clauses.some((c) => c.outcome === 'warn' && c.level === 'SHOULD'));
  // Exit codes as for server runs: 1 violations; 3 inconclusive (a fault of the kit, or no request to judge).
  const label = failing ? 'NOT CONFORMANT' : snapshot.kitErrors.length > 0 || snapshot.requests === 0 ? 'INCONCLUSIVE' : 'CONFORMANT';
  const finishedAt = snapshot.takenAt;
  return {
    format: CLIENT_RESULTS_FORMAT,
    pmv6: extra.pmv6Version,
    startedAt: snapshot.startedAt,
    finishedAt,
    durationMs: Math.max(0, Date.parse(finishedAt) - Date.parse(snapshot.startedAt)),
    hostname: hostname(),
    kit: { url: extra.url, hmacWindowSeconds: extra.hmacWindowSeconds, scenarios: snapshot.scenarios },
    verdict: {
      label,
      exitCode: label === 'NOT CONFORMANT' ? 1 : label === 'INCONCLUSIVE' ? 3 : 0,
      strict,
      requests: snapshot.requests,
      findings: clauses.reduce((n, c) => n + c.findings, 0),
      counts,
    },
    clauses,
    clients,
    kitErrors: snapshot.kitErrors,
  };
}

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormatsModule.default(ajv, ['date-time']);
const validate = ajv.compile<ClientResultsDocument>(JSON.parse(readFileSync(CLIENT_RESULTS_SCHEMA_FILE, 'utf8')) as object);

/** The schema's complaints about a document, one per line; empty when it is valid. */
export function clientResultsErrors(doc: unknown): string[] {
  if (validate(doc)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
}

export async function writeClientResultsJson(dir: string, doc: ClientResultsDocument): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'results.json');
  await writeFile(file, `${scrub(JSON.stringify(doc, null, 2))}\n`);
  return file;
}
