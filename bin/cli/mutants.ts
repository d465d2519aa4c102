import { UsageError } from '../../core/errors.ts';
import { MUTANTS } from '../../fixtures/mutants/index.ts';
import type { MutantResult } from '../../suites/runner/kill-matrix.ts';
import { intOption, parse } from './args.ts';

const HELP = `pmv6 mutants: run the suites against every mutant of the reference server (the kill matrix)

Each mutant breaks one clause the way real implementations get it wrong. A mutant is killed when
its own clause fails (or warns, for a SHOULD or INFO clause). Each mutant runs the tests of its
clause (and of the clauses it depends on) in the suite files that test it, then, if they did not
kill it, those files whole; each run on its own embedded server, stopped at the kill; mutants run
in parallel child processes.

Options:
  --only IDS     run only these mutants, comma-separated
  --jobs N       child processes in parallel (default 2)
  --concurrency N  requests in flight in each mutant's run (default: the run's default, 8);
                 1 runs every file in turn: a mutant must be killed at both
  --json         print the matrix as JSON
  --list         list the mutants (id, clause, description) and exit

Exit codes: 0 every non-equivalent mutant killed by its own clause, 1 one or more survived.`;

export async function mutants(argv: string[]): Promise<number> {
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
  let selected = MUTANTS;
  if (values.only !== undefined) {
    const ids = values.only
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = ids.filter((id) => !MUTANTS.some((m) => m.id === id));
    if (ids.length === 0 || unknown.length > 0) throw new UsageError(`--only: unknown mutant ${unknown.join(', ') || '(none given)'}; see pmv6 mutants --list`);
    selected = MUTANTS.filter((m) => ids.includes(m.id));
  }
  if (values.list) {
    for (const m of selected) process.stdout.write(`${m.id}  ${m.clause}${m.equivalent ? ' (equivalent)' : ''}  ${m.description}\n`);
    return 0;
  }
  // Loaded once the flags are checked: --help and --list load no runner.
  const { matrixText, runMatrix } = await import('../../suites/runner/kill-matrix.ts');
  const matrix = await runMatrix(selected, {
    jobs,
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(values.json
      ? {}
      : {
          onResult: (r: MutantResult, done: number, total: number) =>
            process.stderr.write(`[${done}/${total}] ${r.id}: ${r.killed ? 'killed' : 'SURVIVED'} (${r.clause} ${r.outcome})\n`),
        }),
  });
  process.stdout.write(values.json ? `${JSON.stringify(matrix, null, 2)}\n` : matrixText(matrix));
  return matrix.killed === matrix.total ? 0 : 1;
}
