import { UsageError } from '../../core/errors.ts';
import { scrub } from '../../core/redact.ts';
import { diffResults, diffText } from '../../reporters/diff.ts';
import { RESULTS_FORMAT } from '../../reporters/results-json.ts';
import { forTerminal } from '../../reporters/terminal.ts';
import { parse } from './args.ts';
import { checkInputFile, checkOutputDir, checkOutputFile } from './paths.ts';

const HELP = `pmv6 report: render reports from results.json, or compare two runs

Usage:
  pmv6 report RESULTS.json --out DIR
      re-render DIR/summary.md, DIR/report.html and DIR/junit.xml from a results file
      (summary.md is also appended to $GITHUB_STEP_SUMMARY when that is set)
  pmv6 report --diff OLD.json NEW.json
      list the clauses whose outcome changed (old → new, with their level)

Both files are checked against reporters/schema/results.schema.json (format ${RESULTS_FORMAT}).

Exit codes: 0 written / no MUST regressed, 1 a MUST clause went from pass to fail (--diff),
2 usage error or an unreadable or invalid results file.`;

export async function report(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { out: { type: 'string' }, diff: { type: 'boolean', default: false } }, { positionals: true });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  // Loaded where used (package/test/startup-imports.test.ts): --help and a refused flag load no schema validator.
  const { readResultsFile } = await import('../../reporters/read-results.ts');
  if (values.diff) {
    if (values.out !== undefined) throw new UsageError('--diff prints to stdout; it takes no --out');
    const [oldFile, newFile, ...rest] = positionals;
    if (oldFile === undefined || newFile === undefined || rest.length > 0) throw new UsageError('--diff needs exactly two results files: OLD.json NEW.json');
    await checkInputFile('--diff', oldFile);
    await checkInputFile('--diff', newFile);
    const before = await readResultsFile(oldFile);
    const after = await readResultsFile(newFile);
    const changes = diffResults(before, after);
    process.stdout.write(forTerminal(diffText(before, after, changes)));
    return changes.some((c) => c.regression) ? 1 : 0;
  }
  const [file, ...rest] = positionals;
  if (file === undefined || rest.length > 0) throw new UsageError('give one results file: pmv6 report RESULTS.json --out DIR (or --diff OLD NEW)');
  if (values.out === undefined) throw new UsageError('--out DIR is required: the folder to write summary.md, report.html and junit.xml to');
  await checkInputFile('results file', file);
  await checkOutputDir('--out', values.out);
  if (process.env.GITHUB_STEP_SUMMARY) await checkOutputFile('GITHUB_STEP_SUMMARY', process.env.GITHUB_STEP_SUMMARY);
  const doc = await readResultsFile(file);
  const { renderReports } = await import('../../reporters/write-reports.ts');
  for (const written of await renderReports(values.out, doc)) process.stdout.write(`${scrub(written)}\n`);
  return 0;
}
