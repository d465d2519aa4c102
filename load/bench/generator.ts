// Generator cost: wrk, the native engine and k6 against the same static v6-shaped server on
// loopback (precomputed bodies of 20 and 1000 items), each in its own process, one after the
// other. Prints each generator's CPU time per response and the ratios. Goals: engine/wrk ≤ 2,
// engine below k6. The engine and k6 run the same iteration (load/k6/lib/iterations.js: count,
// then walk 10 pages by rel="next", checking every response, one body in 50 parsed); wrk fetches
// one URL over and over, checking nothing: the floor. Decision: wrk runs twice, on a page and on
// count.json, and its cost per response is weighed in the engine's own mix (1 count, 10 pages),
// so the engine is never compared with wrk on responses larger on average than its own. Every
// tool has the same connections and duration; CPU is user+system of the tool's process alone.
// Run: npm run bench:load   (BENCH_SECONDS, BENCH_CONNECTIONS change the defaults 5 and 10;
// BENCH_PROFILE=DIR writes a CPU profile of each engine run there; k6 from K6_BINARY,
// ../shared/tools/k6 or PATH, skipped with a note when there is none)
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findK6 } from '../engine/k6.ts';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 10);
const PAGES = 10;
const SIZES = [20, 1000];
const API = '/index.php/api/v6';

/** Page `page` of a list of n a page: ids go on across pages (a whole walk holds no item twice). */
function items(n: number, page: number): string {
  return JSON.stringify(
    Array.from({ length: n }, (_, j) => (page - 1) * n + j).map((i) => ({
      id: i + 1,
      name: `password ${i + 1}`,
      project: { id: 1, name: 'bench' },
      tags: 'a,b',
      access_info: 'https://example.com',
      username: `user${i}`,
      email: `user${i}@example.com`,
      archived: false,
      favorite: false,
      locked: false,
      updated_on: '2026-11-25 00:00:00',
    })),
  );
}

const bodies = new Map(SIZES.map((s) => [s, Array.from({ length: PAGES }, (_, p) => Buffer.from(items(s, p + 1)))]));
const server = createServer((req, res) => {
  const size = Number(req.headers['x-page-size'] ?? 20);
  const path = (req.url ?? '').split('?')[0] ?? '';
  const base = `http://${req.headers.host}${API}`;
  if (path === `${API}/version.json`) {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end('{"version":"1.0.0","version_date":"2026-11-25","api_version":"6"}');
    return;
  }
  if (path === `${API}/passwords/count.json`) {
    res
      .writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
      .end(JSON.stringify({ num_items: size * PAGES, num_pages: PAGES, num_items_per_page: size }));
    return;
  }
  const m = /^\/index\.php\/api\/v6\/passwords(?:\/page\/(\d+))?\.json$/.exec(path);
  const page = Math.max(1, Number(m?.[1] ?? 1));
  const body = bodies.get(size)?.[page - 1];
  if (!m || !body) {
    res.writeHead(404).end();
    return;
  }
  const link = [
    `<${base}/passwords/page/${page}.json>; rel="self"`,
    `<${base}/passwords/page/1.json>; rel="first"`,
    `<${base}/passwords/page/${PAGES}.json>; rel="last"`,
  ];
  if (page > 1) link.push(`<${base}/passwords/page/${page - 1}.json>; rel="prev"`);
  if (page < PAGES) link.push(`<${base}/passwords/page/${page + 1}.json>; rel="next"`);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, link: link.join(', ') }).end(body);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

function childOutput(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env, detached: true });
    let out = '';
    const deadline = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), SECONDS * 1000 + 120_000);
    child.stdout.on('data', (d) => (out = (out + d).slice(-65536)));
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(deadline);
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} exited with ${code}: ${out}`));
    });
  });
}

interface Measured {
  requests: number;
  cpuMs: number;
  /** the user-space part of cpuMs */
  userMs: number;
  seconds: number;
}

/** CPU time (ms) of the finished children of a bash, from its `times` builtin (the last line). */
function childrenCpuMs(out: string): { cpuMs: number; userMs: number } {
  const timesLine = out.trim().split('\n').pop() ?? '';
  const [user = 0, system = 0] = [...timesLine.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => (Number(m[1]) * 60 + Number(m[2])) * 1000);
  return { cpuMs: user + system, userMs: user };
}

async function engine(size: number): Promise<Measured & { checksFailed: number }> {
  const child = fileURLToPath(new URL('./engine-child.ts', import.meta.url));
  const profile = process.env['BENCH_PROFILE'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_PROFILE']}`] : [];
  const out = await childOutput(process.execPath, [...profile, '--import', 'tsx', child, target, String(size), String(CONNECTIONS), String(SECONDS * 1000)]);
  return JSON.parse(out.trim().split('\n').pop()!);
}

async function wrk(size: number, path: string): Promise<Measured> {
  const headers = `-H 'X-Page-Size: ${size}' -H 'Authorization: Basic YmVuY2g6YmVuY2g=' -H 'Content-Type: application/json; charset=utf-8'`;
  const script = `wrk -t1 -c${CONNECTIONS} -d${SECONDS}s ${headers} '${target}${API}${path}'; times`;
  const out = await childOutput('bash', ['-c', script]);
  return { requests: Number(/(\d+) requests in ([\d.]+)(m?s)/.exec(out)?.[1]), ...childrenCpuMs(out), seconds: SECONDS };
}

/** wrk's cost for the walk's mix: one count.json per PAGES pages, weighed from a run on each. */
function wrkMix(page: Measured, count: Measured): Measured {
  const requests = page.requests + count.requests;
  const weigh = (perResponse: (m: Measured) => number) => (((perResponse(count) + PAGES * perResponse(page)) / (PAGES + 1)) * requests) / 1000;
  return { requests, cpuMs: weigh(us), userMs: weigh(userUs), seconds: page.seconds + count.seconds };
}

/**
 * k6 (pinned to one core when taskset exists, its best case) running load/bench/k6-walk.js.
 * Its start (Go runtime, Babel, VU set-up) is measured by a run of one iteration and taken off.
 */
async function k6(k6Path: string, size: number): Promise<Measured & { checksFailed: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'pmv6-bench-k6-'));
  const script = fileURLToPath(new URL('./k6-walk.js', import.meta.url));
  const pin = hasTaskset ? 'taskset -c 0 ' : '';
  async function once(args: string): Promise<Measured & { checksFailed: number }> {
    const summary = join(dir, 'summary.json');
    const env = {
      ...process.env,
      K6_NO_USAGE_REPORT: 'true',
      PMV6_TARGET: target,
      PMV6_USER: 'bench',
      PMV6_PASSWORD: 'bench',
      PMV6_PAGE_SIZE: String(size),
      PMV6_SUMMARY: summary,
    };
    const out = await childOutput('bash', ['-c', `${pin}"$0" run --no-usage-report --address '' --quiet ${args} "$1" >/dev/null; times`, k6Path, script], env);
    const s = JSON.parse(readFileSync(summary, 'utf8')) as {
      metrics: Record<string, { values: Record<string, number> }>;
      state?: { testRunDurationMs?: number };
    };
    return {
      requests: s.metrics['http_reqs']?.values['count'] ?? 0,
      ...childrenCpuMs(out),
      seconds: (s.state?.testRunDurationMs ?? 0) / 1000,
      checksFailed: s.metrics['checks']?.values['fails'] ?? 0,
    };
  }
  try {
    const start = await once('--vus 1 --iterations 1');
    const run = await once(`--vus ${CONNECTIONS} --duration ${SECONDS}s`);
    return {
      requests: run.requests - start.requests,
      cpuMs: run.cpuMs - start.cpuMs,
      userMs: run.userMs - start.userMs,
      seconds: run.seconds,
      checksFailed: run.checksFailed,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let hasTaskset = true;
try {
  execFileSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' });
} catch {
  hasTaskset = false;
}
try {
  execFileSync('wrk', ['--version'], { stdio: 'ignore' });
} catch (e) {
  if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
    console.error('wrk is not installed: the bench compares the engine with wrk');
    process.exit(2);
  }
}
const k6Binary = findK6();

const us = (m: Measured) => (m.cpuMs * 1000) / m.requests;
const userUs = (m: Measured) => (m.userMs * 1000) / m.requests;
const line = (name: string, m: Measured) =>
  `${name}: ${m.requests} responses, ${(m.requests / m.seconds).toFixed(0)}/s, ${us(m).toFixed(1)} µs CPU each (user ${userUs(m).toFixed(1)})`;

console.log(
  `static server ${target}; ${CONNECTIONS} connections; ${SECONDS} s per run; generator CPU per response (user+system); ` +
    `${cpus().length} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
);
if (!k6Binary) console.log('no k6 binary (K6_BINARY, ../shared/tools/k6/k6 or k6 on PATH): k6 is left out');
for (const size of SIZES) {
  const wPage = await wrk(size, '/passwords/page/2.json');
  const wCount = await wrk(size, '/passwords/count.json');
  const w = wrkMix(wPage, wCount);
  const e = await engine(size);
  const k = k6Binary ? await k6(k6Binary.path, size) : undefined;
  const ew = us(e) / us(w);
  const parts = [
    `X-Page-Size ${String(size).padStart(4)}`,
    line('wrk page', wPage),
    line('wrk count.json', wCount),
    `wrk in the walk's mix (1 count, ${PAGES} pages): ${us(w).toFixed(1)} µs CPU each (user ${userUs(w).toFixed(1)})`,
    `${line('engine', e)} (checks failed: ${e.checksFailed})`,
    ...(k ? [`${line(`k6${hasTaskset ? ' (1 core)' : ''}`, k)} (checks failed: ${k.checksFailed})`] : []),
    `engine/wrk ${ew.toFixed(2)}× ${ew <= 2 ? '(within the 2× goal)' : '(ABOVE the 2× goal)'}`,
    ...(k
      ? [`k6/wrk ${(us(k) / us(w)).toFixed(2)}×`, `engine/k6 ${(us(e) / us(k)).toFixed(2)}× ${us(e) < us(k) ? '(engine below k6)' : '(engine NOT below k6)'}`]
      : []),
  ];
  console.log(parts.join('\n  '));
}
console.log(
  `load average after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
server.close();
