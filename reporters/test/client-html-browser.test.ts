import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { makeAccount } from '../../clients/kill-matrix.ts';
import { createClientKit } from '../../clients/kit.ts';
import { type ClientFault, TestClient } from '../../clients/test-client/client.ts';
import { renderClientHtml } from '../clients/html.ts';
import { type ClientResultsDocument, clientResultsDocument } from '../clients/results.ts';
import { launchChromium, openWatched } from './client-browser.ts';

// The client report's matrix in a real browser (issue 29): every cell stands under the clause of
// its column, the page loads nothing, and a screenshot is kept for a look.
const TOKEN = 'client-html-browser-token-0123456789';

let doc: ClientResultsDocument;
let url: string;
let outDir: string;
let browser: Browser;

beforeAll(async () => {
  const kit = await createClientKit({ adminPassword: 'client-html-browser-admin', controlToken: TOKEN });
  try {
    const base = await kit.listen({ port: 0 });
    const account = await makeAccount(base, TOKEN);
    const send = async (agent: string, auth: 'basic' | 'hmac', fault: ClientFault | undefined, fn: (c: TestClient) => Promise<unknown>) => {
      const c = new TestClient({ base, auth: auth === 'basic' ? account.basic : account.hmac, userAgent: agent, ...(fault ? { fault } : {}) });
      try {
        await fn(c).catch(() => undefined);
      } finally {
        await c.close();
      }
    };
    await send('good/1.0', 'basic', undefined, (c) => c.version());
    await send('bad/1.0', 'basic', 'no-content-type', (c) => c.create('projects', { name: 'x' }));
    await send('signer/1.0', 'hmac', 'hmac-leading-slash', (c) => c.version());
    doc = clientResultsDocument(kit.snapshot(), { pmv6Version: '0', url: base, hmacWindowSeconds: 300, strict: false });
  } finally {
    await kit.close();
  }
  outDir = await mkdtemp(join(tmpdir(), 'pmv6-client-report-'));
  const file = join(outDir, 'report.html');
  await writeFile(file, renderClientHtml(doc));
  url = pathToFileURL(file).href;
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
});

describe('client report.html in Chromium', () => {
  test('the matrix: a row per client, every cell under the header of its clause; nothing loaded, no error', async () => {
    const { page, problems } = await openWatched(browser, url);
    const layout = await page.evaluate(() => {
      type Box = { left: number; right: number; top: number };
      type El = { textContent: string | null; getBoundingClientRect(): Box; querySelectorAll(q: string): Iterable<El> };
      const d = (globalThis as unknown as { document: El }).document;
      const heads = [...d.querySelectorAll('#matrix thead th, #matrix tr:first-child th')].slice(1).map((th) => {
        const r = th.getBoundingClientRect();
        return { text: th.textContent ?? '', left: r.left, right: r.right };
      });
      const rows = [...d.querySelectorAll('#matrix tr')].slice(1).map((tr) =>
        [...tr.querySelectorAll('td')].map((td) => {
          const r = td.getBoundingClientRect();
          return { left: r.left, right: r.right, top: r.top };
        }),
      );
      return { heads, rows };
    });
    expect(layout.rows).toHaveLength(doc.clients.length);
    expect(layout.heads.map((h) => h.text)).toEqual(doc.clauses.map((c) => c.id));
    for (const cells of layout.rows) {
      expect(cells).toHaveLength(layout.heads.length);
      for (const [i, cell] of cells.entries()) {
        const head = layout.heads[i]!;
        // The cell's centre lies within its column's header, and the row is one line of cells.
        const centre = (cell.left + cell.right) / 2;
        expect(centre, `column ${head.text}`).toBeGreaterThanOrEqual(head.left - 1);
        expect(centre, `column ${head.text}`).toBeLessThanOrEqual(head.right + 1);
        expect(Math.abs(cell.top - cells[0]!.top)).toBeLessThan(2);
      }
    }
    await page.screenshot({ path: join(outDir, 'desktop.png'), fullPage: true });
    expect(problems).toEqual([]);
  }, 60_000);
});
