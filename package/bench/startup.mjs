#!/usr/bin/env node
// npm run bench:startup: how long `pmv6 --version` takes to start from the installed package,
// measured side by side in one run against `node -e 0`, Node's own start-up. Target
// (package/README.md): under 0.3 s. The machine may be shared, so the verdict is given both as the
// absolute time and as the time over bare Node, which a busy machine inflates alike.
// The package is the real one: `npm pack` of this checkout installed into an empty folder
// (package/install.mjs), its `node_modules/.bin/pmv6` run as a CI job runs it. `--help` (which loads
// the CLI's entry module) and the checkout are shown for comparison: `run --help` loads the CLI and
// `run --list` every suite file, each from the checkout's compiled tree (package/checkout-build.mjs)
// and through tsx (PMV6_TSX=1, the way before issue 38), side by side.
// RUNS=n sets the runs per case (default 15); INSTALLED=DIR reuses a folder package/install.mjs
// filled (kept afterwards).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const RUNS = Number(process.env.RUNS ?? 15);
const TARGET_MS = 300;

const dir = process.env.INSTALLED ?? mkdtempSync(join(tmpdir(), 'pmv6-startup-'));
try {
  if (!process.env.INSTALLED) execFileSync(process.execPath, [join(ROOT, 'package', 'install.mjs'), dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  const bin = join(dir, 'node_modules', '.bin', 'pmv6');
  const cases = {
    'node -e 0': [process.execPath, ['-e', '0']],
    'pmv6 --version': [bin, ['--version']],
    'pmv6 --help': [bin, ['--help']],
    'checkout --version': [process.execPath, [join(ROOT, 'bin', 'pmv6.js'), '--version']],
    'checkout run --help': [process.execPath, [join(ROOT, 'bin', 'pmv6.js'), 'run', '--help']],
    'tsx run --help': [process.execPath, [join(ROOT, 'bin', 'pmv6.js'), 'run', '--help'], { PMV6_TSX: '1' }],
    'checkout run --list': [process.execPath, [join(ROOT, 'bin', 'pmv6.js'), 'run', '--list']],
    'tsx run --list': [process.execPath, [join(ROOT, 'bin', 'pmv6.js'), 'run', '--list'], { PMV6_TSX: '1' }],
  };
  const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  // Interleaved, so that a busy moment of the machine falls on every case alike.
  for (let i = 0; i < RUNS; i++) {
    for (const [name, [file, args, env]] of Object.entries(cases)) {
      const started = process.hrtime.bigint();
      const r = spawnSync(file, args, { encoding: 'utf8', cwd: dir, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 });
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (r.status !== 0) throw new Error(`${name} failed: ${r.stderr}`);
      times[name].push(ms);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const node = median(times['node -e 0']);
  console.log(`start-up, median of ${RUNS} runs each, interleaved; load average ${loadavg()[0].toFixed(2)} on ${availableParallelism()} cores:`);
  for (const [name, xs] of Object.entries(times)) {
    const m = median(xs);
    console.log(`  ${name.padEnd(19)} ${m.toFixed(0).padStart(5)} ms  ${(m / node).toFixed(2)}× node -e 0, +${(m - node).toFixed(0)} ms`);
  }
  const version = median(times['pmv6 --version']);
  const over = version - node;
  console.log(
    `installed pmv6 --version: ${version.toFixed(0)} ms, ${version < TARGET_MS ? 'under' : 'OVER'} the ${TARGET_MS} ms target; ` +
      `${over.toFixed(0)} ms over bare node (${node.toFixed(0)} ms): the target holds on any machine where node starts in under ${(TARGET_MS - over).toFixed(0)} ms`,
  );
} finally {
  if (!process.env.INSTALLED) rmSync(dir, { recursive: true, force: true });
}
