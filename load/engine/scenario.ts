import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Ajv, type ErrorObject } from 'ajv';
import type { LoadModel, Scenario } from '../k6/lib/iterations.js';

export type { LoadModel, Scenario };

export const SCENARIO_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'scenarios');
export const SCENARIO_SCHEMA_FILE = join(SCENARIO_DIR, 'scenario.schema.json');

const validateShape = new Ajv({ strict: true, allErrors: true }).compile<Scenario>(JSON.parse(readFileSync(SCENARIO_SCHEMA_FILE, 'utf8')));

export function scenarioNames(): string[] {
  return readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith('.json') && !f.endsWith('.schema.json'))
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

function schemaProblem(e: ErrorObject): string {
  return `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${e.keyword === 'enum' || e.keyword === 'const' ? ` (${JSON.stringify(e.params)})` : ''}`;
}

/** The schema (load/scenarios/scenario.schema.json), then what a schema cannot say: durations and thresholds parse. */
export function validateScenario(s: unknown): string[] {
  if (!validateShape(s)) return (validateShape.errors ?? []).map(schemaProblem);
  const out: string[] = [];
  try {
    parseDuration(s.load.duration);
  } catch (e) {
    out.push((e as Error).message);
  }
  for (const [metric, specs] of Object.entries(s.thresholds)) {
    for (const t of specs) {
      try {
        parseThreshold(metric, t.threshold);
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
