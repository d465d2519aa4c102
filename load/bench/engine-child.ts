import { runLoad } from '../engine/engine.ts';

const [target, pageSize, vus, durationMs] = process.argv.slice(2);
const before = process.cpuUsage();
const r = await runLoad({
  target: target!,
  credentials: { user: 'bench', password: 'bench' },
  scenario: {
    name: 'large-pages',
    description: 'bench',
    iteration: 'walk',
    auth: 'basic',
    pageSizes: [Number(pageSize)],
    load: { executor: 'constant-vus', vus: Number(vus), duration: `${durationMs}ms` },
    thresholds: {},
  },
  vus: Number(vus),
  durationMs: Number(durationMs),
});
const cpu = process.cpuUsage(before);
process.stdout.write(
  `${JSON.stringify({ requests: r.requests.total, cpuMs: (cpu.user + cpu.system) / 1000, userMs: cpu.user / 1000, seconds: r.durationS, checksFailed: r.checks.fails, p50: r.http_req_duration.p50 })}\n`,
);
