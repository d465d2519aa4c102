// How long a full run takes against an installation that answers in tens of milliseconds: the
// reference server behind a loopback proxy that holds every response for a fixed delay
// (default 20 ms, `--delay MS`), a full run with the control protocol through it. Prints wall
// time against the goal, the ratio to the ideal (requests × delay ÷ concurrency), the requests
// in flight over the run, the longest tests, and when each file ended. `--concurrency N` as for
// `pmv6 run` (default: the run's default); `--only IDS` runs part of the suites. A benchmark to
// read, not a test that can flake.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { startEmbeddedTarget } from '../../../targets/embedded.ts';
import { DEFAULT_CONCURRENCY } from '../../harness/config.ts';
import { runSuites } from '../run-suites.ts';

const { values } = parseArgs({
  options: { delay: { type: 'string', default: '20' }, concurrency: { type: 'string', default: String(DEFAULT_CONCURRENCY) }, only: { type: 'string' } },
});
const delay = Number(values.delay);
const concurrency = Number(values.concurrency);
if (!Number.isFinite(delay) || delay < 0 || delay > 1000) throw new Error('--delay: a number of milliseconds from 0 to 1000');

/** A full run against a 20 ms installation at the default concurrency. */
const GOAL_S = 30;

const upstream = await startEmbeddedTarget({ seed: 1 }, { http: true });
const upstreamUrl = new URL(upstream.config.target);

// Each request is forwarded at once; its response is held `delay` ms before the first byte goes
// back, as a distant installation's would be.
let inFlight = 0;
let peak = 0;
const proxy = createServer((req: IncomingMessage, res: ServerResponse) => {
  inFlight++;
  peak = Math.max(peak, inFlight);
  const out = httpRequest(
    { host: upstreamUrl.hostname, port: upstreamUrl.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstreamUrl.host } },
    (up) => {
      setTimeout(() => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
        up.on('end', () => inFlight--);
      }, delay);
    },
  );
  out.on('error', () => {
    inFlight--;
    res.writeHead(502).end();
  });
  req.pipe(out);
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
const address = proxy.address();
if (address === null || typeof address === 'string') throw new Error('proxy did not listen');
const target = `http://127.0.0.1:${address.port}`;

// Requests in flight, sampled every 10 ms: how much of the allowed concurrency the run used, second by second.
const samples: number[] = [];
const sampler = setInterval(() => samples.push(inFlight), 10);
const started = performance.now();
const endedAt = new Map<string, number>();
const result = await runSuites(
  {
    ...upstream.config,
    concurrency,
    target,
    control: { url: `${target}/__control`, token: upstream.config.control!.token },
    ...(values.only ? { selection: { only: values.only.split(',') } } : {}),
  },
  {
    onModuleDone: (file) => {
      endedAt.set(file, performance.now() - started);
    },
  },
);
const wallMs = performance.now() - started;
clearInterval(sampler);
await new Promise<void>((resolve) => proxy.close(() => resolve()));
await upstream.close();

const requests = result.requests ?? 0;
const byFile = Object.entries(result.requestsByFile ?? {}).sort((a, b) => b[1] - a[1]);
const failing = result.clauses.filter((c) => c.outcome === 'fail' || c.outcome === 'warn').map((c) => c.clause.id);
const ideal = (requests * delay) / concurrency;
console.log(`delay ${delay} ms a response, concurrency ${concurrency}, peak requests in flight ${peak}`);
console.log(
  `wall ${(wallMs / 1000).toFixed(1)} s for ${requests} requests (goal at 20 ms and the default concurrency: ${GOAL_S} s or less); ideal (requests × delay ÷ concurrency) ${(ideal / 1000).toFixed(1)} s; ratio ${(wallMs / Math.max(1, ideal)).toFixed(2)}`,
);
console.log(
  `verdict: ${failing.length === 0 ? 'no clause failed or warned' : `failed or warned: ${failing.join(' ')}`}; cleanup left ${result.cleanup?.leftovers.length ?? '?'} objects`,
);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
console.log(`requests in flight: ${mean(samples).toFixed(1)} on average of ${concurrency} allowed; by 2 s of the run:`);
const perBucket = 200;
const buckets = Array.from({ length: Math.ceil(samples.length / perBucket) }, (_, i) => mean(samples.slice(i * perBucket, (i + 1) * perBucket)).toFixed(1));
for (let i = 0; i < buckets.length; i += 10) console.log(`  ${String(i * 2).padStart(3)} s  ${buckets.slice(i, i + 10).join('  ')}`);
// A test's time in delays is the longest chain of requests it waited on one after another (or at the gate).
console.log(`longest tests (their time in ${delay} ms delays: the chain of requests they waited on, at the gate too):`);
for (const t of [...result.tests].sort((a, b) => b.durationMs - a.durationMs).slice(0, 12)) {
  const chain = delay > 0 ? `${Math.round(t.durationMs / delay)}`.padStart(5) : '';
  console.log(`  ${`${(t.durationMs / 1000).toFixed(1)} s`.padStart(8)} ${chain}  ${t.file.replace(/^suites\//, '')}: ${t.title.slice(0, 80)}`);
}
console.log('suite files in the order they ended (time since the start, requests):');
const requestsOf = new Map(byFile);
for (const [file, at] of [...endedAt].sort((a, b) => a[1] - b[1]))
  if ((requestsOf.get(file) ?? 0) > 0) console.log(`  ${`${(at / 1000).toFixed(1)} s`.padStart(8)}  ${String(requestsOf.get(file)).padStart(5)}  ${file}`);
