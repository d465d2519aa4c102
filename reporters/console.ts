import { AREAS, type Area } from '../suites/catalogue/clauses.ts';
import type { Outcome, TestResult } from '../suites/runner/outcomes.ts';
import type { RunResult } from '../suites/runner/run-suites.ts';
import type { Verdict } from '../suites/runner/verdict.ts';
import { scrub } from '../suites/harness/redact.ts';

const SYMBOL: Record<Outcome, string> = {
  pass: 'ok',
  fail: 'FAIL',
  warn: 'warn',
  'skipped-unverifiable': 'unverifiable',
  disabled: 'disabled',
  'setup-failed': 'SETUP FAILED',
  'harness-error': 'HARNESS ERROR',
  untested: 'untested',
};

export interface Progress {
  test(result: TestResult): void;
  module(file: string, results: TestResult[]): void;
  done(): void;
}

// On a terminal one live line counts the tests as they finish and each file leaves a line;
// elsewhere (CI logs, pipes) only the per-file lines are written; --quiet writes nothing.
export function progress(out: NodeJS.WriteStream, opts: { quiet: boolean; clean: (s: string) => string }): Progress {
  const live = out.isTTY === true && !opts.quiet;
  const counts = new Map<Outcome, number>();
  let tests = 0;
  const clear = () => {
    if (live) out.write('\r\x1b[2K');
  };
  return {
    test(result) {
      tests++;
      counts.set(result.outcome, (counts.get(result.outcome) ?? 0) + 1);
      if (!live) return;
      const parts = [...counts].map(([o, n]) => `${n} ${SYMBOL[o]}`).join(', ');
      clear();
      out.write(opts.clean(`  ${tests} tests: ${parts}  ${result.file.replace(/^suites\//, '')}`.slice(0, (out.columns ?? 100) - 1)));
    },
    module(file, results) {
      if (opts.quiet) return;
      clear();
      out.write(`${opts.clean(progressLine(file, results))}\n`);
    },
    done: clear,
  };
}

export function progressLine(file: string, results: TestResult[]): string {
  const counts = new Map<Outcome, number>();
  for (const r of results) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
  const parts = [...counts].map(([o, n]) => `${n} ${SYMBOL[o]}`);
  return `  ${file.replace(/^suites\//, '').padEnd(44)} ${parts.join(', ') || 'no tests'}`;
}

const COLUMNS: Outcome[] = ['pass', 'fail', 'warn', 'skipped-unverifiable', 'disabled', 'setup-failed', 'harness-error', 'untested'];

export function verdictText(result: RunResult, verdict: Verdict): string {
  const lines: string[] = [];
  const byArea = new Map<Area, Record<Outcome, number>>();
  for (const c of result.clauses) {
    const row = byArea.get(c.clause.area) ?? (Object.fromEntries(COLUMNS.map((o) => [o, 0])) as Record<Outcome, number>);
    row[c.outcome]++;
    byArea.set(c.clause.area, row);
  }
  const used = COLUMNS.filter((o) => [...byArea.values()].some((r) => r[o] > 0));
  lines.push('', `${'area'.padEnd(34)}${used.map((o) => SYMBOL[o].padStart(14)).join('')}`);
  for (const [area, row] of byArea) {
    lines.push(`${`${area} ${AREAS[area]}`.slice(0, 33).padEnd(34)}${used.map((o) => String(row[o]).padStart(14)).join('')}`);
  }
  const untested = result.clauses.filter((c) => c.outcome === 'untested');
  if (untested.length > 0) lines.push('', `no test yet for ${untested.length} clauses: ${untested.map((c) => c.clause.id).join(' ')}`);
  const bad = result.clauses.filter((c) => ['fail', 'warn', 'setup-failed', 'harness-error'].includes(c.outcome));
  const known = verdict.expectations;
  for (const c of bad) {
    const expectation = known?.byClause.get(c.clause.id);
    if (expectation?.status === 'expected-failure') {
      lines.push('', `expected failure [${c.clause.id}] ${c.clause.level} ${c.clause.behaviour}: ${expectation.reason}`);
      continue;
    }
    lines.push('', `${SYMBOL[c.outcome]} [${c.clause.id}] ${c.clause.level} ${c.clause.behaviour}`, `  spec ${c.clause.section}: "${c.clause.quote}"`);
    for (const t of c.tests.filter((t) => t.outcome === c.outcome)) {
      lines.push(`  test: ${t.title} (${t.file})`);
      if (t.failure) lines.push(indent(scrub(t.failure.message), 4));
      else if (t.note) lines.push(`    ${t.note}`);
    }
  }
  for (const id of known?.stale ?? []) {
    lines.push('', `stale expectation [${id}]: listed as a known deviation, but it passes now (${known?.byClause.get(id)?.reason ?? ''})`);
  }
  for (const e of result.harnessErrors) lines.push('', `HARNESS ERROR ${e}`);
  const total = result.clauses.length;
  const n = verdict.counts;
  lines.push(
    '',
    `verdict: ${verdict.label}: ${n.pass}/${total} clauses passed, ${n.fail} failed, ${n.warn} warned, ` +
      `${n['skipped-unverifiable']} unverifiable, ${n.disabled} disabled, ${n['setup-failed'] + n['harness-error']} inconclusive ` +
      `(${result.tests.length} tests in ${(result.durationMs / 1000).toFixed(1)} s)`,
  );
  return `${lines.join('\n')}\n`;
}

function indent(text: string, n: number): string {
  const pad = ' '.repeat(n);
  return text
    .split('\n')
    .map((l) => pad + l)
    .join('\n');
}
