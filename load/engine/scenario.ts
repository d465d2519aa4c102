import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type LoadModel =
  | { executor: 'constant-arrival-rate'; rate: number; timeUnit: string; duration: string; preAllocatedVUs: number; maxVUs: number }
  | { executor: 'constant-vus'; vus: number; duration: string };

/** load/scenarios/<name>.json: read by the k6 scripts (open()) and by the native engine. */
export interface Scenario {
  name: string;
  description: string;
  auth: 'basic' | 'hmac';
  pageSizes: number[];
  maxPages?: number;
  load: LoadModel;
  thresholds: Record<string, string[]>;
}

export const SCENARIO_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'scenarios');

export function scenarioNames(): string[] {
  return readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

export function loadScenario(name: string): Scenario {
  if (!scenarioNames().includes(name)) throw new Error(`unknown scenario "${name}"; known: ${scenarioNames().join(', ')}`);
  const s = JSON.parse(readFileSync(join(SCENARIO_DIR, `${name}.json`), 'utf8')) as Scenario;
  const problems = validateScenario(s);
  if (problems.length > 0) throw new Error(`scenario ${name}: ${problems.join('; ')}`);
  return s;
}

export function validateScenario(s: Scenario): string[] {
  const out: string[] = [];
  if (s.auth !== 'basic' && s.auth !== 'hmac') out.push('auth must be "basic" or "hmac"');
  if (!Array.isArray(s.pageSizes) || s.pageSizes.length === 0 || s.pageSizes.some((n) => !Number.isInteger(n) || n < 5 || n > 1000)) {
    out.push('pageSizes must be integers from 5 to 1000 (spec §4 rule 7)');
  }
  if (s.maxPages !== undefined && (!Number.isInteger(s.maxPages) || s.maxPages < 1)) out.push('maxPages must be a positive integer');
  try {
    parseDuration(s.load.duration);
  } catch (e) {
    out.push((e as Error).message);
  }
  if (s.load.executor === 'constant-arrival-rate') {
    if (!(s.load.rate > 0) || !(s.load.maxVUs >= 1)) out.push('rate and maxVUs must be positive');
  } else if (s.load.executor === 'constant-vus') {
    if (!(s.load.vus >= 1)) out.push('vus must be positive');
  } else out.push('executor must be constant-arrival-rate or constant-vus');
  for (const [metric, exprs] of Object.entries(s.thresholds ?? {})) {
    for (const e of exprs) {
      try {
        parseThreshold(metric, e);
      } catch (err) {
        out.push((err as Error).message);
      }
    }
  }
  return out;
}

/** k6 durations: "30s", "2m", "1m30s", "500ms". */
export function parseDuration(text: string): number {
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let ms = 0;
  let consumed = 0;
  for (const m of text.matchAll(re)) {
    ms += Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
    consumed += m[0].length;
  }
  if (consumed !== text.length || text.length === 0) throw new Error(`bad duration "${text}" (e.g. 30s, 2m, 1m30s)`);
  return ms;
}

export const METRICS = ['http_req_duration', 'http_req_failed', 'checks', 'dropped_iterations'] as const;
export type MetricName = (typeof METRICS)[number];

export interface Threshold {
  metric: MetricName;
  expr: string;
  stat: { kind: 'percentile'; p: number } | { kind: 'avg' | 'med' | 'min' | 'max' | 'rate' | 'count' };
  op: '<' | '<=' | '>' | '>=' | '==';
  value: number;
}

/** The k6 threshold syntax the scenarios use: `p(95)<2000`, `avg<100`, `rate<0.01`, `count<1`. */
export function parseThreshold(metric: string, expr: string): Threshold {
  if (!(METRICS as readonly string[]).includes(metric)) throw new Error(`threshold metric "${metric}" is not one of ${METRICS.join(', ')}`);
  const m = /^\s*(p\((\d+(?:\.\d+)?)\)|avg|med|min|max|rate|count)\s*(<=|>=|==|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/.exec(expr);
  if (!m) throw new Error(`bad threshold "${expr}" for ${metric} (e.g. p(95)<2000, rate<0.01)`);
  const stat = m[2] !== undefined ? { kind: 'percentile' as const, p: Number(m[2]) } : { kind: m[1] as 'avg' | 'med' | 'min' | 'max' | 'rate' | 'count' };
  return { metric: metric as MetricName, expr: expr.replace(/\s+/g, ''), stat, op: m[3] as Threshold['op'], value: Number(m[4]) };
}

export function holds(actual: number, op: Threshold['op'], value: number): boolean {
  switch (op) {
    case '<':
      return actual < value;
    case '<=':
      return actual <= value;
    case '>':
      return actual > value;
    case '>=':
      return actual >= value;
    case '==':
      return actual === value;
  }
}
