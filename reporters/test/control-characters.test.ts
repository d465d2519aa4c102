import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import type { TestResult } from '../../suites/harness/results.ts';
import type { RunResult } from '../../suites/runner/run-suites.ts';
import { verdictOf } from '../../suites/runner/verdict.ts';
import { clientVerdictText } from '../clients/console.ts';
import { renderClientJunit } from '../clients/junit.ts';
import { clientResultsDocument } from '../clients/results.ts';
import { verdictText } from '../console.ts';
import { renderHtml } from '../html.ts';
import { writeJunit } from '../junit.ts';
import { renderSummary } from '../markdown.ts';
import { resultsDocument } from '../results-json.ts';
import { forTerminal, terminalText } from '../terminal.ts';
import { syntheticRun } from './runs.ts';

// A name a server stores and sends back may carry any character: an ANSI sequence that recolours
// the terminal or clears the screen, a bell, a carriage return that overwrites the line, C1's CSI,
// a right-to-left override.
const HOSTILE = 'proj\x1b[2J\x1b]0;owned\x07\r\x00\x08\x7f\x9b31m\x85\u202eevil';
/** Any character a terminal acts on, raw (tab and line feed are text). */
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
/** What XML 1.0 forbids or asks to avoid, and HTML reports as parse errors: C0 but tab and line breaks, DEL, C1. */
const REPORT_CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/;

describe('terminal text', () => {
  test('C0 (but tab and line feed), DEL, C1 and bidi overrides are shown as escapes', () => {
    expect(terminalText('a\x1b[31mred\x1b[0m\tb\nc\r\x07\x7f\x9b\u202e')).toBe('a\\x1b[31mred\\x1b[0m\tb\nc\\x0d\\x07\\x7f\\x9b\\u202e');
    expect(terminalText('plain é € 🔑')).toBe('plain é € 🔑');
    expect(RAW_CONTROL.test(forTerminal(HOSTILE))).toBe(false);
  });

  test('the run console: a failure message, note, title and harness error with control characters print escaped', () => {
    const run = syntheticRun({ 'GEN-03': 'fail', 'AUTH-01': 'skipped-unverifiable' });
    const mark = (t: TestResult): TestResult =>
      t.outcome === 'fail'
        ? { ...t, title: `${t.title} ${HOSTILE}`, failure: { ...t.failure!, message: `actual: ${HOSTILE}` } }
        : t.outcome === 'skipped-unverifiable'
          ? { ...t, note: HOSTILE }
          : t;
    const result: RunResult = {
      ...run,
      clauses: run.clauses.map((c) => ({ ...c, tests: c.tests.map(mark) })),
      tests: run.tests.map(mark),
      harnessErrors: [`crashed on ${HOSTILE}`],
    };
    const text = verdictText(result, verdictOf(result, false), { colour: false });
    expect(text).toContain('proj\\x1b[2J');
    expect(RAW_CONTROL.test(text)).toBe(false);
    // With colour on, the only escape sequences are pmv6's own SGR codes.
    const coloured = verdictText(result, verdictOf(result, false), { colour: true });
    expect(coloured.replace(/\x1b\[\d+m/g, '')).not.toMatch(RAW_CONTROL);
  });

  test('the client kit console: a User-Agent and a path with control characters print escaped', () => {
    const doc = clientResultsDocument(
      {
        startedAt: '2025-01-02T03:04:05.678Z',
        takenAt: '2025-01-02T03:04:15.678Z',
        requests: 1,
        scenarios: [],
        clients: [],
        kitErrors: [`request #1: ${HOSTILE}`],
      },
      { pmv6Version: '0.1.0', url: 'http://127.0.0.1:9', hmacWindowSeconds: 300, strict: false },
    );
    const text = clientVerdictText(doc);
    expect(text).toContain('KIT ERROR request #1: proj\\x1b');
    expect(RAW_CONTROL.test(text)).toBe(false);
    const xml = renderClientJunit(doc);
    expect(xml).not.toMatch(REPORT_CONTROL);
    expect(xml).toContain('proj\\x1b[2J');
  });
});

describe('reports', () => {
  const hostileRun = (): RunResult => {
    const run = syntheticRun({ 'GEN-03': 'fail' });
    const mark = (t: TestResult): TestResult =>
      t.outcome === 'fail' ? { ...t, title: `${t.title} ${HOSTILE}`, failure: { ...t.failure!, message: `actual: ${HOSTILE}`, actual: HOSTILE } } : t;
    return { ...run, clauses: run.clauses.map((c) => ({ ...c, tests: c.tests.map(mark) })), tests: run.tests.map(mark), harnessErrors: [HOSTILE] };
  };

  test('junit.xml: control characters substituted, the file stays valid XML (xmllint against the schema)', async () => {
    const result = hostileRun();
    const doc = resultsDocument(result, verdictOf(result, false), { pmv6Version: '0.1.0' });
    const file = await writeJunit(await mkdtemp(join(tmpdir(), 'pmv6-junit-ctl-')), doc);
    const xml = await readFile(file, 'utf8');
    expect(xml).not.toMatch(REPORT_CONTROL);
    expect(xml).toContain('proj\\x1b[2J');
    try {
      execFileSync('xmllint', ['--noout', '--schema', fileURLToPath(new URL('../schema/junit.xsd', import.meta.url)), file], { stdio: 'pipe' });
    } catch (e) {
      const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
      // junit.test.ts fails loudly when xmllint is missing; here the check is the regex above.
      if (err.code !== 'ENOENT') throw new Error(`junit.xml is not valid: ${err.stderr?.toString() ?? err.message}`);
    }
  });

  test('report.html and summary.md: no raw control character', () => {
    const result = hostileRun();
    const doc = resultsDocument(result, verdictOf(result, false), { pmv6Version: '0.1.0' });
    const html = renderHtml(doc);
    expect(html.replace(/<script[\s\S]*?<\/script>/g, '')).not.toMatch(REPORT_CONTROL);
    expect(renderSummary(doc)).not.toMatch(RAW_CONTROL);
  });
});
