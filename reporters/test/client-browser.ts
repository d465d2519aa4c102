import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

// What the browser checks of the client reports share: Debian's Chromium, headless and quiet, and a
// page that records whatever it loads from outside the file, and every error or warning.
export const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Decision (as for the server report): a missing browser fails the check rather than skipping it; CI installs Debian's chromium. */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the report's browser check needs it (apt-get install chromium)`);
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

/** A desktop-sized page at `url`, with the problems it met (page errors, console errors and warnings, requests outside file:). */
export async function openWatched(browser: Browser, url: string): Promise<{ page: Page; problems: string[] }> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console: ${m.text()}`);
  });
  page.on('request', (r) => {
    if (!r.url().startsWith('file:')) problems.push(`request: ${r.url()}`);
  });
  await page.goto(url);
  return { page, problems };
}
