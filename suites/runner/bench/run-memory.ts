// The memory of `pmv6 run` against a URL target (the reference server in a process of its own,
// not counted): the peak of the CLI's whole process tree, by process, three runs in a row, against
// the 300 MB of issue 15. A benchmark to read, not a test that can flake.
// Run: node --import tsx suites/runner/bench/run-memory.ts
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { megabytes, treeMemoryText, watchTreeMemory } from '../process-memory.ts';

const BIN = fileURLToPath(new URL('../../../bin/pmv6.js', import.meta.url));
const BUDGET = 300 * 2 ** 20;
const password = randomBytes(12).toString('base64url');
const token = randomBytes(12).toString('base64url');

const server = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
  env: { ...process.env, PMV6_ADMIN_PASSWORD: password, PMV6_CONTROL_TOKEN: token },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const target = await new Promise<string>((resolve, reject) => {
  let out = '';
  const timer = setTimeout(() => reject(new Error('the reference server did not start within 30 s')), 30_000);
  server.stdout.on('data', (d) => {
    out += d;
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    if (url) {
      clearTimeout(timer);
      resolve(url);
    }
  });
});

const peaks: number[] = [];
try {
  for (let i = 1; i <= 3; i++) {
    const cli = spawn(process.execPath, [BIN, 'run', '--target', target, '--control', `${target}/__control`, '--quiet'], {
      env: { ...process.env, PMV6_USER: 'admin', PMV6_PASSWORD: password, PMV6_CONTROL_TOKEN: token },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    cli.stdout.on('data', (d) => (out += d));
    const memory = watchTreeMemory(cli.pid!);
    const code = await new Promise<number | null>((resolve) => cli.on('close', resolve));
    const tree = memory.stop();
    peaks.push(tree.peak);
    console.log(`run ${i}: exit ${code}, ${out.trim().split('\n').at(-1) ?? ''}\n  process tree ${treeMemoryText(tree)}`);
  }
} finally {
  server.kill('SIGTERM');
}
const median = [...peaks].sort((a, b) => a - b)[1]!;
console.log(`median ${megabytes(median)} = ${(median / BUDGET).toFixed(2)} of the 300 MB budget`);
