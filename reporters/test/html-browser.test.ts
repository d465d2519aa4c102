import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseExpectations } from '../../core/expectations.ts';
import { OUTCOMES } from '../../core/outcomes.ts';
import { clauseById } from '../../suites/catalogue/clauses.ts';
import { verdictOf } from '../../suites/runner/verdict.ts';
import { renderHtml } from '../html.ts';
import { type ResultsDocument, resultsDocument } from '../results-json.ts';
import { fakeRun, secretForms, withSecretTest } from './runs.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** `#1f6feb` → `rgb(31, 111, 235)`, as getComputedStyle writes it. */
const rgb = (hex: string) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;
const LONG_BODY = Array.from({ length: 300 }, (_, i) => `<p>line ${i} ${'x'.repeat(i % 7 === 0 ? 400 : 20)}</p>`).join('\n');

let doc: ResultsDocument;
let reportUrl: string;
let outDir: string;
let browser: Browser;

beforeAll(async () => {
  // Decision: a missing browser fails the check rather than skipping it; CI installs Debian's chromium.
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the report's browser check needs it (apt-get install chromium)`);
  const result = withSecretTest(await fakeRun());
  const gen03 = result.clauses.find((c) => c.clause.id === 'GEN-03');
  if (!gen03) throw new Error('GEN-03 is not in the catalogue');
  gen03.outcome = 'fail';
  gen03.tests.push({
    title: '[GEN-03] MUST return every response body as JSON',
    file: 'suites/general/json-bodies.test.ts',
    clauses: ['GEN-03'],
    level: 'MUST',
    outcome: 'fail',
    durationMs: 3,
    failure: {
      kind: 'violation',
      message: 'expected a JSON body',
      expected: 'a JSON body',
      actual: 'text/html',
      exchange: {
        request: { method: 'GET', url: 'http://127.0.0.1:9/index.php/api/v6/projects.json', headers: {} },
        response: { status: 200, headers: { 'content-type': 'text/html' }, body: `<script>alert(1)</script>\n${LONG_BODY}` },
        durationMs: 3,
      },
    },
  });
  const expectations = parseExpectations({ 'PAG-04': 'paging is broken, issue #12', 'PAG-03': 'fixed since 6.0.2' }, clauseById);
  doc = resultsDocument(result, verdictOf(result, false, expectations), {
    pmv6Version: '0',
    targetVersion: { version: '6.0.2', build: 'ref' },
    cleanup: { deleted: 12, leftovers: [{ kind: 'user', id: 7, name: 'pmv6-selftest-user-1', reason: 'users cannot be deleted through the API' }] },
  });
  outDir = await mkdtemp(join(tmpdir(), 'pmv6-html-report-'));
  const file = join(outDir, 'report.html');
  await writeFile(file, renderHtml(doc));
  reportUrl = pathToFileURL(file).href;
  console.log(`report.html and screenshots: ${outDir}`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}, 90_000);

afterAll(async () => {
  await browser?.close();
});

interface Watched {
  page: Page;
  problems: string[];
}

async function open(viewport: { width: number; height: number }, mobile: boolean): Promise<Watched> {
  const context = await browser.newContext({ viewport, isMobile: mobile, hasTouch: mobile, deviceScaleFactor: mobile ? 2 : 1 });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console: ${m.text()}`);
  });
  page.on('request', (r) => {
    if (!r.url().startsWith('file:')) problems.push(`request: ${r.url()}`);
  });
  await page.goto(reportUrl);
  return { page, problems };
}

describe('HTML report in Chromium', () => {
  test('renders the matrix and a failure, filters by outcome, runs no foreign script and loads nothing', async () => {
    const { page, problems } = await open({ width: 1280, height: 900 }, false);
    await page.screenshot({ path: join(outDir, 'desktop.png') });

    expect(await page.locator('#verdict').innerText()).toBe('NOT CONFORMANT');
    const cells = page.locator('#matrix .cell');
    expect(await cells.count()).toBe(doc.clauses.length);
    for (const i of [0, doc.clauses.length - 1]) expect(await cells.nth(i).isVisible()).toBe(true);
    const box = await cells.first().boundingBox();
    expect(box?.width ?? 0).toBeGreaterThan(20);

    await page.locator('#matrix .cell[href="#clause-PAG-04"]').click();
    expect(page.url()).toMatch(/#clause-PAG-04$/);
    const pag04 = page.locator('#clause-PAG-04');
    expect(await pag04.locator('.ea .expected').innerText()).toBe('status 201');
    expect(await pag04.locator('.ea .actual').innerText()).toBe('status 200');
    const requestLine = pag04.locator('.request-line');
    expect(await requestLine.isVisible()).toBe(true);
    expect(await requestLine.innerText()).toBe('POST http://127.0.0.1:9/index.php/api/v6/passwords.json');
    expect(await pag04.locator('pre[id^="curl-"]').innerText()).toMatch(/^curl /);
    expect(await pag04.locator('button.copy').isVisible()).toBe(true);
    await pag04.screenshot({ path: join(outDir, 'desktop-failure.png') });

    expect(await page.locator('#clause-GEN-03 .response pre').last().innerText()).toContain('<script>alert(1)</script>');

    // An observed INFO clause is apart from the passes: its own colour and filter, what it recorded shown.
    type Window = { getComputedStyle(el: unknown): { backgroundColor: string } };
    const background = (href: string) =>
      page.locator(`#matrix .cell[href="${href}"]`).evaluate((el) => (globalThis as unknown as Window).getComputedStyle(el).backgroundColor);
    expect(await background('#clause-GEN-02')).toBe(rgb(OUTCOMES.info.html.background));
    expect(await background('#clause-RES-16')).toBe(rgb(OUTCOMES.pass.html.background));
    expect(await page.locator('#clause-GEN-02 .badge.o-info').first().innerText()).toBe('observed');
    expect(await page.locator('#clause-GEN-02 .observations pre').innerText()).toContain('"PATCH /passwords.json": 405');

    expect(await page.locator('#clause-PAG-03').isVisible()).toBe(true);
    await page.locator('#filter input[value="pass"]').uncheck();
    expect(await page.locator('#clause-PAG-03').isVisible()).toBe(false);
    expect(await page.locator('#clause-GEN-02').isVisible()).toBe(true);
    expect(await pag04.isVisible()).toBe(true);
    expect(await page.locator('#matrix .cell[href="#clause-PAG-03"]').getAttribute('class')).toContain('dim');
    await page.locator('[data-preset="problems"]').click();
    expect(await page.locator('.clause:not([hidden])').count()).toBe(
      doc.clauses.filter((c) => ['fail', 'warn', 'harness-error', 'setup-failed'].includes(c.outcome)).length,
    );
    await page.locator('#clauses').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(outDir, 'desktop-problems.png') });
    await page.locator('[data-preset="all"]').click();
    expect(await page.locator('#clause-PAG-03').isVisible()).toBe(true);

    expect(await page.locator('#expectations tr:has(a[href="#clause-PAG-04"]) td.exp-col').innerText()).toBe('expected failure');
    const text = await page.locator('body').innerText();
    for (const secret of secretForms()) expect(text).not.toContain(secret);

    expect(problems).toEqual([]);
  }, 60_000);

  test('fits a phone: no horizontal scroll, long bodies scroll in their own box', async () => {
    const { page, problems } = await open({ width: 390, height: 844 }, true);
    const widths = (await page.evaluate(
      '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth, body: document.body.scrollWidth })',
    )) as { scroll: number; client: number; body: number };
    expect(widths.client).toBe(390);
    expect(widths.scroll).toBeLessThanOrEqual(widths.client);
    expect(widths.body).toBeLessThanOrEqual(widths.client);
    await page.screenshot({ path: join(outDir, 'phone.png') });
    const body = page.locator('#clause-GEN-03 .response pre').last();
    const sizes = await body.evaluate((el) => ({ scroll: el.scrollHeight, client: el.clientHeight, width: el.getBoundingClientRect().right }));
    expect(sizes.scroll).toBeGreaterThan(sizes.client);
    expect(sizes.width).toBeLessThanOrEqual(390);
    await page.locator('#clause-PAG-04').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(outDir, 'phone-failure.png') });
    expect(problems).toEqual([]);
  }, 60_000);
});
