import { CHECKS } from '../../clients/run/expectations.ts';
import type { ClientRunResult, ScenarioResult } from '../../clients/run/run-client.ts';
import { scrub } from '../../core/redact.ts';
import { md } from '../markdown.ts';
import { clientRunLabel, sentStatus } from './run-text.ts';

// summary.md of `pmv6 clients run`, for a CI job's summary: the verdict, one table row per
// scenario, then each failed scenario with its failed checks, the output lines they stand on and
// its first requests. Inline text goes through markdown.ts's md (redaction, then escaping).

function failedScenario(r: ScenarioResult): string[] {
  const how = r.hung ? `killed after ${(r.ms / 1000).toFixed(1)} s` : `exit ${r.exitCode ?? r.signal} in ${(r.ms / 1000).toFixed(1)} s`;
  const lines = [`- **${md(r.scenario)}** expects ${md(r.expectation)}: ${md(how)}, ${r.requests} requests`];
  for (const c of r.checks.filter((c) => !c.held)) {
    lines.push(`  - ✗ ${md(CHECKS[c.id])}: ${md(c.what)}${c.detail ? ` — ${md(c.detail, 400)}` : ''}`);
    for (const l of c.lines ?? []) lines.push(`    - line ${l.n}: ${md(l.text, 200)}`);
  }
  if (r.sent.length > 0)
    lines.push(
      `  - requests: ${r.sent
        .slice(0, 6)
        .map((q) => md(`${q.method} ${q.target} → ${sentStatus(q)}`, 120))
        .join('; ')}${r.requests > 6 ? '; …' : ''}`,
    );
  return lines;
}

export function renderClientRunSummary(result: ClientRunResult): string {
  const label = clientRunLabel(result);
  const icon = result.exitCode === 0 ? '✅' : result.exitCode === 3 ? '⚠️' : '❌';
  const held = result.scenarios.filter((r) => r.held).length;
  const failed = result.scenarios.filter((r) => !r.held);
  const lines = [
    `## ${icon} pmv6 clients run: ${label} (exit ${result.exitCode})`,
    '',
    `${held} of ${result.scenarios.length} scenarios as expected. Command ${md(result.command, 200)}; a request may be held ${result.deadlineMs / 1000} s.`,
    '',
    '| scenario | expects | result | exit | requests | failed checks |',
    '|---|---|---|---:|---:|---|',
    ...result.scenarios.map(
      (r) =>
        `| ${md(r.scenario)} | ${md(r.expectation)} | ${r.held ? 'as expected' : '**not as expected**'} | ${r.hung ? 'killed' : md(String(r.exitCode ?? r.signal))} | ${r.requests} | ${r.checks
          .filter((c) => !c.held)
          .map((c) => md(CHECKS[c.id]))
          .join(', ')} |`,
    ),
    ...(failed.length > 0 ? ['', `### Not as expected (${failed.length})`, '', ...failed.flatMap(failedScenario)] : []),
    ...(result.kitErrors.length > 0
      ? ['', `### Kit errors, never the client's (${result.kitErrors.length})`, '', ...result.kitErrors.map((e) => `- ${md(e, 300)}`)]
      : []),
  ];
  return scrub(`${lines.join('\n')}\n`);
}
