import type { EndpointResult, LoadResults } from './engine.ts';

export interface CompareOptions {
  /** a p50, p95 or p99 increase above this fraction is a regression, when beyond noise */
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
  /**
   * The tail's own tests: the share of samples after above the baseline's p95 (p99) against the
   * share before, one-sided two-proportion z-test; null with too few samples for that quantile.
   */
  tailPValues?: { p95: number | null; p99: number | null };
  /** which percentiles regressed (each beyond the budget and beyond noise by its own test) */
  regressed?: Array<'p50' | 'p95' | 'p99'>;
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
  const tail95 = tailShift(b.samples, a.samples, 0.95);
  const tail99 = tailShift(b.samples, a.samples, 0.99);
  // Decision: the median by Mann-Whitney (a shift of the whole distribution); p95 and p99 each by
  // the share of samples beyond the baseline's own percentile, which moves when only the tail
  // slows (Mann-Whitney barely does). Each must be beyond its budget, its minimum and its noise.
  const up = (q: 'p50' | 'p95' | 'p99') => change[q] > opts.budget && a[q] - b[q] > opts.minMs;
  const down = (q: 'p50' | 'p95' | 'p99') => change[q] < -opts.budget && b[q] - a[q] > opts.minMs;
  const noise = { p50: p < opts.alpha, p95: tail95 !== null && tail95.up < opts.alpha, p99: tail99 !== null && tail99.up < opts.alpha };
  const fewer = { p50: p < opts.alpha, p95: tail95 !== null && tail95.down < opts.alpha, p99: tail99 !== null && tail99.down < opts.alpha };
  const regressed = (['p50', 'p95', 'p99'] as const).filter((q) => up(q) && noise[q] && (q !== 'p50' || ps > 0.5));
  const improved = (['p50', 'p95', 'p99'] as const).filter((q) => down(q) && fewer[q] && (q !== 'p50' || ps < 0.5));
  const significant = noise.p50 || noise.p95 || noise.p99 || fewer.p95 || fewer.p99;
  const verdict: EndpointComparison['verdict'] =
    regressed.length > 0 ? 'regression' : improved.length > 0 ? 'improvement' : significant ? 'beyond noise, within budget' : 'within noise';
  const round = (x: number | null) => (x === null ? null : Number(x.toPrecision(3)));
  return {
    ...base,
    change,
    pValue: Number(p.toPrecision(3)),
    probabilityOfSuperiority: Math.round(ps * 1000) / 1000,
    tailPValues: { p95: round(tail95?.up ?? null), p99: round(tail99?.up ?? null) },
    ...(regressed.length > 0 ? { regressed: [...regressed] } : {}),
    verdict,
  };
}

/**
 * Whether more (or fewer) samples after lie above the baseline's `q` percentile than before:
 * one-sided two-proportion z-tests (pooled, with continuity correction). Null when either run has
 * fewer than 5 expected samples beyond that percentile (too few to tell a tail).
 */
export function tailShift(before: number[], after: number[], q: number): { up: number; down: number } | null {
  const n1 = before.length;
  const n2 = after.length;
  if (n1 * (1 - q) < 5 || n2 * (1 - q) < 5) return null;
  const sorted = [...before].sort((x, y) => x - y);
  const cut = sorted[Math.min(n1 - 1, Math.ceil(q * n1) - 1)]!;
  const k1 = before.filter((v) => v > cut).length;
  const k2 = after.filter((v) => v > cut).length;
  const pooled = (k1 + k2) / (n1 + n2);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  if (se === 0) return { up: 1, down: 1 };
  const diff = k2 / n2 - k1 / n1;
  const cc = 0.5 * (1 / n1 + 1 / n2);
  return { up: 1 - normalCdf(Math.max(0, (diff - cc) / se)), down: 1 - normalCdf(Math.max(0, (-diff - cc) / se)) };
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
    `baseline comparison (${c.scenarioBefore} → ${c.scenarioAfter}); regression = p50, p95 or p99 up by more than ${(c.options.budget * 100).toFixed(0)}% and ${c.options.minMs} ms, and beyond noise at p < ${c.options.alpha} (p50: Mann-Whitney; p95, p99: the share of samples beyond the baseline's percentile)`,
  ];
  for (const e of c.endpoints) {
    if (!e.before || !e.after || !e.change) {
      lines.push(`  ${e.key.padEnd(36)} ${e.verdict}`);
      continue;
    }
    lines.push(
      `  ${e.key.padEnd(36)} p50 ${e.before.p50.toFixed(2)}→${e.after.p50.toFixed(2)} ms (${pct(e.change.p50)})  ` +
        `p95 ${e.before.p95.toFixed(2)}→${e.after.p95.toFixed(2)} (${pct(e.change.p95)})  p99 ${e.before.p99.toFixed(2)}→${e.after.p99.toFixed(2)} (${pct(e.change.p99)})  ` +
        `${e.before.rps.toFixed(1)}→${e.after.rps.toFixed(1)} req/s (${pct(e.change.rps)})  p=${e.pValue ?? '-'} tail p95 p=${e.tailPValues?.p95 ?? '-'} p99 p=${e.tailPValues?.p99 ?? '-'}  ${e.verdict}${e.regressed ? ` (${e.regressed.join(', ')})` : ''}`,
    );
  }
  lines.push(c.regressions.length === 0 ? 'no regression beyond the budget' : `REGRESSION: ${c.regressions.join(', ')}`);
  return lines.join('\n');
}
