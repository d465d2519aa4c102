import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { scrub } from '../core/redact.ts';
import { renderHtml } from './html.ts';
import { writeJunit } from './junit.ts';
import { writeSummary } from './markdown.ts';
import { type ResultsDocument, writeResultsJson } from './results-json.ts';

/** summary.md (also appended to $GITHUB_STEP_SUMMARY), report.html and junit.xml, from a results document. */
export async function renderReports(dir: string, doc: ResultsDocument, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const html = join(dir, 'report.html');
  await writeFile(html, scrub(renderHtml(doc)));
  return [await writeSummary(dir, doc, env), html, await writeJunit(dir, doc)];
}

/** Everything `pmv6 run --report-dir DIR` writes: results.json and the reports rendered from it. */
export async function writeReports(dir: string, doc: ResultsDocument, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  return [await writeResultsJson(dir, doc), ...(await renderReports(dir, doc, env))];
}
