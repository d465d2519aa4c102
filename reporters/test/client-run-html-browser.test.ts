import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CHECKS, type CheckId } from '../../clients/run/expectations.ts';
import type { ClientRunResult } from '../../clients/run/run-client.ts';
import { renderClientRunHtml } from '../clients/run-html.ts';
import { launchChromium, openWatched } from './client-browser.ts';
import { fixtureRun, PRINTED_SECRET } from './client-runs.ts';

// The report.html of `pmv6 clients run` in a real browser (issue 37): a row per scenario, every
// cell under the header of its check, the failed checks' output lines on the page, nothing loaded,
// no error; a screenshot is kept for a look.

let result: ClientRunResult;
let url: string;
let outDir: string;
let browser: Browser;

beforeAll(async () => {
  result = await fixtureRun();
  outDir = await mkdtemp(join(tmpdir(), 'pmv6-client-run-html-'));
  const file = join(outDir, 'report.html');
  await writeFile(file, renderClientRunHtml(result, '0'));
  url = pathToFileURL(file).href;
  console.log(`report.html and screenshot: ${outDir}`);
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
});

describe('clients run report.html in Chromium', () => {
  test('scenarios × checks: every cell under the header of its check; the evidence on the page; nothing loaded, no error', async () => {
    const { page, problems } = await openWatched(browser, url);
    const layout = await page.evaluate(() => {
      type Box = { left: number; right: number; top: number; bottom: number };
      type El = { textContent: string | null; getBoundingClientRect(): Box; querySelectorAll(q: string): Iterable<El> };
      const d = (globalThis as unknown as { document: El & { body: { innerText: string } } }).document;
      const rect = (e: El) => {
        const r = e.getBoundingClientRect();
        return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
      };
      const rows = [...d.querySelectorAll('#matrix tr')];
      const heads = [...rows[0]!.querySelectorAll('th')].slice(1).map((th) => ({ text: th.textContent ?? '', ...rect(th) }));
      const body = rows.slice(1).map((tr) => ({
        scenario: [...tr.querySelectorAll('th')][0]?.textContent ?? '',
        cells: [...tr.querySelectorAll('td')].map((td) => ({ text: td.textContent ?? '', ...rect(td) })),
      }));
      return { heads, body, text: d.body.innerText };
    });
    const columns = (Object.keys(CHECKS) as CheckId[]).filter((id) => result.scenarios.some((r) => r.checks.some((c) => c.id === id)));
    expect(layout.heads.map((h) => h.text)).toEqual(columns.map((id) => CHECKS[id]));
    expect(layout.body).toHaveLength(result.scenarios.length);
    for (const [i, row] of layout.body.entries()) {
      const r = result.scenarios[i]!;
      expect(row.scenario).toContain(r.scenario);
      expect(row.cells).toHaveLength(layout.heads.length);
      for (const [j, cell] of row.cells.entries()) {
        const head = layout.heads[j]!;
        // The cell's centre lies within its column's header, below it, and the row is one line of cells.
        const centre = (cell.left + cell.right) / 2;
        expect(centre, `${r.scenario} × ${head.text}`).toBeGreaterThanOrEqual(head.left - 1);
        expect(centre, `${r.scenario} × ${head.text}`).toBeLessThanOrEqual(head.right + 1);
        expect(cell.top).toBeGreaterThanOrEqual(head.bottom - 1);
        expect(Math.abs(cell.top - row.cells[0]!.top)).toBeLessThan(2);
        // …and says what the result says of that check.
        const check = r.checks.find((c) => c.id === columns[j]);
        expect(cell.text, `${r.scenario} × ${head.text}`).toBe(check === undefined ? '' : check.held ? 'pass' : 'fail');
      }
    }
    expect(layout.text).toContain('"password":"«redacted»"');
    expect(layout.text).toMatch(/SyntaxError/);
    expect(layout.text).not.toContain(PRINTED_SECRET);
    await page.screenshot({ path: join(outDir, 'desktop.png'), fullPage: true });
    expect(problems).toEqual([]);
  }, 60_000);
});
