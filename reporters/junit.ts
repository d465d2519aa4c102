import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OUTCOMES } from '../core/outcomes.ts';
import { clip } from '../core/redact.ts';
import { formatExchange } from '../suites/harness/assert.ts';
import { addCounts, junitDocument, junitSuite, noCounts, junitSeconds as seconds } from './junit-xml.ts';
import type { ResultsClause, ResultsDocument, ResultsTest } from './results-json.ts';
import { attrs, xmlText } from './xml-text.ts';

// junit.xml in the Jenkins/Surefire JUnit format (reporters/schema/junit.xsd): one testsuite per
// area, one testcase per test. Decisions:
// - Each outcome's mapping is its `junit` in core/outcomes.ts.
// - A testcase fails exactly when it makes the run fail, so a CI tool's red matches the exit code:
//   fail is <failure type="MUST">; warn is <failure type="SHOULD"> only for a SHOULD under
//   --strict, otherwise a passed testcase with a <system-out> note (JUnit has no "warning").
// - harness-error and setup-failed are <error>: the test could not judge the server.
// - info (an observed INFO test) is a passed testcase with status="observed" and what was
//   observed in <system-out>; it never counts as a failure.
// - skipped-unverifiable and disabled are <skipped>; so is a failure listed as a known deviation
//   (as pytest writes xfail), its text in <system-out>. A stale expectation is a <failure> under
//   --strict, a <system-out> note otherwise.
// - A test whose every clause was made unverifiable by an unmet dependency is skipped with the
//   clause's note, whatever the test itself did.

interface Case {
  test: ResultsTest;
  clauses: ResultsClause[];
}

function casesByArea(doc: ResultsDocument): Map<string, Case[]> {
  const seen = new Map<string, Case>();
  for (const clause of doc.clauses) {
    for (const test of clause.tests) {
      const key = `${test.file}\0${test.title}`;
      const known = seen.get(key);
      if (known) known.clauses.push(clause);
      else seen.set(key, { test, clauses: [clause] });
    }
  }
  const areas = new Map<string, Case[]>();
  for (const c of seen.values()) {
    const area = c.test.clauses[0]?.split('-')[0] ?? c.clauses[0]?.area ?? 'GEN';
    areas.set(area, [...(areas.get(area) ?? []), c]);
  }
  return areas;
}

function spec(clauses: ResultsClause[]): string {
  return clauses.map((c) => `[${c.id}] ${c.level} ${c.section}: "${c.quote}"`).join('\n');
}

function failureText(c: Case): string {
  const f = c.test.failure;
  const parts = [spec(c.clauses)];
  if (f) parts.push(f.message);
  if (f?.exchange && !f.message.includes(`> ${f.exchange.request.method} `)) parts.push(formatExchange(f.exchange));
  if (f?.curl && !f.message.includes(f.curl)) parts.push(`reproduce: ${f.curl}`);
  return parts.join('\n\n');
}

function oneLine(c: Case): string {
  const f = c.test.failure;
  const text = f?.expected !== undefined ? `expected ${f.expected}, actual ${f.actual ?? '?'}` : (f?.message.split('\n')[0] ?? c.test.outcome);
  return clip(text, 299, '…');
}

function element(name: string, attributes: Record<string, string | undefined>, text?: string): string {
  return text === undefined ? `<${name}${attrs(attributes)}/>` : `<${name}${attrs(attributes)}>${xmlText(text)}</${name}>`;
}

type Kind = 'failure' | 'error' | 'skipped' | undefined;

/** What an INFO test recorded, one `key: value` a line (values as JSON). */
function observedText(test: ResultsTest): string {
  const entries = Object.entries(test.observed ?? {});
  if (entries.length === 0) return 'nothing recorded; the test ran to its end';
  return entries.map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join('\n');
}

function caseBody(c: Case, strict: boolean): { kind: Kind; body: string[]; status?: string } {
  const { test, clauses } = c;
  const view = OUTCOMES[test.outcome];
  if (clauses.every((cl) => cl.outcome === 'skipped-unverifiable' && cl.note) && view.judged) {
    return {
      kind: 'skipped',
      body: [element('skipped', { message: `${OUTCOMES['skipped-unverifiable'].label}: ${clauses.map((cl) => cl.note).join('; ')}` })],
    };
  }
  switch (view.junit) {
    case 'failure':
    case 'failure-under-strict': {
      const failing = clauses.filter((cl) => OUTCOMES[cl.outcome].verdict.startsWith('violation'));
      const expected = failing.length > 0 && failing.every((cl) => cl.expectation?.status === 'expected-failure');
      if (expected) {
        const reasons = failing.map((cl) => `${cl.id}: ${cl.expectation?.reason ?? ''}`).join('; ');
        return {
          kind: 'skipped',
          body: [element('skipped', { message: `expected failure (known deviation) ${reasons}` }), element('system-out', {}, failureText(c))],
        };
      }
      if (view.junit === 'failure' || (strict && test.level === 'SHOULD')) {
        return { kind: 'failure', body: [element('failure', { message: oneLine(c), type: view.junit === 'failure' ? 'MUST' : 'SHOULD' }, failureText(c))] };
      }
      return {
        kind: undefined,
        body: [
          element(
            'system-out',
            {},
            `${view.label} (${test.level}, does not fail the run${strict ? '' : ' without --strict'}): ${oneLine(c)}\n\n${failureText(c)}`,
          ),
        ],
      };
    }
    case 'error':
      return { kind: 'error', body: [element('error', { message: oneLine(c), type: test.outcome }, failureText(c))] };
    case 'skipped': {
      const why = test.outcome === 'skipped-unverifiable' ? 'the run cannot verify this' : 'left out by --only/--skip';
      return { kind: 'skipped', body: [element('skipped', { message: `${view.label}: ${test.note ?? why}` })] };
    }
    case 'observation':
    case 'success': {
      const observation =
        view.junit === 'observation'
          ? [
              element(
                'system-out',
                {},
                `${view.label} (${test.level}, implementation-defined; not a pass, does not fail the run):\n${observedText(test)}\n\n${spec(clauses)}`,
              ),
            ]
          : [];
      const status = view.junit === 'observation' ? { status: view.label } : {};
      const stale = clauses.filter((cl) => cl.expectation?.status === 'stale-expectation');
      if (stale.length === 0) return { kind: undefined, body: observation, ...status };
      const message = `stale expectation: ${stale.map((cl) => cl.id).join(', ')} listed as a known deviation but passed; remove the entry`;
      return strict
        ? { kind: 'failure', body: [element('failure', { message, type: 'stale-expectation' }, spec(stale)), ...observation], ...status }
        : { kind: undefined, body: [element('system-out', {}, message), ...observation], ...status };
    }
  }
}

export function renderJunit(doc: ResultsDocument): string {
  const strict = doc.verdict.strict;
  const timestamp = doc.startedAt.replace(/\.\d+Z$/, 'Z');
  const properties = {
    pmv6: doc.pmv6,
    format: doc.format,
    runId: doc.runId,
    seed: String(doc.seed),
    target: doc.target.url,
    strict: String(strict),
    verdict: doc.verdict.label,
  };
  const suites: string[] = [];
  let id = 0;
  const totals = noCounts();
  const suite = (name: string, cases: Array<{ name: string; time: string; file?: string; kind: Kind; body: string[]; status?: string }>, time: number) => {
    const n = { ...noCounts(), tests: cases.length };
    for (const c of cases)
      if (c.kind === 'failure') n.failures++;
      else if (c.kind === 'error') n.errors++;
      else if (c.kind === 'skipped') n.skipped++;
    addCounts(totals, n);
    suites.push(
      ...junitSuite(
        { name, ...n, timeMs: time, timestamp, hostname: doc.hostname, id: id++ },
        properties,
        cases.map((c) => {
          const open = `    <testcase${attrs({ name: c.name, classname: name, time: c.time, file: c.file, status: c.status })}`;
          return c.body.length === 0 ? `${open}/>` : `${open}>\n${c.body.map((b) => `      ${b}`).join('\n')}\n    </testcase>`;
        }),
      ),
    );
  };
  for (const [area, cases] of casesByArea(doc)) {
    suite(
      `pmv6.${area}`,
      cases.map((c) => ({ name: c.test.title, time: seconds(c.test.durationMs), file: c.test.file, ...caseBody(c, strict) })),
      cases.reduce((sum, c) => sum + c.test.durationMs, 0),
    );
  }
  if (doc.harnessErrors.length > 0) {
    suite(
      'pmv6.harness',
      doc.harnessErrors.map((e, i) => ({
        name: `harness error ${i + 1}`,
        time: seconds(0),
        kind: 'error' as const,
        body: [element('error', { message: e.split('\n')[0] ?? e, type: 'harness-error' }, e)],
      })),
      0,
    );
  }
  return junitDocument(`pmv6 ${doc.runId}`, totals, doc.durationMs, timestamp, suites);
}

export async function writeJunit(dir: string, doc: ResultsDocument): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'junit.xml');
  await writeFile(file, renderJunit(doc));
  return file;
}
