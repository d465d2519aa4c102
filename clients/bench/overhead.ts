/**
 * Cost of the client checks: the full server suite (`pmv6 run`) against the plain reference
 * server and against the client kit, side by side in one process, in the order plain, kit, kit,
 * plain (so drift of a shared machine falls on both), each on a fresh in-memory server. Prints
 * each run's time, the ratio kit/plain of the sums, and the findings the kit raised on the suite's
 * own requests (the acceptance: none outside declared probes).
 *
 *   node --import tsx clients/bench/overhead.ts [--pairs N]
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createReferenceServer } from '../../fixtures/reference-server/src/index.ts';
import { createClientKit } from '../kit.ts';
import type { KitSnapshot } from '../ledger.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const pairsArg = process.argv.indexOf('--pairs');
const pairs = pairsArg > 0 ? Number(process.argv[pairsArg + 1]) : 1;
if (!Number.isInteger(pairs) || pairs < 1 || pairs > 5) {
  process.stderr.write('--pairs must be an integer from 1 to 5\n');
  process.exit(2);
}
/** A full suite run is bounded: past this it is stopped and the bench fails. */
const RUN_DEADLINE_MS = 15 * 60_000;

function suiteRun(base: string, password: string, token: string): Promise<{ ms: number; code: number | null }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      process.execPath,
      ['bin/pmv6.js', 'run', '--target', base, '--control', `${base}/__control`, '--quiet'],
      { cwd: ROOT, env: { ...process.env, PMV6_USER: 'admin', PMV6_PASSWORD: password, PMV6_CONTROL_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
    child.stderr.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
    const timer = setTimeout(() => child.kill('SIGTERM'), RUN_DEADLINE_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const ms = performance.now() - started;
      process.stdout.write(`    ${out.trim().split('\n').filter((l) => l.startsWith('verdict')).join(' ') || out.trim().split('\n').slice(-3).join(' | ')}\n`);
      resolve({ ms, code });
    });
  });
}

async function once(kind: 'plain' | 'kit'): Promise<{ ms: number; code: number | null; snapshot?: KitSnapshot }> {
  const password = randomBytes(12).toString('base64url');
  const token = randomBytes(16).toString('hex');
  if (kind === 'plain') {
    const server = await createReferenceServer({ adminPassword: password, controlToken: token });
    const base = await server.listen({ port: 0 });
    try {
      return await suiteRun(base, password, token);
    } finally {
      await server.close();
    }
  }
  const kit = await createClientKit({ adminPassword: password, controlToken: token });
  const base = await kit.listen({ port: 0 });
  try {
    const r = await suiteRun(base, password, token);
    return { ...r, snapshot: kit.snapshot() };
  } finally {
    await kit.close();
  }
}

const totals = { plain: 0, kit: 0 };
let last: KitSnapshot | undefined;
for (let i = 0; i < pairs; i++) {
  for (const kind of ['plain', 'kit', 'kit', 'plain'] as const) {
    const r = await once(kind);
    totals[kind] += r.ms;
    if (r.snapshot) last = r.snapshot;
    process.stdout.write(`  ${kind.padEnd(6)} ${(r.ms / 1000).toFixed(1).padStart(7)} s  exit ${r.code}\n`);
  }
}
process.stdout.write(`\nserver suite, ${pairs * 2} runs each: plain ${(totals.plain / 1000).toFixed(1)} s, kit ${(totals.kit / 1000).toFixed(1)} s, ratio kit/plain ${(totals.kit / totals.plain).toFixed(3)} (target ≤ 1.100)\n`);
if (last) {
  const findings = new Map<string, number>();
  const probes = new Map<string, number>();
  for (const c of last.clients) {
    for (const [k, n] of Object.entries(c.findings)) findings.set(k, (findings.get(k) ?? 0) + n);
    for (const [k, n] of Object.entries(c.probeFindings)) probes.set(k, (probes.get(k) ?? 0) + n);
  }
  const total = [...findings.values()].reduce((a, b) => a + b, 0);
  process.stdout.write(`last kit run: ${last.requests} requests from ${last.clients.length} clients, ${total} client findings${total ? ` (${[...findings].map(([k, n]) => `${k} ${n}`).join(', ')})` : ''}, ` +
    `declared probes: ${[...probes].map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}, kit errors ${last.kitErrors.length}\n`);
  if (total > 0) {
    for (const c of last.clients) for (const e of c.examples.slice(0, 40)) process.stdout.write(`  ${e.clause} ${e.method} ${e.target} → ${e.status}: ${e.actual}\n`);
  }
}
