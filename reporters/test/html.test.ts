import { beforeAll, describe, expect, test } from 'vitest';
import { parseExpectations } from '../../core/expectations.ts';
import { OUTCOMES } from '../../core/outcomes.ts';
import { clauseById } from '../../suites/catalogue/clauses.ts';
import type { TestResult } from '../../suites/harness/results.ts';
import type { RunResult } from '../../suites/runner/run-suites.ts';
import { verdictOf } from '../../suites/runner/verdict.ts';
import { renderHtml } from '../html.ts';
import { type ResultsDocument, resultsDocument } from '../results-json.ts';
import { fakeRun, planted, secretForms, withSecretTest } from './runs.ts';

const SCRIPT_BODY = '<h1>Projects</h1><script>alert(1)</script>';

function scriptTest(): TestResult {
  return {
    title: '[GEN-03] MUST return every response body as JSON',
    file: 'suites/general/json-bodies.test.ts',
    clauses: ['GEN-03'],
    level: 'MUST',
    outcome: 'fail',
    durationMs: 2,
    failure: {
      kind: 'violation',
      message: 'expected: JSON',
      expected: 'a JSON body',
      actual: `text/html: ${SCRIPT_BODY}`,
      exchange: {
        request: { method: 'GET', url: 'http://127.0.0.1:9/index.php/api/v6/projects.json', headers: {} },
        response: { status: 200, headers: { 'content-type': 'text/html' }, body: `${SCRIPT_BODY}<!-- ${planted} -->` },
        durationMs: 2,
      },
    },
  };
}

let result: RunResult;
let doc: ResultsDocument;
let html: string;

beforeAll(async () => {
  result = withSecretTest(await fakeRun());
  result.clauses.find((c) => c.clause.id === 'GEN-03')?.tests.push(scriptTest());
  doc = resultsDocument(result, verdictOf(result), { pmv6Version: '0', targetVersion: { version: '6.0.0' } });
  html = renderHtml(doc);
}, 60_000);

const card = (page: string, id: string) => {
  const from = page.slice(page.indexOf(`id="clause-${id}"`));
  return from.slice(0, from.indexOf('</article>'));
};

describe('HTML report', () => {
  test('is one self-contained page: no external scripts, styles, fonts or images', () => {
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(html).not.toMatch(/\b(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?\/\//i);
    expect(html).not.toMatch(/@import|url\(|<link\b|<img\b|<iframe\b/i);
    expect(html.match(/<script\b/g)).toHaveLength(1);
    expect(html).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src 'none'; /);
  });

  test('escapes the server response: a <script> in a body is text', () => {
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
    expect(html).not.toContain('<h1>Projects</h1>');
    expect(html).not.toContain('<b>]]></b>');
    expect(html).not.toMatch(/[\u0000\u001b\u0007]/);
    expect(html).toContain('&#34;q&#34; ␀␛');
  });

  test('shows the verdict, the run and a matrix cell per clause', () => {
    expect(html).toContain('class="verdict v-not-conformant" id="verdict">NOT CONFORMANT<');
    for (const text of ['http://127.0.0.1:9', '{&#34;version&#34;:&#34;6.0.0&#34;}', 'selftest']) expect(html).toContain(text);
    expect(html.match(/<a class="cell /g)).toHaveLength(doc.clauses.length);
    expect(html).toContain('<a class="cell o-fail" data-outcome="fail" href="#clause-PAG-04"');
    expect(html).toContain('id="clause-PAG-04"');
  });

  test('a failing clause carries its quote, expected vs actual, the exchange and the curl line', () => {
    const pag04 = card(html, 'PAG-04');
    const quote = doc.clauses.find((c) => c.id === 'PAG-04')?.quote ?? '';
    expect(quote).not.toBe('');
    expect(pag04).toContain(`<blockquote class="quote">${quote.replace(/"/g, '&#34;')}<footer>`);
    expect(pag04).toContain('<pre>status 201</pre>');
    expect(pag04).toContain('<pre>status 200</pre>');
    expect(pag04).toContain('POST http://127.0.0.1:9/index.php/api/v6/passwords.json');
    expect(pag04).toContain('HTTP 200');
    expect(pag04).toMatch(/<pre id="curl-[\d-]+">curl /);
    expect(pag04).toContain('<details class="failure" open>');
  });

  test('leaves out every registered secret, even one the document still carries', () => {
    expect(JSON.stringify(doc)).toContain(planted);
    for (const secret of secretForms()) expect(html).not.toContain(secret);
    expect(html).toContain('«redacted:planted secret»');
  });

  test('lists known deviations in an expectations column and marks their matrix cells', () => {
    expect(html).not.toContain('id="expectations"');
    const expectations = parseExpectations({ 'PAG-04': 'paging is broken, issue #12', 'PAG-03': 'fixed since', 'VER-01': 'not run' }, clauseById);
    const out = renderHtml(resultsDocument(result, verdictOf(result, true, expectations), { pmv6Version: '0' }));
    const table = out.slice(out.indexOf('id="expectations"'), out.indexOf('</table>'));
    expect(table).toContain('<th>Expectation</th>');
    expect(table).toMatch(
      /PAG-04<\/a><\/td><td>MUST<\/td><td><span class="badge o-fail"[^>]*>fail<\/span><\/td><td class="exp-col"><span class="badge o-expected-failure"/,
    );
    expect(table).toContain('paging is broken, issue #12');
    expect(table).toMatch(/PAG-03<\/a>.*o-stale-expectation/);
    expect(out).toContain('<a class="cell o-fail x-expected" data-outcome="fail" href="#clause-PAG-04"');
    expect(out).toContain('<a class="cell o-pass x-stale" data-outcome="pass" href="#clause-PAG-03"');
    expect(card(out, 'PAG-04')).toContain('<b>Known deviation:</b> paging is broken, issue #12');
  });

  test('shows an observed INFO clause as observed, with what its tests recorded, apart from the passes', () => {
    expect(html).toContain(`<a class="cell ${OUTCOMES.info.html.className}" data-outcome="info" href="#clause-GEN-02"`);
    const gen02 = card(html, 'GEN-02');
    expect(gen02).toMatch(/^id="clause-GEN-02" data-outcome="info">/);
    expect(gen02).toContain(`<span class="badge o-info" title="${OUTCOMES.info.meaning}">observed</span>`);
    expect(gen02).not.toMatch(/o-pass|>pass</);
    expect(gen02).toContain('<div class="observations"><div class="box-h">Observed</div><pre>{\n  &#34;PATCH /passwords.json&#34;: 405,');
    expect(card(html, 'RES-17')).toMatch(/^id="clause-RES-17" data-outcome="info">/);
    expect(html).toMatch(/<li title="[^"]*"><span class="swatch o-info"><\/span>observed <b>2<\/b><\/li>/);
    expect(html).toMatch(/<input type="checkbox" value="info" checked><span class="swatch o-info"><\/span>observed<\/label>/);
    expect(html).toMatch(/<p class="verdict-line">\d+ of \d+ clauses passed · 2 INFO clauses observed · /);
    // Its colour is its own, not the pass colour.
    expect(OUTCOMES.info.html.background).not.toBe(OUTCOMES.pass.html.background);
    expect(html).toContain(`.o-info { --o: ${OUTCOMES.info.html.background}; --o-fg: ${OUTCOMES.info.html.ink}; }`);
  });

  test('an observed INFO test that recorded nothing says so', () => {
    const changed = structuredClone(doc);
    const gen02 = changed.clauses.find((c) => c.id === 'GEN-02')?.tests[0];
    if (!gen02) throw new Error('no GEN-02 test');
    delete gen02.observed;
    expect(card(renderHtml(changed), 'GEN-02')).toContain('<p class="note">Observed: nothing recorded; the test ran to its end.</p>');
  });

  test('an unknown outcome string gets the neutral colour and its own filter', () => {
    const changed = structuredClone(doc);
    const addr02 = changed.clauses.find((c) => c.id === 'ADDR-02');
    if (!addr02) throw new Error('no ADDR-02');
    Object.assign(addr02, { outcome: 'something-new' });
    const out = renderHtml(changed);
    expect(out).toContain('<a class="cell o-other" data-outcome="something-new" href="#clause-ADDR-02"');
    expect(out).toContain('<input type="checkbox" value="something-new" checked data-problem>');
  });
});
