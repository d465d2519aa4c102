import type { ClientRunResult, ScenarioResult } from '../../clients/run/run-client.ts';
import { OUTCOMES } from '../../core/outcomes.ts';
import { forTerminal } from '../terminal.ts';

/** One line per scenario as it ends; the failed checks under it, with the command's last lines. */
export function scenarioText(r: ScenarioResult): string {
  const status = r.held ? OUTCOMES.pass.console.word : OUTCOMES.fail.console.word;
  const how = r.hung ? `hung, killed after ${(r.ms / 1000).toFixed(1)} s` : `exit ${r.exitCode ?? r.signal} in ${(r.ms / 1000).toFixed(1)} s`;
  const lines = [`  ${r.scenario.padEnd(16)} ${status}  expects ${r.expectation}: ${how}, ${r.requests} request${r.requests === 1 ? '' : 's'}`];
  if (!r.held) {
    for (const c of r.checks.filter((c) => !c.held)) lines.push(`      ✗ ${c.what}${c.detail ? `: ${c.detail}` : ''}`);
    if (r.sent.length > 0) {
      lines.push('      its requests:');
      for (const q of r.sent.slice(0, 12)) lines.push(`      > ${q.method} ${q.target} → ${q.status ?? 'no answer'}`);
      if (r.sent.length > 12) lines.push(`      > … ${r.requests - 12} more`);
    }
    if (r.output.length > 0) {
      lines.push('      its output (last lines):');
      for (const l of r.output.slice(-8)) lines.push(`      | ${l}`);
    }
  }
  return forTerminal(lines.join('\n'));
}

export function clientRunVerdictText(result: ClientRunResult): string {
  const failed = result.scenarios.filter((s) => !s.held).map((s) => s.scenario);
  const label = result.exitCode === 0 ? 'CONFORMANT' : result.exitCode === 1 ? 'NOT CONFORMANT' : 'INCONCLUSIVE';
  const kit = result.kitErrors.length ? `; ${result.kitErrors.length} kit error(s) (never the client's): ${result.kitErrors[0]!.split('\n')[0]}` : '';
  return forTerminal(
    `verdict: ${label}: ${result.scenarios.length - failed.length} of ${result.scenarios.length} scenarios as expected${failed.length ? ` (failed: ${failed.join(', ')})` : ''}${kit}`,
  );
}
