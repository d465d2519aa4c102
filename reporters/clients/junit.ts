import { clip } from '../../core/redact.ts';
import { formatExchange } from '../../suites/harness/assert.ts';
import { addCounts, junitDocument, junitSuite, noCounts, junitSeconds as seconds } from '../junit-xml.ts';
import { attrs, xmlText } from '../xml-text.ts';
import type { ClientResult, ClientResultsDocument } from './results.ts';

// junit.xml of a client run, in the format of reporters/schema/junit.xsd: one testsuite per client
// (`pmv6.clients.<id>`, properties say which), one testcase per client clause. As for server runs, a
// testcase fails exactly when it makes the run fail: a MUST finding is <failure type="MUST">; a SHOULD
// finding is a failure only under --strict; an INFO finding passes with the findings in <system-out>;
// a clause no request exercised is <skipped>.

function findingsText(doc: ClientResultsDocument, c: ClientResult, id: string): string {
  const clause = doc.clauses.find((k) => k.id === id)!;
  const x = c.clauses.find((k) => k.id === id)!;
  const parts = [`[${clause.id}] ${clause.level} ${clause.section}: "${clause.quote}"`, `${x.findings} of ${x.checked} requests`];
  for (const f of c.findings.filter((f) => f.clause === id)) {
    parts.push(
      `#${f.seq} ${f.method} ${f.target} → ${f.status ?? 'no answer'}\nexpected ${f.expected}\nactual   ${f.actual}\n${formatExchange(f.exchange)}\nreproduce: ${f.curl}`,
    );
  }
  return parts.join('\n\n');
}

/** The testsuite of the kit's own faults: one <error> each, never a client's failure. */
export function kitErrorSuite(name: string, errors: readonly string[], timestamp: string, hostname: string, id: number): string[] {
  return junitSuite(
    { name, ...noCounts(), tests: errors.length, errors: errors.length, timeMs: 0, timestamp, hostname, id },
    undefined,
    errors.map(
      (e, i) =>
        `    <testcase${attrs({ name: `kit error ${i + 1}`, classname: name, time: seconds(0) })}>\n      <error${attrs({ message: e.split('\n')[0] ?? e, type: 'harness-error' })}>${xmlText(e)}</error>\n    </testcase>`,
    ),
  );
}

export function renderClientJunit(doc: ClientResultsDocument): string {
  const timestamp = doc.startedAt.replace(/\.\d+Z$/, 'Z');
  const totals = noCounts();
  const suites: string[] = [];
  doc.clients.forEach((c, index) => {
    const name = `pmv6.clients.${c.id}`;
    const n = noCounts();
    const cases = c.clauses.map((x) => {
      const clause = doc.clauses.find((k) => k.id === x.id)!;
      n.tests++;
      const open = `    <testcase${attrs({ name: `[${clause.id}] ${clause.level} ${clause.behaviour}`, classname: name, time: seconds(0) })}`;
      if (x.outcome === 'untested') {
        n.skipped++;
        return `${open}>\n      <skipped${attrs({ message: 'no request of this client exercised the clause' })}/>\n    </testcase>`;
      }
      if (x.outcome === 'pass') return `${open}/>`;
      const first = c.findings.find((f) => f.clause === x.id);
      const message = first ? `expected ${first.expected}, actual ${first.actual}` : `${x.findings} findings`;
      const short = clip(message, 299, '…');
      const fails = x.outcome === 'fail' || (doc.verdict.strict && clause.level === 'SHOULD');
      if (fails) {
        n.failures++;
        return `${open}>\n      <failure${attrs({ message: short, type: clause.level })}>${xmlText(findingsText(doc, c, x.id))}</failure>\n    </testcase>`;
      }
      return `${open}>\n      <system-out>${xmlText(`warn (${clause.level}, does not fail the run): ${short}\n\n${findingsText(doc, c, x.id)}`)}</system-out>\n    </testcase>`;
    });
    addCounts(totals, n);
    const properties = {
      pmv6: doc.pmv6,
      format: doc.format,
      kit: doc.kit.url,
      userAgent: c.userAgent ?? '(none)',
      credentials: c.credentials,
      requests: String(c.requests),
      verdict: doc.verdict.label,
    };
    suites.push(
      ...junitSuite({ name, ...n, timeMs: Date.parse(c.lastAt) - Date.parse(c.firstAt), timestamp, hostname: doc.hostname, id: index }, properties, cases),
    );
  });
  if (doc.kitErrors.length > 0) {
    totals.tests += doc.kitErrors.length;
    totals.errors += doc.kitErrors.length;
    suites.push(...kitErrorSuite('pmv6.clients.kit', doc.kitErrors, timestamp, doc.hostname, doc.clients.length));
  }
  return junitDocument('pmv6 clients', totals, doc.durationMs, timestamp, suites);
}
