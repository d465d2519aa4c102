// How long `npm start` takes: the whole suite against the embedded reference server, wall-clock and
// CPU (user + system, which a busy machine inflates less), against the 5 s goal of issue 38. A
// benchmark to read, not a test that can flake.
//
// Side by side (issue 38): `--trees DIR,DIR` runs the CLI of other checkouts too (their own
// bin/pmv6.js, read-only: /work/wt/base, a main checkout), interleaved run by run so a busy
// machine weighs on all alike; each line gives the tree's median and its ratio to this tree's.
// The load average is printed before and after: a median is an idle machine's only at a load
// well under the cores. So is the CPU time of the CLI's main thread (from /proc, Linux only): the
// run's own thread, which an idle machine's wall time cannot go below, and which a busy machine
// inflates far less than wall time (since issue 38 the embedded server has a thread of its own).
//
// Run: npm run bench:suite -- [--runs 3] [--trees /work/wt/base,/work/main]
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
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
const mainCpu = new Map<string, number[]>(trees.map((t) => [t, []]));

/** The user + system CPU seconds of a process's threads (its main thread has the process's id), from /proc; empty where there is none. */
function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, (Number(f[11]) + Number(f[12])) / 100);
    }
  } catch {
    // ended between the listing and the reading
  }
  return out;
}

/** One run of a tree's CLI: wall time, CPU of the whole process (its threads), CPU of its main thread, exit code and verdict line. */
async function once(tree: string): Promise<{ ms: number; cpuMs: number; mainMs: number; status: number | null; verdict: string }> {
  const started = process.hrtime.bigint();
  const cli = spawn(process.execPath, [join(tree, 'bin/pmv6.js'), 'run', '--quiet'], {
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  cli.stdout.on('data', (d) => (out += d));
  // Each thread's last reading (every 50 ms), kept after it ends (the server's thread ends before
  // the process): what a last interval adds is a few ms.
  const threads = new Map<string, number>();
  const sampler = setInterval(() => {
    for (const [tid, seconds] of threadCpu(cli.pid!)) threads.set(tid, Math.max(threads.get(tid) ?? 0, seconds));
  }, 50);
  const status = await new Promise<number | null>((resolve) => cli.on('close', resolve));
  clearInterval(sampler);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const cpuMs = threads.size > 0 ? [...threads.values()].reduce((a, b) => a + b, 0) * 1000 : Number.NaN;
  const mainMs = (threads.get(String(cli.pid)) ?? Number.NaN) * 1000;
  return { ms, cpuMs, mainMs, status, verdict: out.trim().split('\n').at(-1) ?? '' };
}

for (let i = 1; i <= Number(values.runs); i++) {
  for (const tree of trees) {
    const r = await once(tree);
    cpu.get(tree)!.push(r.cpuMs);
    mainCpu.get(tree)!.push(r.mainMs);
    wall.get(tree)!.push(r.ms);
    console.log(
      `run ${i} ${name(tree)}: ${(r.ms / 1000).toFixed(1)} s, CPU ${(r.cpuMs / 1000).toFixed(1)} s (main thread ${(r.mainMs / 1000).toFixed(1)} s), exit ${r.status}: ${r.verdict}`,
    );
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mine = median(wall.get(ROOT)!);
const mineCpu = median(cpu.get(ROOT)!);
const mineMain = median(mainCpu.get(ROOT)!);
console.log(load());
for (const tree of trees) {
  const m = median(wall.get(tree)!);
  const c = median(cpu.get(tree)!);
  const t = median(mainCpu.get(tree)!);
  console.log(
    `${name(tree).padEnd(16)} median ${(m / 1000).toFixed(1).padStart(5)} s (${(m / GOAL_MS).toFixed(2)} of the 5 s goal), CPU ${(c / 1000).toFixed(1).padStart(5)} s, main thread ${(t / 1000).toFixed(1).padStart(5)} s; this tree takes ${(mine / m).toFixed(2)} of its time, ${(mineCpu / c).toFixed(2)} of its CPU, ${(mineMain / t).toFixed(2)} of its main thread's`,
  );
}
