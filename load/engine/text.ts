import { sweepLine } from '../k6/lib/iterations.js';
// The results of a load run as the CLI prints them: a line of totals, a table per endpoint and
// page size whose columns name their units, the failed checks, and each threshold with what was
// measured, in its unit.
import type { LoadResults, ThresholdResult } from './engine.ts';

/** What a threshold's measured value is counted in: ms for a latency, per second for a counter's rate; a share (rate) and a count have none. */
export function thresholdUnit(t: Pick<ThresholdResult, 'metric' | 'expr'>): string {
  const stat = /^[a-z]+/.exec(t.expr.startsWith('p(') ? 'p' : t.expr)?.[0];
  if (t.metric.startsWith('http_req_duration') && stat !== 'count') return ' ms';
  if (t.metric === 'dropped_iterations' && stat === 'rate') return '/s';
  return '';
}

export function resultsText(r: LoadResults): string {
  const col = (s: string, w = 9) => s.padStart(w);
  const lines = [
    `${r.scenario}: ${r.requests.total} requests in ${r.durationS.toFixed(1)} s (${r.requests.rps.toFixed(1)}/s), ` +
      `${r.requests.failed} failed, iterations ${r.iterations.completed} completed / ${r.iterations.dropped} dropped / ${r.iterations.interrupted} interrupted, ` +
      `checks ${r.checks.passes} passed / ${r.checks.fails} failed`,
    `  ${'endpoint [page size]'.padEnd(36)} ${col('requests')} ${col('p50 ms')} ${col('p95 ms')} ${col('p99 ms')} ${col('max ms')} ${col('req/s', 8)}`,
  ];
  for (const e of Object.values(r.endpoints)) {
    const ms = (v: number) => col(v.toFixed(2));
    lines.push(`  ${e.key.padEnd(36)} ${col(String(e.count))} ${ms(e.p50)} ${ms(e.p95)} ${ms(e.p99)} ${ms(e.max)} ${col(e.rps.toFixed(1), 8)}`);
  }
  for (const [name, c] of Object.entries(r.checks.byName)) if (c.fails > 0) lines.push(`  check failed ${c.fails}×: ${name}`);
  if (r.retried > 0) lines.push(`  sent again on a new connection: ${r.retried} (a kept-alive connection closed before any byte of the answer; not failed)`);
  for (const t of r.thresholds) lines.push(`  ${t.ok ? 'ok  ' : 'FAIL'} ${t.metric} ${t.expr} (actual ${t.actual}${thresholdUnit(t)})`);
  const swept = r.swept ? sweepLine(r.swept) : '';
  if (swept) lines.push(`  ${swept}`);
  lines.push(r.pass ? 'thresholds: all held' : 'thresholds: FAILED');
  return lines.join('\n');
}
