import { AREAS, CLAUSES } from '../../suites/catalogue/clauses.ts';
import { parse } from './args.ts';

const HELP = `pmv6 clauses: list the clause catalogue

Options:
  --json      print the catalogue as JSON
  --all       include retired clauses`;

export async function clauses(argv: string[]): Promise<number> {
  const { values } = parse(argv, { json: { type: 'boolean', default: false }, all: { type: 'boolean', default: false } });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const list = CLAUSES.filter((c) => values.all || !c.retired);
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ areas: AREAS, clauses: list }, null, 2)}\n`);
    return 0;
  }
  for (const c of list) {
    process.stdout.write(`${c.id.padEnd(9)}${c.level.padEnd(7)}${c.needsControl ? 'control ' : '        '}${c.behaviour}\n`);
    process.stdout.write(`         ${c.section}: "${c.quote}"\n`);
  }
  process.stdout.write(`${list.length} clauses\n`);
  return 0;
}
