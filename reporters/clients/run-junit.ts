import type { ClientRunResult, ScenarioResult } from '../../clients/run/run-client.ts';
import { clip } from '../../core/redact.ts';
import { junitDocument, junitSuite, junitSeconds as seconds } from '../junit-xml.ts';
import { attrs, xmlText } from '../xml-text.ts';
import { kitErrorSuite } from './junit.ts';
import { clientRunLabel, sentStatus } from './run-text.ts';

// junit.xml of `pmv6 clients run`, in the format of reporters/schema/junit.xsd: one testsuite per
// scenario (`pmv6.clients.run.<scenario>`), one testcase per check; a check that did not hold is a
// <failure> with the output lines it stands on, the requests and the command's last lines. A fault
// of the kit is an <error> of its own suite, never a scenario's failure.

function failureText(r: ScenarioResult, detail: string, lines: Array<{ n: number; text: string }>): string {
  return [
    detail,
    ...(lines.length ? ['', 'output lines:', ...lines.map((l) => `${String(l.n).padStart(4)}| ${l.text}`)] : []),
    '',
    `requests (${r.requests}):`,
    ...r.sent.slice(0, 20).map((q) => `  ${q.method} ${q.target} → ${sentStatus(q)}`),
    '',
    `last output lines (${r.output.length} of ${r.outputLines}):`,
    ...r.output.map((l) => `  | ${l}`),
  ].join('\n');
}

export function renderClientRunJunit(result: ClientRunResult, startedAt: string, hostname: string): string {
  const timestamp = startedAt.replace(/\.\d+Z$/, 'Z');
  const totals = { tests: 0, failures: 0, errors: 0, skipped: 0 };
  const suites: string[] = [];
  result.scenarios.forEach((r, index) => {
    const name = `pmv6.clients.run.${r.scenario}`;
    let failures = 0;
    const cases = r.checks.map((c) => {
      const open = `    <testcase${attrs({ name: `[${c.id}] ${c.what}`, classname: name, time: seconds(0) })}`;
      if (c.held) return `${open}/>`;
      failures++;
      const detail = c.detail ?? c.what;
      return `${open}>\n      <failure${attrs({ message: clip(detail, 299, '…'), type: r.expectation })}>${xmlText(failureText(r, detail, c.lines ?? []))}</failure>\n    </testcase>`;
    });
    totals.tests += r.checks.length;
    totals.failures += failures;
    const properties = { command: result.command, scenario: r.scenario, expectation: r.expectation, verdict: clientRunLabel(result) };
    suites.push(
      ...junitSuite({ name, tests: r.checks.length, failures, errors: 0, skipped: 0, timeMs: r.ms, timestamp, hostname, id: index }, properties, cases),
    );
  });
  if (result.kitErrors.length > 0) {
    totals.tests += result.kitErrors.length;
    totals.errors += result.kitErrors.length;
    suites.push(...kitErrorSuite('pmv6.clients.run.kit', result.kitErrors, timestamp, hostname, result.scenarios.length));
  }
  const time = result.scenarios.reduce((n, r) => n + r.ms, 0);
  return junitDocument('pmv6 clients run', totals, time, timestamp, suites);
}
