import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { scrub } from '../../core/redact.ts';
import { renderClientHtml } from './html.ts';
import { renderClientJunit } from './junit.ts';
import { type ClientResultsDocument, writeClientResultsJson } from './results.ts';

/** DIR/results.json, DIR/junit.xml and DIR/report.html of a client run. */
export async function writeClientReports(dir: string, doc: ClientResultsDocument): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const junit = join(dir, 'junit.xml');
  const html = join(dir, 'report.html');
  await writeFile(junit, renderClientJunit(doc));
  await writeFile(html, scrub(renderClientHtml(doc)));
  return [await writeClientResultsJson(dir, doc), junit, html];
}
