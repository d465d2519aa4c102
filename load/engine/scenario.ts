import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Ajv, type ErrorObject } from 'ajv';
import type { LoadModel, Scenario } from '../k6/lib/iterations.js';

export type { LoadModel, Scenario };

export const SCENARIO_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'scenarios');
export const SCENARIO_SCHEMA_FILE = join(SCENARIO_DIR, 'scenario.schema.json');

const validateShape = new Ajv({ strict: true, allErrors: true, verbose: true }).compile<Scenario>(JSON.parse(readFileSync(SCENARIO_SCHEMA_FILE, 'utf8')));

export function scenarioNames(): string[] {
  return readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith('.json') && !f.endsWith('.schema.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

/** A scenario of load/scenarios/ by name; an invalid file throws one line naming the file and each bad field. */
export function loadScenario(name: string): Scenario {
  if (!scenarioNames().includes(name)) throw new Error(`unknown scenario "${name}"; known: ${scenarioNames().join(', ')}`);
  return readScenarioFile(join(SCENARIO_DIR, `${name}.json`));
}

export function readScenarioFile(file: string): Scenario {
  const shown = relative(process.cwd(), file).startsWith('..') ? file : relative(process.cwd(), file);
  let s: unknown;
  try {
    s = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${shown}: not a JSON file (${(e as Error).message})`);
  }
  const problems = validateScenario(s);
  if (problems.length > 0) throw new Error(`${shown}: ${problems.join('; ')}`);
  return s as Scenario;
}

/** `/thresholds/checks/0/why` as `thresholds.checks[0].why`. */
function fieldName(pointer: string, child?: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  return parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** One schema error as a sentence naming the field; undefined for errors that only repeat another. */
function schemaProblem(e: ErrorObject): string | undefined {
  const at = fieldName(e.instancePath) || 'the scenario';
  const description = (e.parentSchema as { description?: string } | undefined)?.description;
  switch (e.keyword) {
    case 'if':
    case 'propertyNames':
      return undefined;
    case 'required':
      return `${fieldName(e.instancePath, String(e.params['missingProperty']))} is missing`;
    case 'additionalProperties':
      return `${fieldName(e.instancePath, String(e.params['additionalProperty']))} is not a field the schema knows`;
    case 'enum': {
      const allowed = (e.params['allowedValues'] as unknown[]).join(', ');
      if (e.propertyName !== undefined) return `${fieldName(e.instancePath, e.propertyName)} is not one of ${allowed}`;
      return `${at} is ${JSON.stringify(e.data)}, not one of ${allowed}`;
    }
    case 'pattern':
      return `${at} is ${JSON.stringify(e.data)}, not ${description ?? `of the form ${String(e.params['pattern'])}`}`;
    default:
      return `${at} ${e.message ?? 'is invalid'}${e.instancePath === '' ? '' : ` (it is ${JSON.stringify(e.data)})`}`;
  }
}

/** The schema (load/scenarios/scenario.schema.json), then what a schema cannot say: durations and thresholds parse. */
export function validateScenario(s: unknown): string[] {
  if (!validateShape(s)) return [...new Set((validateShape.errors ?? []).map(schemaProblem).filter((p) => p !== undefined))];
  const out: string[] = [];
  try {
    parseDuration(s.load.duration);
  } catch (e) {
    out.push(`load.duration: ${(e as Error).message}`);
  }
  for (const [metric, specs] of Object.entries(s.thresholds)) {
    specs.forEach((t, i) => {
      try {
        parseThreshold(metric, t.threshold);
      } catch (err) {
        out.push(`thresholds.${metric}[${i}].threshold: ${(err as Error).message}`);
      }
    });
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
