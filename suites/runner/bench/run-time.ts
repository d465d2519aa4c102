// How long `npm start` takes: the whole suite against the embedded reference server, wall-clock and
// CPU (user + system, which a busy machine inflates less), against the 5 s goal of issue 38. A
// benchmark to read, not a test that can flake.
//
// Side by side (issue 38): `--trees DIR,DIR` runs the CLI of other checkouts too (their own
// bin/pmv6.js, read-only: /work/wt/base, a main checkout), interleaved run by run so a busy
// machine weighs on all alike; each line gives the tree's median and its ratio to this tree's.
// The load average is printed before and after: a median is an idle machine's only at a load
// well under the cores.
//
// Run: npm run bench:suite -- [--runs 3] [--trees /work/wt/base,/work/main]
import { spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const GOAL_MS = 5_000;
const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, trees: { type: 'string', default: '' } } });
const trees = [ROOT, ...values.trees.split(',').filter(Boolean)];
const name = (tree: string) => (tree === ROOT ? 'this tree' : tree);
const load = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} on ${availableParallelism()} cores`;

// Each tree starts once first: a checkout's compiled tree (package/checkout-build.mjs) is made then.
for (const tree of trees) spawnSync(process.execPath, [join(tree, 'bin/pmv6.js'), 'run', '--help'], { stdio: 'ignore' });
console.log(load());
const wall = new Map<string, number[]>(trees.map((t) => [t, []]));
const cpu = new Map<string, number[]>(trees.map((t) => [t, []]));
for (let i = 1; i <= Number(values.runs); i++) {
  for (const tree of trees) {
    const started = process.hrtime.bigint();
    // `times` after the run: the shell's children's user and system CPU (the CLI's, its threads included).
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${join(tree, 'bin/pmv6.js')}" run --quiet; s=$?; times >&2; exit $s`], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const children = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(r.stderr.trim());
    const cpuMs = children ? (Number(children[1]) * 60 + Number(children[2]) + Number(children[3]) * 60 + Number(children[4])) * 1000 : Number.NaN;
    cpu.get(tree)!.push(cpuMs);
    wall.get(tree)!.push(ms);
    const verdict = r.stdout.trim().split('\n').at(-1) ?? '';
    console.log(`run ${i} ${name(tree)}: ${(ms / 1000).toFixed(1)} s, CPU ${(cpuMs / 1000).toFixed(1)} s, exit ${r.status}: ${verdict}`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mine = median(wall.get(ROOT)!);
const mineCpu = median(cpu.get(ROOT)!);
console.log(load());
for (const tree of trees) {
  const m = median(wall.get(tree)!);
  const c = median(cpu.get(tree)!);
  console.log(
    `${name(tree).padEnd(16)} median ${(m / 1000).toFixed(1).padStart(5)} s (${(m / GOAL_MS).toFixed(2)} of the 5 s goal), CPU ${(c / 1000).toFixed(1).padStart(5)} s; this tree takes ${(mine / m).toFixed(2)} of its time, ${(mineCpu / c).toFixed(2)} of its CPU`,
  );
}
