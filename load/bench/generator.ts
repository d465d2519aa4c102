// Generator cost: the native engine and wrk against the same static v6-shaped server on loopback
// (precomputed bodies of 20 and 1000 items), each in its own process, one after the other.
// Prints generator CPU time per response and the engine/wrk ratio. Goal: ratio ≤ 3.
// Run: npm run bench:load   (BENCH_SECONDS, BENCH_CONNECTIONS change the defaults 5 and 10;
// BENCH_PROFILE=DIR writes a CPU profile of each engine run there)
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 10);
const PAGES = 10;
const SIZES = [20, 1000];
const API = '/index.php/api/v6';

function items(n: number): string {
  return JSON.stringify(
    Array.from({ length: n }, (_, i) => ({
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

const bodies = new Map(SIZES.map((s) => [s, Buffer.from(items(s))]));
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
  const body = bodies.get(size);
  if (!m || !body) {
    res.writeHead(404).end();
    return;
  }
  const page = Math.max(1, Number(m[1] ?? 1));
  const link = [`<${base}/passwords/page/${page}.json>; rel="self"`, `<${base}/passwords/page/1.json>; rel="first"`, `<${base}/passwords/page/${PAGES}.json>; rel="last"`];
  if (page > 1) link.push(`<${base}/passwords/page/${page - 1}.json>; rel="prev"`);
  if (page < PAGES) link.push(`<${base}/passwords/page/${page + 1}.json>; rel="next"`);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, link: link.join(', ') }).end(body);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

function childOutput(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} exited with ${code}: ${out}`))));
  });
}

async function engine(size: number): Promise<{ requests: number; cpuMs: number; seconds: number; checksFailed: number }> {
  const child = fileURLToPath(new URL('./engine-child.ts', import.meta.url));
  const profile = process.env['BENCH_PROFILE'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_PROFILE']}`] : [];
  const out = await childOutput(process.execPath, [...profile, '--import', 'tsx', child, target, String(size), String(CONNECTIONS), String(SECONDS * 1000)]);
  return JSON.parse(out.trim().split('\n').pop()!);
}

/** wrk in a bash whose `times` builtin reports the CPU time of its finished children. */
async function wrk(size: number): Promise<{ requests: number; cpuMs: number; seconds: number }> {
  const script = `wrk -t1 -c${CONNECTIONS} -d${SECONDS}s -H 'X-Page-Size: ${size}' -H 'Authorization: Basic YmVuY2g6YmVuY2g=' -H 'Content-Type: application/json; charset=utf-8' '${target}${API}/passwords/page/2.json'; times`;
  const out = await childOutput('bash', ['-c', script]);
  const requests = Number(/(\d+) requests in ([\d.]+)(m?s)/.exec(out)?.[1]);
  const timesLine = out.trim().split('\n').pop() ?? '';
  const cpu = [...timesLine.matchAll(/(\d+)m([\d.]+)s/g)].reduce((a, m) => a + (Number(m[1]) * 60 + Number(m[2])) * 1000, 0);
  return { requests, cpuMs: cpu, seconds: SECONDS };
}

try {
  execFileSync('wrk', ['--version'], { stdio: 'ignore' });
} catch (e) {
  if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
    console.error('wrk is not installed: the bench compares the engine with wrk');
    process.exit(2);
  }
}

console.log(`static server ${target}; ${CONNECTIONS} connections; ${SECONDS} s per run; generator CPU per response (user+system)`);
for (const size of SIZES) {
  const w = await wrk(size);
  const e = await engine(size);
  const wPer = w.cpuMs / w.requests;
  const ePer = e.cpuMs / e.requests;
  console.log(
    `X-Page-Size ${String(size).padStart(4)}  wrk: ${w.requests} responses, ${(w.requests / w.seconds).toFixed(0)}/s, ${(wPer * 1000).toFixed(1)} µs CPU each` +
      `  |  engine: ${e.requests} responses, ${(e.requests / e.seconds).toFixed(0)}/s, ${(ePer * 1000).toFixed(1)} µs CPU each (checks failed: ${e.checksFailed})` +
      `  |  engine/wrk ${(ePer / wPer).toFixed(2)}× ${ePer / wPer <= 3 ? '(within the 3× goal)' : '(ABOVE the 3× goal)'}`,
  );
}
server.close();
