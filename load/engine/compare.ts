import type { EndpointResult, LoadResults } from './engine.ts';

export interface CompareOptions {
  /** a median (p50) or p95 increase above this fraction is a regression, when beyond noise */
  budget: number;
  /** ... and above this many milliseconds */
  minMs: number;
  /** two-sided significance level of the Mann-Whitney U test on the sampled latencies */
  alpha: number;
}

export const DEFAULT_COMPARE: CompareOptions = { budget: 0.2, minMs: 1, alpha: 0.01 };

export interface EndpointComparison {
  key: string;
  before: Pick<EndpointResult, 'count' | 'p50' | 'p95' | 'p99' | 'rps'> | null;
  after: Pick<EndpointResult, 'count' | 'p50' | 'p95' | 'p99' | 'rps'> | null;
  change: { p50: number; p95: number; p99: number; rps: number } | null;
  /** Mann-Whitney U, two-sided, normal approximation with tie correction */
  pValue: number | null;
  /** P(a latency after > a latency before) + 0.5 P(equal): 0.5 = no shift */
  probabilityOfSuperiority: number | null;
  verdict: 'regression' | 'improvement' | 'within noise' | 'beyond noise, within budget' | 'only before' | 'only after' | 'too few samples';
}

export interface Comparison {
  scenarioBefore: string;
  scenarioAfter: string;
  options: CompareOptions;
  endpoints: EndpointComparison[];
  regressions: string[];
}

export function compareResults(before: LoadResults, after: LoadResults, opts: CompareOptions = DEFAULT_COMPARE): Comparison {
  const keys = [...new Set([...Object.keys(before.endpoints), ...Object.keys(after.endpoints)])].sort();
  const endpoints = keys.map((key) => compareEndpoint(key, before.endpoints[key], after.endpoints[key], opts));
  return {
    scenarioBefore: before.scenario,
    scenarioAfter: after.scenario,
    options: opts,
    endpoints,
    regressions: endpoints.filter((e) => e.verdict === 'regression').map((e) => e.key),
  };
}

function pick(e: EndpointResult | undefined) {
  return e ? { count: e.count, p50: e.p50, p95: e.p95, p99: e.p99, rps: e.rps } : null;
}

function rel(a: number, b: number): number {
  return a === 0 ? (b === 0 ? 0 : Infinity) : Math.round(((b - a) / a) * 10_000) / 10_000;
}

function compareEndpoint(key: string, b: EndpointResult | undefined, a: EndpointResult | undefined, opts: CompareOptions): EndpointComparison {
  const base = { key, before: pick(b), after: pick(a) };
  if (!b) return { ...base, change: null, pValue: null, probabilityOfSuperiority: null, verdict: 'only after' };
  if (!a) return { ...base, change: null, pValue: null, probabilityOfSuperiority: null, verdict: 'only before' };
  const change = { p50: rel(b.p50, a.p50), p95: rel(b.p95, a.p95), p99: rel(b.p99, a.p99), rps: rel(b.rps, a.rps) };
  if (b.samples.length < 8 || a.samples.length < 8) return { ...base, change, pValue: null, probabilityOfSuperiority: null, verdict: 'too few samples' };
  const { p, ps } = mannWhitney(b.samples, a.samples);
  const significant = p < opts.alpha;
  const slower = (change.p50 > opts.budget && a.p50 - b.p50 > opts.minMs) || (change.p95 > opts.budget && a.p95 - b.p95 > opts.minMs);
  const faster = (change.p50 < -opts.budget && b.p50 - a.p50 > opts.minMs) || (change.p95 < -opts.budget && b.p95 - a.p95 > opts.minMs);
  const verdict: EndpointComparison['verdict'] = !significant
    ? 'within noise'
    : slower && ps > 0.5
      ? 'regression'
      : faster && ps < 0.5
        ? 'improvement'
        : 'beyond noise, within budget';
  return { ...base, change, pValue: Number(p.toPrecision(3)), probabilityOfSuperiority: Math.round(ps * 1000) / 1000, verdict };
}

/** Mann-Whitney U of y against x: two-sided p (normal approximation, tie-corrected) and P(Y > X). */
export function mannWhitney(x: number[], y: number[]): { u: number; p: number; ps: number } {
  const n1 = x.length;
  const n2 = y.length;
  const all = [...x.map((v) => ({ v, g: 0 })), ...y.map((v) => ({ v, g: 1 }))].sort((p, q) => p.v - q.v);
  let rankY = 0;
  let ties = 0;
  for (let i = 0; i < all.length; ) {
    let j = i;
    while (j + 1 < all.length && all[j + 1]!.v === all[i]!.v) j++;
    const rank = (i + j) / 2 + 1;
    const t = j - i + 1;
    ties += t * t * t - t;
    for (let k = i; k <= j; k++) if (all[k]!.g === 1) rankY += rank;
    i = j + 1;
  }
  const u = rankY - (n2 * (n2 + 1)) / 2;
  const n = n1 + n2;
  const mean = (n1 * n2) / 2;
  const variance = ((n1 * n2) / 12) * (n + 1 - ties / (n * (n - 1)));
  const z = variance <= 0 ? 0 : (Math.abs(u - mean) - 0.5) / Math.sqrt(variance);
  return { u, p: Math.min(1, 2 * (1 - normalCdf(Math.max(0, z)))), ps: u / (n1 * n2) };
}

function normalCdf(z: number): number {
  const t = 1 / (1 + 0.2316419 * z);
  const d = 0.3989422804014327 * Math.exp((-z * z) / 2);
  return 1 - d * t * (0.31938153 + t * (-0.356563782 + t * (1.781477937 + t * (-1.821255978 + t * 1.330274429))));
}

export function comparisonText(c: Comparison): string {
  const pct = (x: number) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%` : 'n/a');
  const lines = [
    `baseline comparison (${c.scenarioBefore} → ${c.scenarioAfter}); regression = Mann-Whitney p < ${c.options.alpha} and p50 or p95 up by more than ${(c.options.budget * 100).toFixed(0)}% and ${c.options.minMs} ms`,
  ];
  for (const e of c.endpoints) {
    if (!e.before || !e.after || !e.change) {
      lines.push(`  ${e.key.padEnd(36)} ${e.verdict}`);
      continue;
    }
    lines.push(
      `  ${e.key.padEnd(36)} p50 ${e.before.p50.toFixed(2)}→${e.after.p50.toFixed(2)} ms (${pct(e.change.p50)})  ` +
        `p95 ${e.before.p95.toFixed(2)}→${e.after.p95.toFixed(2)} (${pct(e.change.p95)})  p99 ${e.before.p99.toFixed(2)}→${e.after.p99.toFixed(2)} (${pct(e.change.p99)})  ` +
        `${e.before.rps.toFixed(1)}→${e.after.rps.toFixed(1)} req/s (${pct(e.change.rps)})  p=${e.pValue ?? '-'}  ${e.verdict}`,
    );
  }
  lines.push(c.regressions.length === 0 ? 'no regression beyond the budget' : `REGRESSION: ${c.regressions.join(', ')}`);
  return lines.join('\n');
}
