import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { OUTCOME_ORDER, OUTCOMES, type Outcome } from '../../core/outcomes.ts';
import { clauseById } from '../../suites/catalogue/clauses.ts';
import { verdictOf } from '../../suites/runner/verdict.ts';
import { verdictText } from '../console.ts';
import { renderHtml } from '../html.ts';
import { renderJunit } from '../junit.ts';
import { renderSummary } from '../markdown.ts';
import { resultsDocument } from '../results-json.ts';
import { syntheticRun } from './runs.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The sources that show or weigh outcomes (tests aside). */
function sources(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return name === 'test' || name === 'node_modules' ? [] : walk(path);
      return name.endsWith('.ts') ? [path] : [];
    });
  return [...walk(join(ROOT, 'reporters')), ...walk(join(ROOT, 'suites/runner')), join(ROOT, 'bin/cli/run.ts')];
}

/** vitest's own test states (`TestCase.result().state`), which the collector reads; not outcome words. */
const VITEST_STATES = ['passed', 'failed', 'skipped', 'pending'];

/**
 * Every string by which some report shows an outcome, other than the outcome names themselves and
 * the table's own values that code compares against (its verdict effects and JUnit mappings).
 */
function displayStrings(): Set<string> {
  const out = new Set<string>();
  for (const o of OUTCOME_ORDER) {
    const v = OUTCOMES[o];
    for (const s of [v.label, v.console.word, v.console.tally, v.html.className, v.html.background]) if (s !== undefined) out.add(s);
  }
  for (const s of [...OUTCOME_ORDER, ...OUTCOME_ORDER.flatMap((o) => [OUTCOMES[o].verdict, OUTCOMES[o].junit]), ...VITEST_STATES]) out.delete(s);
  return out;
}

/** The code of a source file: comments removed (they may name an outcome's words). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:\\])\/\/.*$/gm, '$1');
}

// An INFO clause is one whose level is INFO; pick one per level so every outcome can be shown.
const MUST = 'PAG-03';
const INFO = 'GEN-02';

function runWith(outcome: Outcome) {
  const id = outcome === 'info' ? INFO : MUST;
  const run = syntheticRun({ [id]: outcome }, 'disabled');
  const verdict = verdictOf(run);
  return { id, run, verdict, doc: resultsDocument(run, verdict, { pmv6Version: '0' }) };
}

describe('the outcome table (core/outcomes.ts)', () => {
  test('is the only place outcome labels, words, colours and weights are declared', () => {
    const shown = displayStrings();
    const found: string[] = [];
    for (const file of sources()) {
      const text = code(readFileSync(file, 'utf8'));
      const where = relative(ROOT, file);
      // Counts per outcome (Record<Outcome, number>) are data; any other per-outcome map declares something.
      if (/Record<Outcome, (?!number>)/.test(text)) found.push(`${where}: a Record<Outcome, …> of its own`);
      if (/\bWEIGHT\b|(?<![-\w])weight\s*:/.test(text)) found.push(`${where}: declares a weight`);
      for (const m of text.matchAll(/'([^'\n]*)'|"([^"\n]*)"/g)) {
        const literal = m[1] ?? m[2] ?? '';
        if (shown.has(literal)) found.push(`${where}: the literal '${literal}'`);
      }
    }
    expect(found).toEqual([]);
  });

  test('core/ imports nothing of the project', () => {
    const files = readdirSync(join(ROOT, 'core')).filter((f) => f.endsWith('.ts'));
    expect(files).toContain('outcomes.ts');
    for (const f of files) {
      const imports = [...readFileSync(join(ROOT, 'core', f), 'utf8').matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]/g)].map(
        (m) => m[1] ?? m[2] ?? '',
      );
      expect(
        imports.filter((i) => i.startsWith('.') && !/^\.\/[^/]+$/.test(i)),
        f,
      ).toEqual([]);
    }
  });

  test("reporters/README.md lists every outcome with the table's weight order", () => {
    const readme = readFileSync(join(ROOT, 'reporters/README.md'), 'utf8');
    for (const o of OUTCOME_ORDER) expect(readme, o).toMatch(new RegExp(`^\\| \`${o}\` \\|`, 'm'));
    const order = OUTCOME_ORDER.filter((o) => o !== 'untested').sort((a, b) => OUTCOMES[b].weight - OUTCOMES[a].weight);
    expect(readme.replace(/\s+/g, ' ')).toContain(`A clause takes the weightiest outcome of its tests: ${order.join(' > ')}.`);
  });

  test('the check above finds a declaration: it is not a test that cannot fail', () => {
    expect(displayStrings()).toContain('HARNESS ERROR');
    expect(displayStrings()).toContain('observed');
    expect("const SYMBOL: Record<Outcome, string> = { pass: 'ok' }").toMatch(/Record<Outcome, (?!number>)/);
    expect(code("const WEIGHT = { fail: 7 }; // 'ok'")).toMatch(/\bWEIGHT\b/);
    expect(code("const SYMBOL = { pass: 'ok' }; // a comment")).toContain("'ok'");
  });

  test.each(OUTCOME_ORDER.filter((o) => o !== 'untested'))('every report shows %s as the table says', (outcome) => {
    const view = OUTCOMES[outcome];
    const { id, run, verdict, doc } = runWith(outcome);
    expect(run.clauses.find((c) => c.clause.id === id)?.outcome).toBe(outcome);
    expect(clauseById(id)?.level).toBe(outcome === 'info' ? 'INFO' : 'MUST');

    const text = verdictText(run, verdict);
    expect(text).toMatch(new RegExp(`^area {30}.*${view.console.word.padStart(14)}`, 'm'));
    const tally = view.console.tally;
    if (tally) {
      const n = OUTCOME_ORDER.filter((o) => OUTCOMES[o].console.tally === tally).reduce((sum, o) => sum + verdict.counts[o], 0);
      expect(text).toMatch(new RegExp(`verdict: [^\\n]*\\b${n}(?:/\\d+ clauses)? ${tally}\\b`));
    }
    expect(verdictText(run, verdict, { colour: true })).toContain(`m${view.console.word.padStart(14)}\x1b[0m`);

    expect(renderSummary(doc)).toMatch(new RegExp(`^\\| area \\| (?:[^|]+ \\| )*${view.label} \\|`, 'm'));

    const html = renderHtml(doc);
    expect(html).toContain(`<a class="cell ${view.html.className}" data-outcome="${outcome}" href="#clause-${id}"`);
    expect(html).toContain(`<span class="badge ${view.html.className}" title="${view.meaning}">${view.label}</span>`);
    expect(html).toContain(`.${view.html.className} { --o: ${view.html.background}; --o-fg: ${view.html.ink}; }`);

    const junit = renderJunit(doc);
    const testcase = new RegExp(`<testcase name="\\[${id}\\][^>]*?(/>|>[\\s\\S]*?</testcase>)`).exec(junit)?.[0] ?? '';
    const expected = {
      success: /\/>$/,
      observation: /status="observed">\s*<system-out>observed /,
      failure: /<failure [^>]*type="MUST"/,
      'failure-under-strict': /<system-out>warn \(MUST|<system-out>warn /,
      error: new RegExp(`<error [^>]*type="${outcome}"`),
      skipped: new RegExp(`<skipped message="${view.label}: `),
    }[view.junit];
    expect(testcase).toMatch(expected);

    expect(doc.clauses.find((c) => c.id === id)?.outcome).toBe(outcome);
    expect(doc.verdict.counts[outcome]).toBe(1 + (outcome === 'disabled' ? run.clauses.length - 1 : 0));
  });
});
