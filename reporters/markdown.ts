import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OUTCOME_ORDER, OUTCOMES, type Outcome, zeroCounts } from '../core/outcomes.ts';
import { scrub } from '../core/redact.ts';
import { AREAS, type Area, TAGS } from '../suites/catalogue/clauses.ts';
import { exposureFindings, type ResultsClause, type ResultsDocument } from './results-json.ts';
import { forTerminal } from './terminal.ts';

/**
 * Inline Markdown text: scrubbed first (escaping could split a secret), one line, control
 * characters shown as \xNN (terminal.ts: summary.md is also read in terminals), and every character GFM could read as markup or HTML escaped.
 */
export function md(text: string, max = 300): string {
  const line = forTerminal(
    scrub(text)
      .replace(/\s*\n\s*/g, ' ⏎ ')
      .replace(/\t/g, ' '),
  ).trim();
  const cut = line.length > max ? `${line.slice(0, max - 1)}…` : line;
  return cut.replace(/[\\`*_[\]<>|~&]/g, '\\$&');
}

function verdictLine(doc: ResultsDocument): string {
  const n = doc.verdict.counts;
  const icon = doc.verdict.exitCode === 0 ? '✅' : doc.verdict.label === 'INCONCLUSIVE' && doc.verdict.exitCode === 3 ? '⚠️' : '❌';
  const stale = doc.verdict.staleExpectations ?? [];
  return [
    `## ${icon} pmv6: ${doc.verdict.label} (exit ${doc.verdict.exitCode})`,
    '',
    `${n.pass}/${doc.clauses.length} clauses passed, ${n.fail} failed, ${n.info} ${OUTCOMES.info.label}, ${n.warn} warned, ${n['skipped-unverifiable']} unverifiable, ` +
      `${n['setup-failed'] + n['harness-error']} inconclusive. Target ${md(doc.target.url)}, run ${md(doc.runId)}, seed ${doc.seed}, ` +
      `${(doc.durationMs / 1000).toFixed(1)} s${doc.verdict.strict ? ', --strict' : ''}.`,
    ...(stale.length > 0
      ? [
          '',
          `Stale expectations (listed as known deviations, but passed${doc.verdict.strict ? '; they fail the run under --strict' : ''}): ${stale.join(', ')}`,
        ]
      : []),
  ].join('\n');
}

function areaTable(doc: ResultsDocument): string {
  const rows = new Map<Area, Record<Outcome, number>>();
  for (const c of doc.clauses) {
    const row = rows.get(c.area) ?? zeroCounts();
    row[c.outcome]++;
    rows.set(c.area, row);
  }
  const used = OUTCOME_ORDER.filter((o) => [...rows.values()].some((r) => r[o] > 0));
  return [
    `| area | ${used.map((o) => OUTCOMES[o].label).join(' | ')} |`,
    `|---|${used.map(() => '---:').join('|')}|`,
    ...[...rows].map(([area, row]) => `| ${area} ${md(AREAS[area])} | ${used.map((o) => (row[o] > 0 ? String(row[o]) : '')).join(' | ')} |`),
  ].join('\n');
}

function clauseLines(c: ResultsClause): string[] {
  const failed = c.tests.find((t) => t.outcome === c.outcome && t.failure);
  const f = failed?.failure;
  const detail =
    f?.expected !== undefined ? `expected ${md(f.expected, 150)}; actual ${md(f.actual ?? '?', 150)}` : f ? md(f.message.split('\n')[0] ?? '', 200) : '';
  const known = c.expectation?.status === 'expected-failure' ? ` (known deviation: ${md(c.expectation.reason, 150)})` : '';
  // A trailing backslash is a hard line break (CommonMark 6.7): one list item, three lines.
  return [`- **${c.id}** ${c.level} ${md(c.behaviour)}${known}\\`, `  spec: “${md(c.quote, 400)}”${detail ? '\\' : ''}`, ...(detail ? [`  ${detail}`] : [])];
}

function section(title: string, clauses: ResultsClause[]): string[] {
  return clauses.length === 0 ? [] : ['', `### ${title} (${clauses.length})`, '', ...clauses.flatMap(clauseLines)];
}

/** What an observed INFO clause's tests recorded, `key = value` (values as JSON), one line. */
function observations(c: ResultsClause): string {
  const entries = c.tests.flatMap((t) => Object.entries(t.observed ?? {}));
  if (entries.length === 0) return 'nothing recorded; its tests ran to their end';
  return entries.map(([key, value]) => `${key} = ${typeof value === 'string' ? value : JSON.stringify(value)}`).join('; ');
}

function observed(doc: ResultsDocument): string[] {
  const clauses = doc.clauses.filter((c) => c.outcome === 'info');
  if (clauses.length === 0) return [];
  return [
    '',
    `### Observed: INFO clauses, what the server was seen to do; not passes (${clauses.length})`,
    '',
    ...clauses.flatMap((c) => [`- **${c.id}** ${c.level} ${md(c.behaviour)}\\`, `  ${md(observations(c), 400)}`]),
  ];
}

function unverifiable(doc: ResultsDocument): string[] {
  const clauses = doc.clauses.filter((c) => c.outcome === 'skipped-unverifiable');
  if (clauses.length === 0) return [];
  const reasons = new Map<string, string[]>();
  for (const c of clauses) {
    const reason = c.note ?? c.tests.find((t) => t.note)?.note ?? 'no reason given';
    reasons.set(reason, [...(reasons.get(reason) ?? []), c.id]);
  }
  return ['', `### Unverifiable (${clauses.length})`, '', ...[...reasons].map(([reason, ids]) => `- ${ids.length} × ${md(reason, 200)}: ${ids.join(', ')}`)];
}

export function renderSummary(doc: ResultsDocument): string {
  const failed = doc.clauses.filter((c) => c.outcome === 'fail' && c.expectation?.status !== 'expected-failure');
  const warned = doc.clauses.filter((c) => c.outcome === 'warn' && c.expectation?.status !== 'expected-failure');
  const expected = doc.clauses.filter((c) => c.expectation?.status === 'expected-failure');
  const inconclusive = doc.clauses.filter((c) => c.outcome === 'setup-failed' || c.outcome === 'harness-error');
  const lines = [
    verdictLine(doc),
    ...section(`⚠️ ${TAGS.exposure}: one user's personal data in sight of another`, exposureFindings(doc.clauses)),
    '',
    areaTable(doc),
    ...section('Failed MUST clauses', failed),
    ...section(`Warnings${doc.verdict.strict ? ' (a SHOULD fails the run under --strict)' : ''}`, warned),
    ...section('Known deviations that failed as expected', expected),
    ...section('Inconclusive: setup failed or harness error', inconclusive),
    ...unverifiable(doc),
    ...observed(doc),
    ...(doc.harnessErrors.length > 0 ? ['', `### Harness errors (${doc.harnessErrors.length})`, '', ...doc.harnessErrors.map((e) => `- ${md(e, 300)}`)] : []),
  ];
  return scrub(`${lines.join('\n')}\n`);
}

/** Writes DIR/summary.md and appends it to $GITHUB_STEP_SUMMARY when that is set. */
export async function writeSummary(dir: string, doc: ResultsDocument, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const text = renderSummary(doc);
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'summary.md');
  await writeFile(file, text);
  if (env.GITHUB_STEP_SUMMARY) await appendFile(env.GITHUB_STEP_SUMMARY, `${text}\n`);
  return file;
}
