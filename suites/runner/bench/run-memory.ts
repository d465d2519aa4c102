// The memory of `pmv6 run`: the peak of the CLI's whole process tree (by process), per case, three
// runs in a row, against the 300 MB of issues 15 and 24. The target runs in this process (not
// counted), except in `embedded`: `pmv6 run` with no target, the reference server in the CLI's own
// process (a worker thread of its own since issue 38, whose heap is counted with the run's).
// Cases: `plain`, a full run against the reference server; the two hostile cases of
// bin/test/hostile-target.test.ts that are heaviest on memory, `big-bodies` (1 MB bodies on every
// GET) and `echo` (every secret echoed in every encoding), through the same hostile proxy and with
// the same flags. A benchmark to read, not a test that can flake.
//
// Side by side: each case runs under every column, the columns interleaved run by run so a busy
// machine weighs on all of them alike. `--columns` names them: `as-is` (this tree's CLI),
// `ref:<git ref>` (the CLI of another commit, exported to a temporary folder: the before of a
// change), `env:K=V+K=V` (this tree's CLI with more environment, e.g. glibc's MALLOC_ARENA_MAX),
// `node:--flag+--flag` (this tree's CLI under more flags of node and V8). Default: as-is,
// node:--optimize-for-size (the flag `pmv6 run` set for itself before issue 38) and ref:main.
// Each column's CLI starts once before the runs (`run --help`): a checkout's compiled tree
// (package/checkout-build.mjs) is made then, not inside a measured run.
//
// Run: npm run bench:memory -- [--cases plain,big-bodies,echo,embedded] [--runs 3] [--columns as-is,node:--optimize-for-size,ref:main]
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startInstallation } from '../../../bin/test/hostile/installation.ts';
import { type Behaviour, type Hostile, startHostile } from '../../../bin/test/hostile/proxy.ts';
import { compiledDir } from '../../../package/checkout-build.mjs';
import { megabytes, type TreeMemory, treeMemoryText, watchTreeMemory } from '../process-memory.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BUDGET = 300 * 2 ** 20;

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: 'plain,big-bodies,echo,embedded' },
    runs: { type: 'string', default: '3' },
    columns: { type: 'string', default: 'as-is,node:--optimize-for-size,ref:main' },
  },
});
const runs = Number(values.runs);

interface Column {
  name: string;
  bin: string;
  env: Record<string, string>;
  node?: string[];
}
const temporary: string[] = [];
function column(name: string): Column {
  if (name === 'as-is') return { name, bin: join(ROOT, 'bin/pmv6.js'), env: {} };
  if (name.startsWith('ref:')) {
    const dir = mkdtempSync(join(tmpdir(), 'pmv6-bench-ref-'));
    temporary.push(dir);
    const archive = spawnSync('sh', ['-c', `git -C "${ROOT}" archive "${name.slice(4)}" | tar -x -C "${dir}"`], { stdio: 'inherit' });
    if (archive.status !== 0) throw new Error(`cannot export ${name.slice(4)}`);
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    return { name, bin: join(dir, 'bin/pmv6.js'), env: {} };
  }
  if (name.startsWith('env:')) {
    const env = Object.fromEntries(
      name
        .slice(4)
        .split('+')
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    );
    return { name, bin: join(ROOT, 'bin/pmv6.js'), env };
  }
  if (name.startsWith('node:')) return { name, bin: join(ROOT, 'bin/pmv6.js'), env: {}, node: name.slice(5).split('+') };
  throw new Error(`unknown column ${name}: as-is, ref:<git ref>, env:K=V+K=V or node:--flag+--flag`);
}

interface Case {
  name: string;
  /** `pmv6 run` with no target: the embedded reference server, in the CLI's process */
  embedded?: boolean;
  only?: string;
  behaviour?: (secrets: () => string[]) => Behaviour;
}
const CASES: Case[] = [
  { name: 'plain' },
  { name: 'big-bodies', only: 'PAG,VER', behaviour: () => ({ padGets: 1024 * 1024 }) },
  { name: 'echo', only: 'VER,ERR,AUTH', behaviour: (secrets) => ({ echo: secrets }) },
  { name: 'embedded', embedded: true },
];

const password = `p"w\\%+/é€-${randomBytes(6).toString('hex')}`;
const token = `ctl_"${randomBytes(8).toString('base64url')}\\`;

async function once(c: Case, col: Column): Promise<{ code: number | null; memory: TreeMemory; last: string; ms: number }> {
  const inst = c.embedded ? undefined : await startInstallation(password, token);
  let proxy: Hostile | undefined;
  // The echoed secrets include those the kit issued, as in the test's echo case.
  if (inst && c.behaviour)
    proxy = await startHostile(
      inst.url,
      c.behaviour(() => [password, token, inst.hmac.privateKey, ...(proxy?.observed ?? [])]),
    );
  const target = proxy?.url ?? inst?.url;
  const reports = mkdtempSync(join(tmpdir(), 'pmv6-bench-memory-'));
  try {
    const flags = c.behaviour ? ['--timeout', '2000', '--concurrency', '2', '--only', c.only!] : [];
    // Credentials in the environment without --target are refused: the embedded case has none.
    const to = inst ? ['--target', target!, '--control', `${target}/__control`] : [];
    const credentials = inst
      ? {
          PMV6_USER: 'admin',
          PMV6_PASSWORD: password,
          PMV6_CONTROL_TOKEN: token,
          PMV6_HMAC_PUBLIC: inst.hmac.publicKey,
          PMV6_HMAC_PRIVATE: inst.hmac.privateKey,
        }
      : {};
    const cli = spawn(process.execPath, [...(col.node ?? []), col.bin, 'run', ...to, '--report-dir', reports, '--quiet', ...flags], {
      env: { ...process.env, ...col.env, ...credentials, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    cli.stdout.on('data', (d) => (out += d));
    cli.stderr.on('data', (d) => (out += d));
    const started = Date.now();
    const memory = watchTreeMemory(cli.pid!);
    const code = await new Promise<number | null>((resolve) => cli.on('close', resolve));
    return { code, memory: memory.stop(), last: out.trim().split('\n').at(-1) ?? '', ms: Date.now() - started };
  } finally {
    rmSync(reports, { recursive: true, force: true });
    await proxy?.close();
    await inst?.close();
  }
}

const columns = values.columns.split(',').map(column);
for (const col of columns)
  spawnSync(process.execPath, [...(col.node ?? []), col.bin, 'run', '--help'], { stdio: 'ignore', env: { ...process.env, ...col.env } });
const cases = values.cases.split(',').map((n) => {
  const c = CASES.find((k) => k.name === n);
  if (!c) throw new Error(`unknown case ${n}: ${CASES.map((k) => k.name).join(', ')}`);
  return c;
});
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const table: string[] = [];
try {
  for (const c of cases) {
    const peaks = new Map<string, number[]>(columns.map((col) => [col.name, []]));
    for (let i = 1; i <= runs; i++) {
      for (const col of columns) {
        const r = await once(c, col);
        peaks.get(col.name)!.push(r.memory.peak);
        console.log(
          `${c.name} run ${i} ${col.name}: exit ${r.code} after ${(r.ms / 1000).toFixed(1)} s, process tree ${treeMemoryText(r.memory)}; ${r.last.slice(0, 120)}`,
        );
      }
    }
    const base = median(peaks.get(columns[0]!.name)!);
    for (const col of columns) {
      const ps = peaks.get(col.name)!;
      const m = median(ps);
      table.push(
        `${c.name.padEnd(11)} ${col.name.padEnd(10)} peaks ${ps.map(megabytes).join(', ').padEnd(24)} median ${megabytes(m).padStart(7)} = ${(m / BUDGET).toFixed(2)} of 300 MB, ${(m / base).toFixed(2)} of ${columns[0]!.name}`,
      );
    }
  }
} finally {
  for (const d of temporary) {
    rmSync(d, { recursive: true, force: true });
    rmSync(compiledDir(d), { recursive: true, force: true });
  }
}
console.log(`\n${table.join('\n')}`);
