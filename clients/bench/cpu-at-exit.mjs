// Preloaded into every Node process of a bench run (NODE_OPTIONS=--import=…): at exit it appends
// the process's CPU time (user + system, µs) to $PMV6_BENCH_CPU_FILE, so the bench can add up
// the CPU a suite run cost across the CLI and its vitest workers.
import { appendFileSync } from 'node:fs';

const file = process.env.PMV6_BENCH_CPU_FILE;
if (file) {
  process.on('exit', () => {
    const u = process.cpuUsage();
    appendFileSync(file, `${u.user + u.system}\n`);
  });
}
