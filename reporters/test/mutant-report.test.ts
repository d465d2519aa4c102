import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { mutantById } from '../../fixtures/mutants/index.ts';
import { runSuites } from '../../suites/runner/run-suites.ts';
import { verdictOf } from '../../suites/runner/verdict.ts';
import { startEmbeddedTarget } from '../../targets/embedded.ts';
import { resultsErrors } from '../read-results.ts';
import { resultsDocument } from '../results-json.ts';
import { writeReports } from '../write-reports.ts';

const XSD = fileURLToPath(new URL('../schema/junit.xsd', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';

// The acceptance, end to end: a real run against a mutant that answers a too-high page
// with 200 writes all four files, each valid, and the page shows the failed clause's exchange.
describe('reports of a run against a mutant', () => {
  test('write results.json (valid), junit.xml (valid against the XSD), summary.md and a report.html that shows the failure', async () => {
    const mutant = mutantById('page-too-high-empty-200');
    if (!mutant) throw new Error('mutant page-too-high-empty-200 is missing');
    const target = await startEmbeddedTarget({ selection: { only: ['PAG-11'] } }, { mutate: (server) => mutant.apply(server) });
    const dir = mkdtempSync(join(tmpdir(), 'pmv6-mutant-report-'));
    try {
      const result = await runSuites(target.config);
      const verdict = verdictOf(result);
      expect(verdict.exitCode).toBe(1);
      const files = await writeReports(dir, resultsDocument(result, verdict, { pmv6Version: '0' }), {});
      expect(files.map((f) => f.split('/').at(-1)).sort()).toEqual(['junit.xml', 'report.html', 'results.json', 'summary.md']);

      const doc = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as { clauses: Array<{ id: string; outcome: string }> };
      expect(resultsErrors(doc)).toEqual([]);
      expect(doc.clauses.find((c) => c.id === 'PAG-11')?.outcome).toBe('fail');

      execFileSync('xmllint', ['--noout', '--schema', XSD, join(dir, 'junit.xml')], { stdio: 'pipe' });
      expect(readFileSync(join(dir, 'junit.xml'), 'utf8')).toMatch(/<failure[^>]*type="MUST"/);
      expect(readFileSync(join(dir, 'summary.md'), 'utf8')).toMatch(/PAG-11/);

      if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      });
      try {
        const page = await browser.newPage();
        await page.goto(pathToFileURL(join(dir, 'report.html')).href);
        const card = page.locator('#clause-PAG-11');
        await expect.poll(() => card.isVisible()).toBe(true);
        const text = await card.innerText();
        expect(text).toContain('The page number is too high');
        expect(text).toMatch(/GET https:\/\/127\.0\.0\.1:\d+\/index\.php\/api\/v6\/passwords\/page\/\d+\.json/);
        await page.screenshot({ path: join(dir, 'pag-11.png'), fullPage: false });
      } finally {
        await browser.close();
      }
    } finally {
      await target.close();
    }
  }, 120_000);
});
