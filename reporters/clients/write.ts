import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { ClientRunResult } from '../../clients/run/run-client.ts';
import { scrub } from '../../core/redact.ts';
import { renderClientHtml } from './html.ts';
import { renderClientJunit } from './junit.ts';
import { type ClientResultsDocument, writeClientResultsJson } from './results.ts';
import { renderClientRunHtml } from './run-html.ts';
import { renderClientRunJunit } from './run-junit.ts';
import { renderClientRunSummary } from './run-markdown.ts';

/** DIR/results.json, DIR/junit.xml and DIR/report.html of a client run. */
export async function writeClientReports(dir: string, doc: ClientResultsDocument): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const junit = join(dir, 'junit.xml');
  const html = join(dir, 'report.html');
  await writeFile(junit, renderClientJunit(doc));
  await writeFile(html, scrub(renderClientHtml(doc)));
  return [await writeClientResultsJson(dir, doc), junit, html];
}

/**
 * The reports of `pmv6 clients run`: DIR/client-run.json (format `pmv6-client-run/1`),
 * report.html, summary.md (also appended to $GITHUB_STEP_SUMMARY when that is set) and junit.xml.
 */
export async function writeClientRunReports(
  dir: string,
  result: ClientRunResult,
  pmv6Version: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files = {
    json: join(dir, 'client-run.json'),
    html: join(dir, 'report.html'),
    md: join(dir, 'summary.md'),
    junit: join(dir, 'junit.xml'),
  };
  await writeFile(files.json, scrub(`${JSON.stringify({ format: 'pmv6-client-run/1', pmv6: pmv6Version, ...result }, null, 2)}\n`));
  await writeFile(files.html, scrub(renderClientRunHtml(result, pmv6Version)));
  const summary = renderClientRunSummary(result);
  await writeFile(files.md, summary);
  if (env.GITHUB_STEP_SUMMARY) await appendFile(env.GITHUB_STEP_SUMMARY, `${summary}\n`);
  await writeFile(files.junit, renderClientRunJunit(result, result.startedAt, hostname()));
  return Object.values(files);
}
