import { type ConsoleColour, OUTCOME_ORDER, OUTCOMES, type Outcome, zeroCounts } from '../core/outcomes.ts';
import { AREAS, type Area, TAGS } from '../suites/catalogue/clauses.ts';
import type { RunProgress, TestResult } from '../suites/harness/results.ts';
import type { RunResult } from '../suites/runner/run-suites.ts';
import type { Verdict } from '../suites/runner/verdict.ts';
import { exposureFindings } from './results-json.ts';
import { forTerminal, terminalText } from './terminal.ts';

const SGR: Record<ConsoleColour, string> = { green: '32', red: '31', yellow: '33', cyan: '36', magenta: '35', gray: '90' };

/** The outcome's console word, padded, in its colour when `colour` is on (terminals only). */
function word(outcome: Outcome, colour: boolean, width = 0): string {
  const { word: text, colour: name } = OUTCOMES[outcome].console;
  const padded = text.padStart(width);
  return colour ? `\x1b[${SGR[name]}m${padded}\x1b[0m` : padded;
}

export interface Progress {
  test(result: TestResult): void;
  module(file: string, results: TestResult[]): void;
  /** requests sent, their rate and an estimate of the time left */
  tick(progress: RunProgress): void;
  done(): void;
}

/** "1234 requests, 95/s, about 40 s left": the estimate from the files done so far. */
export function pace(p: RunProgress): string {
  const seconds = p.elapsedMs / 1000;
  const rate = seconds > 0 ? Math.round(p.requests / seconds) : 0;
  const left = p.filesDone > 0 && p.filesTotal > p.filesDone ? Math.ceil((seconds / p.filesDone) * (p.filesTotal - p.filesDone)) : undefined;
  const files = p.filesTotal > 0 ? `, file ${Math.min(p.filesDone + 1, p.filesTotal)}/${p.filesTotal}` : '';
  return `${p.requests} requests, ${rate}/s${files}${left !== undefined ? `, about ${left} s left` : ''}`;
}

// On a terminal one live line counts the tests as they finish and each file leaves a line;
// elsewhere (CI logs, pipes) only the per-file lines are written; --quiet writes nothing.
export function progress(out: NodeJS.WriteStream, opts: { quiet: boolean; clean: (s: string) => string }): Progress {
  const live = out.isTTY === true && !opts.quiet;
  const counts = new Map<Outcome, number>();
  let tests = 0;
  let file = '';
  let paced = '';
  const clear = () => {
    if (live) out.write('\r\x1b[2K');
  };
  const draw = () => {
    if (!live) return;
    const parts = [...counts].map(([o, n]) => `${n} ${word(o, false)}`).join(', ');
    clear();
    out.write(terminalText(opts.clean(`  ${tests} tests: ${parts} | ${paced}  ${file}`)).slice(0, (out.columns ?? 100) - 1));
  };
  return {
    test(result) {
      tests++;
      counts.set(result.outcome, (counts.get(result.outcome) ?? 0) + 1);
      file = result.file.replace(/^suites\//, '');
    },
    tick(p) {
      paced = pace(p);
      draw();
    },
    module(file, results) {
      if (opts.quiet) return;
      clear();
      out.write(`${terminalText(opts.clean(progressLine(file, results)))}\n`);
    },
    done: clear,
  };
}

export function progressLine(file: string, results: TestResult[]): string {
  const counts = new Map<Outcome, number>();
  for (const r of results) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
  const parts = [...counts].map(([o, n]) => `${n} ${word(o, false)}`);
  return `  ${file.replace(/^suites\//, '').padEnd(44)} ${parts.join(', ') || 'no tests'}`;
}

/** The verdict line: every tally of the outcome table, in its order ("95/117 clauses passed, 0 failed, 22 observed, …"). */
function verdictLine(result: RunResult, verdict: Verdict): string {
  const tallies = new Map<string, number>();
  for (const o of OUTCOME_ORDER) {
    const tally = OUTCOMES[o].console.tally;
    if (tally) tallies.set(tally, (tallies.get(tally) ?? 0) + verdict.counts[o]);
  }
  const [first, ...rest] = [...tallies];
  const parts = [`${first?.[1] ?? 0}/${result.clauses.length} clauses ${first?.[0] ?? ''}`, ...rest.map(([tally, n]) => `${n} ${tally}`)];
  return `verdict: ${verdict.label}: ${parts.join(', ')} (${result.tests.length} tests in ${(result.durationMs / 1000).toFixed(1)} s)`;
}

/** `colour`: outcome words in their colours (a terminal; run.ts decides). */
export function verdictText(result: RunResult, verdict: Verdict, options: { colour?: boolean } = {}): string {
  const colour = options.colour ?? false;
  const lines: string[] = [];
  const byArea = new Map<Area, Record<Outcome, number>>();
  for (const c of result.clauses) {
    const row = byArea.get(c.clause.area) ?? zeroCounts();
    row[c.outcome]++;
    byArea.set(c.clause.area, row);
  }
  // Every report opens with cross-user exposure of personal data, whatever its level.
  const exposed = exposureFindings(result.clauses.map((c) => ({ ...c, tags: c.clause.tags })));
  if (exposed.length > 0) lines.push('', `${TAGS.exposure.toUpperCase()} (${exposed.length}): one user's personal data in sight of another`);
  for (const c of exposed) {
    const t = c.tests.find((x) => x.outcome === c.outcome);
    lines.push(`  ${word(c.outcome, colour)} [${c.clause.id}] ${c.clause.level} ${c.clause.behaviour}`);
    if (t?.failure) lines.push(indent(forTerminal(t.failure.message.split('\n')[0] ?? ''), 4));
  }
  const used = OUTCOME_ORDER.filter((o) => [...byArea.values()].some((r) => r[o] > 0));
  lines.push('', `${'area'.padEnd(34)}${used.map((o) => word(o, colour, 14)).join('')}`);
  for (const [area, row] of byArea) {
    lines.push(`${`${area} ${AREAS[area]}`.slice(0, 33).padEnd(34)}${used.map((o) => String(row[o]).padStart(14)).join('')}`);
  }
  const untested = result.clauses.filter((c) => c.outcome === 'untested');
  if (untested.length > 0) lines.push('', `no test yet for ${untested.length} clauses: ${untested.map((c) => c.clause.id).join(' ')}`);
  const bad = result.clauses.filter((c) => OUTCOMES[c.outcome].problem);
  const known = verdict.expectations;
  for (const c of bad) {
    const expectation = known?.byClause.get(c.clause.id);
    if (expectation?.status === 'expected-failure') {
      lines.push('', `expected failure [${c.clause.id}] ${c.clause.level} ${c.clause.behaviour}: ${forTerminal(expectation.reason)}`);
      continue;
    }
    lines.push('', `${word(c.outcome, colour)} [${c.clause.id}] ${c.clause.level} ${c.clause.behaviour}`, `  spec ${c.clause.section}: "${c.clause.quote}"`);
    for (const t of c.tests.filter((t) => t.outcome === c.outcome)) {
      lines.push(`  test: ${forTerminal(t.title)} (${t.file})`);
      if (t.failure) lines.push(indent(forTerminal(t.failure.message), 4));
      else if (t.note) lines.push(`    ${forTerminal(t.note)}`);
    }
  }
  for (const id of known?.stale ?? []) {
    lines.push('', `stale expectation [${id}]: listed as a known deviation, but it passes now (${forTerminal(known?.byClause.get(id)?.reason ?? '')})`);
  }
  for (const e of result.harnessErrors) lines.push('', `HARNESS ERROR ${forTerminal(e)}`);
  lines.push('', verdictLine(result, verdict));
  return `${lines.join('\n')}\n`;
}

function indent(text: string, n: number): string {
  const pad = ' '.repeat(n);
  return text
    .split('\n')
    .map((l) => pad + l)
    .join('\n');
}
