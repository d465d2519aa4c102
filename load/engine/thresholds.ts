// The verdict of a load run: each threshold (k6 syntax, parsed by ./scenario.ts) against what the
// run measured, as k6 computes its metrics: http_req_duration over every request, http_req_failed
// as the share (rate) or number (count) of failed requests, checks as the share that passed or
// the number that failed, dropped_iterations as a count or, as k6's Counter `rate`, per second.
// A threshold with tags (`http_req_duration{name:passwords/count}`) is judged on the requests of
// the endpoints and page sizes that carry them, as k6 judges its submetric.
import type { Histogram } from 'hdr-histogram-js';
import { holds, selects, type Threshold } from './scenario.ts';
import { type EndpointStats, type LatencySummary, latencyHistogram, percentileMs, round3, summarise } from './stats.ts';

export interface ThresholdResult {
  metric: string;
  expr: string;
  actual: number;
  ok: boolean;
}

export interface Measured {
  /** every request's latency, in µs */
  latencies: Histogram;
  latency: LatencySummary;
  requests: number;
  failed: number;
  checks: { passes: number; fails: number };
  dropped: number;
  /** the run's length, for per-second rates */
  durationS: number;
  /** per endpoint and page size, for thresholds with tags */
  endpoints: Iterable<EndpointStats>;
}

export function evaluateThresholds(declared: Threshold[], m: Measured): ThresholdResult[] {
  return declared.map((t) => {
    const actual = measuredValue(t, t.tags ? narrowed(t, m) : m);
    return { metric: t.key, expr: t.expr, actual: round3(actual * 1000) / 1000, ok: Number.isFinite(actual) && holds(actual, t.op, t.value) };
  });
}

/** What was measured on the requests the threshold's tags select. */
function narrowed(t: Threshold, m: Measured): Measured {
  const latencies = latencyHistogram();
  let requests = 0;
  let failed = 0;
  for (const e of m.endpoints) {
    if (!selects(t.tags!, e)) continue;
    latencies.add(e.hist);
    requests += e.count;
    failed += e.errors;
  }
  return { ...m, latencies, latency: summarise(latencies), requests, failed };
}

function measuredValue(t: Threshold, m: Measured): number {
  const s = t.stat;
  switch (t.metric) {
    case 'http_req_duration':
      if (s.kind === 'percentile') return percentileMs(m.latencies, s.p);
      if (s.kind === 'avg') return m.latency.mean;
      if (s.kind === 'med') return m.latency.p50;
      if (s.kind === 'min') return m.latency.min;
      if (s.kind === 'max') return m.latency.max;
      if (s.kind === 'count') return m.latency.count;
      return NaN;
    case 'http_req_failed':
      if (s.kind === 'count') return m.failed;
      return m.requests === 0 ? 0 : m.failed / m.requests;
    case 'checks': {
      const { passes, fails } = m.checks;
      if (s.kind === 'count') return fails;
      return passes + fails === 0 ? 1 : passes / (passes + fails);
    }
    case 'dropped_iterations':
      if (s.kind === 'rate') return m.durationS > 0 ? m.dropped / m.durationS : 0;
      return m.dropped;
  }
}
