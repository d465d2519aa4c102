/**
 * Cost of the client checks: the full server suite (`pmv6 run`) against the plain reference
 * server and against the client kit, side by side in one process, in the order plain, kit, kit,
 * plain per pair (so drift of a shared machine falls on both), each on a fresh in-memory server.
 *
 * Two measures, because this machine is shared: the wall time of each suite run, and the CPU time
 * it cost — the server's (this process, which runs nothing else meanwhile) plus the suite's (every
 * Node process of the run, summed by cpu-at-exit.mjs). Prints both ratios kit/plain, the target is
 * ≤ 1.10, and the findings the kit raised on the suite's requests.
 *
 *   node --import tsx clients/bench/overhead.ts [--pairs N]
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createReferenceServer } from '../../fixtures/reference-server/src/index.ts';
import { createClientKit } from '../kit.ts';
import type { KitSnapshot } from '../ledger.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PRELOAD = fileURLToPath(new URL('./cpu-at-exit.mjs', import.meta.url));
const pairsArg = process.argv.indexOf('--pairs');
const pairs = pairsArg > 0 ? Number(process.argv[pairsArg + 1]) : 2;
if (!Number.isInteger(pairs) || pairs < 1 || pairs > 5) {
  process.stderr.write('--pairs must be an integer from 1 to 5\n');
  process.exit(2);
}
/** A full suite run is bounded: past this it is stopped. */
const RUN_DEADLINE_MS = 10 * 60_000;

interface Measure {
  wallMs: number;
  serverCpuMs: number;
  suiteCpuMs: number;
  code: number | null;
  snapshot?: KitSnapshot;
}

async function suiteRun(base: string, password: string, token: string): Promise<Omit<Measure, 'serverCpuMs'>> {
  const dir = await mkdtemp(join(tmpdir(), 'pmv6-bench-cpu-'));
  const cpuFile = join(dir, 'cpu');
  try {
    const { wallMs, code } = await new Promise<{ wallMs: number; code: number | null }>((resolve, reject) => {
      const started = performance.now();
      const child = spawn(process.execPath, ['bin/pmv6.js', 'run', '--target', base, '--control', `${base}/__control`, '--quiet'], {
        cwd: ROOT,
        env: {
          ...process.env,
          PMV6_USER: 'admin',
          PMV6_PASSWORD: password,
          PMV6_CONTROL_TOKEN: token,
          PMV6_BENCH_CPU_FILE: cpuFile,
          NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${PRELOAD}`.trim(),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
      child.stderr.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
      const timer = setTimeout(() => child.kill('SIGTERM'), RUN_DEADLINE_MS);
      child.on('error', reject);
      child.on('close', (c) => {
        clearTimeout(timer);
        const verdict =
          out
            .trim()
            .split('\n')
            .find((l) => l.startsWith('verdict')) ?? out.trim().split('\n').slice(-2).join(' | ');
        process.stdout.write(`    ${verdict}\n`);
        resolve({ wallMs: performance.now() - started, code: c });
      });
    });
    const text = await readFile(cpuFile, 'utf8').catch(() => '');
    const suiteCpuMs =
      text
        .split('\n')
        .filter(Boolean)
        .reduce((n, l) => n + Number(l), 0) / 1000;
    return { wallMs, suiteCpuMs, code };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function once(kind: 'plain' | 'kit'): Promise<Measure> {
  const password = randomBytes(12).toString('base64url');
  const token = randomBytes(16).toString('hex');
  const server =
    kind === 'plain'
      ? await createReferenceServer({ adminPassword: password, controlToken: token })
      : await createClientKit({ adminPassword: password, controlToken: token });
  const base = await server.listen({ port: 0 });
  const cpu = process.cpuUsage();
  try {
    const r = await suiteRun(base, password, token);
    const used = process.cpuUsage(cpu);
    const snapshot = 'snapshot' in server ? server.snapshot() : undefined;
    return { ...r, serverCpuMs: (used.user + used.system) / 1000, ...(snapshot ? { snapshot } : {}) };
  } finally {
    await server.close();
  }
}

const sum = { plain: { wall: 0, server: 0, suite: 0 }, kit: { wall: 0, server: 0, suite: 0 } };
let last: KitSnapshot | undefined;
const s = (ms: number) => `${(ms / 1000).toFixed(1).padStart(6)} s`;
process.stdout.write(`server suite, ${pairs} pair(s) of plain, kit, kit, plain:\n`);
for (let i = 0; i < pairs; i++) {
  for (const kind of ['plain', 'kit', 'kit', 'plain'] as const) {
    const r = await once(kind);
    sum[kind].wall += r.wallMs;
    sum[kind].server += r.serverCpuMs;
    sum[kind].suite += r.suiteCpuMs;
    if (r.snapshot) last = r.snapshot;
    process.stdout.write(`  ${kind.padEnd(6)} wall ${s(r.wallMs)}  cpu: server ${s(r.serverCpuMs)}, suite ${s(r.suiteCpuMs)}  exit ${r.code}\n`);
  }
}
const ratio = (a: number, b: number) => (a / b).toFixed(3);
const cpu = (k: 'plain' | 'kit') => sum[k].server + sum[k].suite;
process.stdout.write(
  `\n${pairs * 2} runs each\n` +
    `  wall time   plain ${s(sum.plain.wall)}  kit ${s(sum.kit.wall)}  ratio kit/plain ${ratio(sum.kit.wall, sum.plain.wall)}  (target ≤ 1.100)\n` +
    `  CPU, total  plain ${s(cpu('plain'))}  kit ${s(cpu('kit'))}  ratio kit/plain ${ratio(cpu('kit'), cpu('plain'))}  (target ≤ 1.100)\n` +
    `  CPU, server plain ${s(sum.plain.server)}  kit ${s(sum.kit.server)}  ratio kit/plain ${ratio(sum.kit.server, sum.plain.server)}\n`,
);
if (last) {
  const findings = new Map<string, number>();
  const probes = new Map<string, number>();
  for (const c of last.clients) {
    for (const [k, n] of Object.entries(c.findings)) findings.set(k, (findings.get(k) ?? 0) + n);
    for (const [k, n] of Object.entries(c.probeFindings)) probes.set(k, (probes.get(k) ?? 0) + n);
  }
  const total = [...findings.values()].reduce((a, b) => a + b, 0);
  const onSuccess = last.clients.flatMap((c) => c.examples).filter((e) => e.status !== null && e.status < 400);
  process.stdout.write(
    `\nlast kit run: ${last.requests} requests from ${last.clients.length} clients; ${total} client findings` +
      `${
        total
          ? ` (${[...findings]
              .sort()
              .map(([k, n]) => `${k} ${n}`)
              .join(', ')})`
          : ''
      }; declared probes: ${[...probes].map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}; kit errors ${last.kitErrors.length}\n` +
      `  stored findings on requests the kit answered 2XX: ${onSuccess.length}${onSuccess.length ? ` (${onSuccess.map((e) => `${e.clause} ${e.method} ${e.target}`).join('; ')})` : ''}\n`,
  );
}
