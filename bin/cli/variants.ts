import { UsageError } from '../../core/errors.ts';
import { VARIANTS } from '../../fixtures/variants/index.ts';
import { runVariants, type VariantResult, variantMatrixText } from '../../suites/runner/variant-matrix.ts';
import { intOption, parse } from './args.ts';

const HELP = `pmv6 variants: run the suites against every lawful variant of the reference server

Each variant makes one choice the spec leaves open (string ids where fields are not shown, 200
with content for a PUT, relative Link URLs, a busy log, ...) and cites the sentence that allows
it. pmv6 must stay quiet on each: the whole suite with the response oracle runs on its own
embedded server and must end CONFORMANT under --strict (no failure, no warning, nothing
inconclusive). Variants run in parallel child processes.

Options:
  --only IDS     run only these variants, comma-separated
  --jobs N       child processes in parallel (default 2)
  --concurrency N  requests in flight in each variant's run (default: the run's default, 8)
  --json         print the results as JSON
  --list         list the variants (id, area, description, what allows it) and exit

Exit codes: 0 every variant conformant, 1 one or more raised an alarm.`;

export async function variants(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    only: { type: 'string' },
    jobs: { type: 'string' },
    concurrency: { type: 'string' },
    json: { type: 'boolean', default: false },
    list: { type: 'boolean', default: false },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const jobs = intOption('jobs', values.jobs, 1, 16) ?? 2;
  const concurrency = intOption('concurrency', values.concurrency, 1, 64);
  let selected = VARIANTS;
  if (values.only !== undefined) {
    const ids = values.only
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = ids.filter((id) => !VARIANTS.some((v) => v.id === id));
    if (ids.length === 0 || unknown.length > 0) throw new UsageError(`--only: unknown variant ${unknown.join(', ') || '(none given)'}; see pmv6 variants --list`);
    selected = VARIANTS.filter((v) => ids.includes(v.id));
  }
  if (values.list) {
    for (const v of selected) process.stdout.write(`${v.id}  ${v.area}  ${v.description}\n    allowed by: ${v.allowedBy}\n`);
    return 0;
  }
  const matrix = await runVariants(selected, {
    jobs,
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(values.json
      ? {}
      : {
          onResult: (r: VariantResult, done: number, total: number) =>
            process.stderr.write(`[${done}/${total}] ${r.id}: ${r.quiet ? 'quiet' : `${r.label} (${r.alarms.map((a) => a.id).join(' ')})`}\n`),
        }),
  });
  process.stdout.write(values.json ? `${JSON.stringify(matrix, null, 2)}\n` : variantMatrixText(matrix));
  return matrix.quiet === matrix.total ? 0 : 1;
}
