import { OUTCOMES } from '../../core/outcomes.ts';
import { forTerminal } from '../terminal.ts';
import type { ClientResultsDocument } from './results.ts';

/** A client clause's outcome in the matrix: the outcome table's console word; a dash where the client never exercised it. */
const symbol = (o: ClientResultsDocument['clauses'][number]['outcome']): string => (o === 'untested' ? '-' : OUTCOMES[o].console.word);
/** Decision: the console shows the first 3 findings of each clause per client; the files keep the rest. */
const SHOWN = 3;

function indent(text: string, n: number): string {
  return text
    .split('\n')
    .map((l) => ' '.repeat(n) + l)
    .join('\n');
}

/** The client report as text: one block per client, its failed clauses with the first findings, then the verdict. */
export function clientVerdictText(doc: ClientResultsDocument): string {
  const lines: string[] = [];
  const ids = doc.clauses.map((c) => c.id);
  lines.push('', `${'client'.padEnd(52)}${ids.map((id) => id.padStart(8)).join('')}`);
  for (const c of doc.clients) {
    const who = `${c.userAgent ?? '(no User-Agent)'} · ${c.credentials}`.slice(0, 51);
    lines.push(`${who.padEnd(52)}${c.clauses.map((x) => symbol(x.outcome).padStart(8)).join('')}`);
  }
  for (const c of doc.clients) {
    const bad = c.clauses.filter((x) => x.outcome === 'fail' || x.outcome === 'warn');
    if (bad.length === 0) continue;
    lines.push('', `${c.id}: ${c.userAgent ?? '(no User-Agent)'} · ${c.credentials} · ${c.requests} requests`);
    for (const x of bad) {
      const clause = doc.clauses.find((k) => k.id === x.id)!;
      lines.push(
        `  ${symbol(x.outcome)} [${clause.id}] ${clause.level} ${clause.behaviour}: ${x.findings} of ${x.checked} requests`,
        `    spec ${clause.section}: "${clause.quote}"`,
      );
      for (const f of c.findings.filter((f) => f.clause === x.id).slice(0, SHOWN)) {
        lines.push(
          indent(`#${f.seq} ${f.method} ${f.target} → ${f.status ?? 'no answer'}\nexpected ${f.expected}\nactual   ${f.actual}\nreproduce: ${f.curl}`, 4),
        );
      }
    }
  }
  const probes = doc.clients.reduce((n, c) => n + c.probes, 0);
  for (const e of doc.kitErrors) lines.push('', `KIT ERROR ${e}`);
  const n = doc.verdict.counts;
  lines.push(
    '',
    `verdict: ${doc.verdict.label}: ${doc.verdict.findings} findings from ${doc.verdict.requests} requests of ${doc.clients.length} clients; ` +
      `clauses ${n.pass} passed, ${n.fail} failed, ${n.warn} warned, ${n.untested} not exercised${probes ? `; ${probes} declared probes` : ''}`,
  );
  return `${forTerminal(lines.join('\n'))}\n`;
}
