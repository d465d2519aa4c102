import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Ajv, type ErrorObject } from 'ajv';
import { endpoints, type LoadModel, type Scenario, type Stage } from '../k6/lib/iterations.js';

export type { LoadModel, Scenario, Stage };

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
      if (e.propertyName !== undefined) return `${fieldName(e.instancePath, e.propertyName)} is not ${description ?? 'a known name'}`;
      return `${at} is ${JSON.stringify(e.data)}, not ${description ?? `of the form ${String(e.params['pattern'])}`}`;
    default:
      return `${at} ${e.message ?? 'is invalid'}${e.instancePath === '' ? '' : ` (it is ${JSON.stringify(e.data)})`}`;
  }
}

/** The schema (load/scenarios/scenario.schema.json), then what a schema cannot say: durations and thresholds parse. */
export function validateScenario(s: unknown): string[] {
  if (!validateShape(s)) return [...new Set((validateShape.errors ?? []).map(schemaProblem).filter((p) => p !== undefined))];
  const out: string[] = [];
  const load = s.load;
  const durations: Array<[string, string]> =
    'stages' in load ? load.stages.map((st, i): [string, string] => [`load.stages[${i}].duration`, st.duration]) : [['load.duration', load.duration]];
  for (const [field, text] of durations) {
    try {
      parseDuration(text);
    } catch (e) {
      out.push(`${field}: ${(e as Error).message}`);
    }
  }
  for (const [metric, specs] of Object.entries(s.thresholds)) {
    specs.forEach((t, i) => {
      try {
        if (!selectsSome(s, parseThreshold(metric, t.threshold))) out.push(`thresholds.${metric}: selects none of the scenario's requests`);
      } catch (err) {
        out.push(`thresholds.${metric}[${i}].threshold: ${(err as Error).message}`);
      }
    });
  }
  return [...new Set(out)];
}

/** How long a load model runs: its duration, or its stages' together. */
export function modelDurationMs(load: LoadModel): number {
  return 'stages' in load ? load.stages.reduce((sum, st) => sum + parseDuration(st.duration), 0) : parseDuration(load.duration);
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
/** The metrics a threshold may narrow to requests by tag, and the tags: those both engines put on every request. */
export const TAGGED_METRICS: readonly MetricName[] = ['http_req_duration', 'http_req_failed'];
export const REQUEST_TAGS = ['method', 'name', 'page_size'] as const;
export type RequestTags = Partial<Record<(typeof REQUEST_TAGS)[number], string>>;

export interface Threshold {
  metric: MetricName;
  /** k6's submetric selector, `{name:passwords/count,page_size:5}`: only the requests with these tags */
  tags?: RequestTags;
  /** the metric as written: `http_req_duration` or `http_req_duration{name:passwords/count}` */
  key: string;
  expr: string;
  stat: { kind: 'percentile'; p: number } | { kind: 'avg' | 'med' | 'min' | 'max' | 'rate' | 'count' };
  op: '<' | '<=' | '>' | '>=' | '==';
  value: number;
}

/**
 * The k6 threshold syntax the scenarios use: `p(95)<2000`, `avg<100`, `rate<0.01`, `count<1`, on
 * a metric or on its requests with given tags as k6 writes a submetric:
 * `http_req_duration{name:passwords/count,page_size:5}` (k6: the text between the first `{` and
 * the last `}`, pairs split at `,`, each at its first `:`).
 */
export function parseThreshold(key: string, expr: string): Threshold {
  const open = key.indexOf('{');
  const metric = open < 0 ? key : key.slice(0, open);
  if (!(METRICS as readonly string[]).includes(metric)) throw new Error(`threshold metric "${metric}" is not one of ${METRICS.join(', ')}`);
  let tags: RequestTags | undefined;
  if (open >= 0) {
    if (!(TAGGED_METRICS as readonly string[]).includes(metric)) throw new Error(`${metric} takes no tags: only ${TAGGED_METRICS.join(' and ')} do`);
    if (!key.endsWith('}') || key.length === open + 2) throw new Error(`bad selector "${key}" (e.g. http_req_duration{name:passwords/count,page_size:5})`);
    tags = {};
    for (const pair of key.slice(open + 1, -1).split(',')) {
      const colon = pair.indexOf(':');
      const tag = pair.slice(0, colon).trim();
      if (colon < 1 || !(REQUEST_TAGS as readonly string[]).includes(tag) || pair.slice(colon + 1).trim() === '')
        throw new Error(`bad tag "${pair}" in "${key}": one of ${REQUEST_TAGS.join(', ')}, then ":" and a value`);
      tags[tag as keyof RequestTags] = pair.slice(colon + 1).trim();
    }
  }
  const m = /^\s*(p\((\d+(?:\.\d+)?)\)|avg|med|min|max|rate|count)\s*(<=|>=|==|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/.exec(expr);
  if (!m) throw new Error(`bad threshold "${expr}" for ${metric} (e.g. p(95)<2000, rate<0.01)`);
  const stat = m[2] !== undefined ? { kind: 'percentile' as const, p: Number(m[2]) } : { kind: m[1] as 'avg' | 'med' | 'min' | 'max' | 'rate' | 'count' };
  return {
    metric: metric as MetricName,
    ...(tags ? { tags } : {}),
    key,
    expr: expr.replace(/\s+/g, ''),
    stat,
    op: m[3] as Threshold['op'],
    value: Number(m[4]),
  };
}

/** Whether the threshold's tags, if it has any, select one of the requests the scenario sends: else it would hold on no data at all. */
export function selectsSome(scenario: Scenario, t: Threshold): boolean {
  return t.tags === undefined || endpoints(scenario).some((g) => selects(t.tags!, g));
}

/** Whether a request of this method, name and page size carries every tag of the selector. */
export function selects(tags: RequestTags, e: { method: string; name: string; pageSize: number | undefined | null }): boolean {
  if (tags.method !== undefined && tags.method !== e.method) return false;
  if (tags.name !== undefined && tags.name !== e.name) return false;
  if (tags.page_size !== undefined && (e.pageSize === undefined || e.pageSize === null || tags.page_size !== String(e.pageSize))) return false;
  return true;
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
