import type { Comparison } from './compare.ts';
import type { LoadResults } from './engine.ts';

// Percentiles drawn on a "nines" axis (0, 50, 90, 99, 99.9 equally spaced), as latency curves
// are usually read: the tail gets as much room as the median.
const PERCENTILES = [0, 10, 25, 50, 75, 90, 95, 97.5, 99, 99.5, 99.9, 100];
const W = 520;
const H = 220;
const PAD = { left: 52, right: 12, top: 12, bottom: 30 };

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function quantile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

function nines(p: number): number {
  return p >= 100 ? 3.3 : -Math.log10(1 - p / 100);
}

function curve(samples: number[]): Array<[number, number]> {
  const sorted = [...samples].sort((a, b) => a - b);
  return PERCENTILES.map((p) => [p, quantile(sorted, p)]);
}

function svg(key: string, before: number[] | undefined, after: number[] | undefined): string {
  const curves = [before ? curve(before) : undefined, after ? curve(after) : undefined];
  const maxY = Math.max(1, ...curves.flatMap((c) => (c ?? []).map(([, y]) => y)));
  const x = (p: number) => PAD.left + (nines(p) / 3.3) * (W - PAD.left - PAD.right);
  const y = (ms: number) => H - PAD.bottom - (ms / maxY) * (H - PAD.top - PAD.bottom);
  const line = (c: Array<[number, number]> | undefined, cls: string) =>
    c ? `<polyline class="${cls}" points="${c.map(([p, ms]) => `${x(p).toFixed(1)},${y(ms).toFixed(1)}`).join(' ')}"/>` : '';
  const ticks = [0, 50, 90, 99, 99.9].map((p) => `<text x="${x(p).toFixed(1)}" y="${H - 10}" text-anchor="middle">p${p}</text>`).join('');
  const yTicks = [0, 0.5, 1]
    .map((f) => `<text x="${PAD.left - 6}" y="${(y(maxY * f) + 4).toFixed(1)}" text-anchor="end">${(maxY * f).toFixed(1)}</text>`)
    .join('');
  return `<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="latency percentiles of ${esc(key)}">
<rect x="${PAD.left}" y="${PAD.top}" width="${W - PAD.left - PAD.right}" height="${H - PAD.top - PAD.bottom}" class="frame"/>
${ticks}${yTicks}<text x="8" y="${PAD.top + 8}">ms</text>${line(curves[0], 'before')}${line(curves[1], 'after')}</svg>`;
}

const fmt = (n: number | undefined) => (n === undefined ? '–' : n.toFixed(2));
const pct = (n: number | undefined) => (n === undefined ? '' : ` (${n >= 0 ? '+' : ''}${(n * 100).toFixed(0)}%)`);

/** One self-contained page: per endpoint and page size, the latency-percentile curves of both runs. */
export function renderLoadComparisonHtml(before: LoadResults, after: LoadResults, comparison: Comparison): string {
  const sections = comparison.endpoints.map((e) => {
    const b = before.endpoints[e.key];
    const a = after.endpoints[e.key];
    return `<section><h2>${esc(e.key)} <span class="verdict ${e.verdict === 'regression' ? 'bad' : ''}">${esc(e.verdict)}</span></h2>
${svg(e.key, b?.samples, a?.samples)}
<table><tr><th></th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>req/s</th></tr>
<tr><td>baseline</td><td>${fmt(e.before?.p50)}</td><td>${fmt(e.before?.p95)}</td><td>${fmt(e.before?.p99)}</td><td>${fmt(e.before?.rps)}</td></tr>
<tr><td>this run</td><td>${fmt(e.after?.p50)}${pct(e.change?.p50)}</td><td>${fmt(e.after?.p95)}${pct(e.change?.p95)}</td><td>${fmt(e.after?.p99)}${pct(e.change?.p99)}</td><td>${fmt(e.after?.rps)}${pct(e.change?.rps)}</td></tr></table>
<p class="note">Mann-Whitney p = ${e.pValue === null ? '–' : e.pValue.toExponential(2)}</p></section>`;
  });
  const regressed = comparison.regressions.length;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>pmv6 load: ${esc(after.scenario)} against its baseline</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;padding:16px;max-width:980px;color:#1d2330}
h1{font-size:20px}h2{font-size:16px;margin:22px 0 6px}
svg{width:100%;max-width:${W}px;height:auto;font-size:11px;fill:#4a5568}
.frame{fill:none;stroke:#d5dae3}.before,.after{fill:none;stroke-width:2.2}.before{stroke:#9aa3b2;stroke-dasharray:5 3}.after{stroke:#2563eb}
table{border-collapse:collapse;margin-top:6px}td,th{padding:3px 10px;border-bottom:1px solid #e5e8ee;text-align:right}td:first-child,th:first-child{text-align:left}
.verdict{font-size:12px;padding:2px 8px;border-radius:10px;background:#e8edf5}.verdict.bad{background:#d62839;color:#fff}
.legend span{display:inline-block;margin-right:14px}.note{color:#6b7280;font-size:13px;margin:4px 0}
</style></head><body>
<h1>pmv6 load: ${esc(after.scenario)}, ${regressed === 0 ? 'no regression' : `${regressed} regression${regressed > 1 ? 's' : ''}`}</h1>
<p class="legend"><span>baseline: ${esc(before.startedAt)} (dashed grey)</span><span>this run: ${esc(after.startedAt)} (blue)</span></p>
<p class="note">A regression: latencies shifted beyond run-to-run noise (Mann-Whitney U, α = ${comparison.options.alpha}) and p50 or p95 up by more than ${(comparison.options.budget * 100).toFixed(0)}% and ${comparison.options.minMs} ms.</p>
${sections.join('\n')}
</body></html>
`;
}
