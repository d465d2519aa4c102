#!/usr/bin/env node
// npm run bench:startup: how long `pmv6 --version` takes to start, as the installed package
// (bin/pmv6.js running dist/) and as the checkout (the TypeScript through tsx), measured side by
// side in one run against `node -e 0`, Node's own start-up. Target: the package under 0.3 s.
// The package layout is a temporary folder holding bin/pmv6.js, a copy of dist/ and node_modules as a link
// into this checkout; dist/ is built first when it is missing (npm run build).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const RUNS = Number(process.env.RUNS ?? 15);
const TARGET_MS = 300;

if (!existsSync(join(ROOT, 'dist', 'bin', 'cli', 'main.js'))) execFileSync(process.execPath, [join(ROOT, 'package', 'build.mjs')], { stdio: 'inherit' });
const pkg = mkdtempSync(join(tmpdir(), 'pmv6-startup-'));
try {
  mkdirSync(join(pkg, 'bin'));
  cpSync(join(ROOT, 'bin', 'pmv6.js'), join(pkg, 'bin', 'pmv6.js'));
  cpSync(join(ROOT, 'dist'), join(pkg, 'dist'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));
  cpSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));

  const cases = {
    'node -e 0': ['-e', '0'],
    'package (dist/)': [join(pkg, 'bin', 'pmv6.js'), '--version'],
    'checkout (tsx)': [join(ROOT, 'bin', 'pmv6.js'), '--version'],
  };
  const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  // Interleaved, so that a busy moment of the machine falls on every case alike.
  for (let i = 0; i < RUNS; i++) {
    for (const [name, args] of Object.entries(cases)) {
      const started = process.hrtime.bigint();
      const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (r.status !== 0) throw new Error(`${name} failed: ${r.stderr}`);
      times[name].push(ms);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const node = median(times['node -e 0']);
  console.log(`pmv6 --version start-up, median of ${RUNS} runs each, interleaved:`);
  for (const [name, xs] of Object.entries(times)) {
    const m = median(xs);
    console.log(`  ${name.padEnd(17)} ${m.toFixed(0).padStart(5)} ms  (${(m / node).toFixed(2)}× node -e 0)`);
  }
  const packaged = median(times['package (dist/)']);
  console.log(
    `package: ${packaged.toFixed(0)} ms, ${packaged < TARGET_MS ? 'under' : 'OVER'} the ${TARGET_MS} ms target; checkout/package ${(median(times['checkout (tsx)']) / packaged).toFixed(2)}×`,
  );
} finally {
  rmSync(pkg, { recursive: true, force: true });
}
