import type { ClientRunResult, ScenarioResult, SentRequest } from '../../clients/run/run-client.ts';
import { OUTCOMES } from '../../core/outcomes.ts';
import { forTerminal } from '../terminal.ts';

/** One line per scenario as it ends; the failed checks under it, with the command's last lines. */
export function scenarioText(r: ScenarioResult): string {
  const status = r.held ? OUTCOMES.pass.console.word : OUTCOMES.fail.console.word;
  const how = r.hung ? `hung, killed after ${(r.ms / 1000).toFixed(1)} s` : `exit ${r.exitCode ?? r.signal} in ${(r.ms / 1000).toFixed(1)} s`;
  const lines = [`  ${r.scenario.padEnd(16)} ${status}  expects ${r.expectation}: ${how}, ${r.requests} request${r.requests === 1 ? '' : 's'}`];
  if (!r.held) {
    for (const c of r.checks.filter((c) => !c.held)) {
      lines.push(`      ✗ ${c.what}${c.detail ? `: ${c.detail}` : ''}`);
      for (const l of c.lines ?? []) lines.push(`        ${String(l.n).padStart(4)}| ${l.text}`);
    }
    if (r.sent.length > 0) {
      lines.push('      its requests:');
      for (const q of r.sent.slice(0, 12)) lines.push(`      > ${q.method} ${q.target} → ${sentStatus(q)}`);
      if (r.sent.length > 12) lines.push(`      > … ${r.requests - 12} more`);
    }
    if (r.output.length > 0) {
      lines.push('      its output (last lines):');
      for (const l of r.output.slice(-8)) lines.push(`      | ${l}`);
    }
  }
  return forTerminal(lines.join('\n'));
}

/** The verdict's label of a run, as every report of it writes it. */
export function clientRunLabel(result: ClientRunResult): 'CONFORMANT' | 'NOT CONFORMANT' | 'INCONCLUSIVE' {
  return result.exitCode === 0 ? 'CONFORMANT' : result.exitCode === 1 ? 'NOT CONFORMANT' : 'INCONCLUSIVE';
}

/** How a request of the run ended, as every report of it writes it. */
export function sentStatus(q: SentRequest): string {
  return q.end === undefined ? String(q.status ?? 'no answer') : q.status === null ? q.end : `${q.status}, ${q.end}`;
}

export function clientRunVerdictText(result: ClientRunResult): string {
  const failed = result.scenarios.filter((s) => !s.held).map((s) => s.scenario);
  const label = clientRunLabel(result);
  const kit = result.kitErrors.length ? `; ${result.kitErrors.length} kit error(s) (never the client's): ${result.kitErrors[0]!.split('\n')[0]}` : '';
  return forTerminal(
    `verdict: ${label}: ${result.scenarios.length - failed.length} of ${result.scenarios.length} scenarios as expected${failed.length ? ` (failed: ${failed.join(', ')})` : ''}${kit}`,
  );
}
