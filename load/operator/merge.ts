// `pmv6 load merge FILE…`: the summaries of the k6 instances of one split test (the JSON line each
// runner prints, load/k6/lib/summary.js, or its summary file) merged into one verdict. Sums are
// exact; a trend's percentiles and averages cannot be merged from summaries and are bounded by
// the instances' values instead (README.md beside this file).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** The marker of a summary record (load/k6/lib/summary.js, SUMMARY_MARK). */
const MARK = 'k6-summary';
/** The most read of one input file: a runner's whole log. */
const MAX_INPUT_BYTES = 64 * 1024 * 1024;

export const MERGE_EXIT = { held: 0, failed: 1, usage: 2 } as const;

interface K6Metric {
  type: 'counter' | 'gauge' | 'rate' | 'trend';
  values: Record<string, number>;
  thresholds?: Record<string, { ok: boolean }>;
}

/** One instance's record, as load/k6/lib/summary.js writes it. */
export interface InstanceSummary {
  pmv6: typeof MARK;
  scenario: string;
  id: string;
  instance: string;
  segment: string;
  sequence: string;
  state?: { testRunDurationMs?: number };
  metrics: Record<string, K6Metric>;
  root_group?: K6Group;
}

interface K6Group {
  checks?: Array<{ name: string; path?: string; passes: number; fails: number }>;
  groups?: K6Group[];
}

/** Every check of a group and its subgroups, named by its path below the root (`::name` → `name`). */
function checksOf(g: K6Group | undefined, out: Array<{ name: string; passes: number; fails: number }> = []) {
  for (const c of g?.checks ?? []) out.push({ name: (c.path ?? c.name).replace(/^::/, ''), passes: c.passes, fails: c.fails });
  for (const sub of g?.groups ?? []) checksOf(sub, out);
  return out;
}

/** How a merged value was obtained. */
export type Basis = 'sum' | 'exact' | 'worst instance' | 'bounded';

export interface MergedThreshold {
  metric: string;
  expr: string;
  ok: boolean;
  /** the merged value judged, or for a trend's percentile the range of the instances' values */
  value: number | { best: number; worst: number };
  basis: Basis;
  note?: string;
}

export interface MergedVerdict {
  scenario: string;
  instances: string[];
  metrics: Record<string, { type: K6Metric['type']; values: Record<string, number>; basis: Record<string, Basis> }>;
  checks: Array<{ name: string; passes: number; fails: number }>;
  thresholds: MergedThreshold[];
  ok: boolean;
}

export class MergeInputError extends Error {}

/** Every record in one input: a whole JSON file, or the marked lines of a log. */
export function parseInstances(text: string, source: string): InstanceSummary[] {
  const trimmed = text.trim();
  const found: InstanceSummary[] = [];
  const take = (v: unknown) => {
    if (v && typeof v === 'object' && (v as { pmv6?: unknown }).pmv6 === MARK && typeof (v as { metrics?: unknown }).metrics === 'object') {
      found.push(v as InstanceSummary);
    }
  };
  if (trimmed.startsWith('{')) {
    try {
      take(JSON.parse(trimmed));
    } catch {
      // not one JSON document: a log, read line by line below
    }
  }
  if (found.length === 0) {
    for (const line of text.split('\n')) {
      const l = line.trim();
      // kubectl logs --prefix puts "[pod/…] " before each line
      const at = l.indexOf(`{"pmv6":"${MARK}"`);
      if (at < 0) continue;
      try {
        take(JSON.parse(l.slice(at)));
      } catch {
        throw new MergeInputError(`${source}: a summary line that is not whole JSON (a truncated log?)`);
      }
    }
  }
  if (found.length === 0) throw new MergeInputError(`${source}: no pmv6 k6 summary (neither a summary file nor a log with its JSON line)`);
  return found;
}

/** "a/b", a decimal, "0" or "1" as a fraction [num, den]. */
function fraction(s: string): [number, number] {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(s);
  if (m) return [Number(m[1]), Number(m[2])];
  const d = /^\s*(\d+(?:\.\d+)?)\s*$/.exec(s);
  if (d) {
    const places = (d[1]!.split('.')[1] ?? '').length;
    return [Math.round(Number(d[1]) * 10 ** places), 10 ** places];
  }
  throw new MergeInputError(`cannot read the execution segment bound "${s}"`);
}

const cmp = (a: [number, number], b: [number, number]) => a[0] * b[1] - b[0] * a[1];

/** The instances are one test, each once, and their segments cover it whole: a lost runner is not a smaller test. */
function checkInstances(all: InstanceSummary[]): void {
  const scenarios = [...new Set(all.map((s) => s.scenario))];
  if (scenarios.length !== 1) throw new MergeInputError(`the summaries are of different scenarios: ${scenarios.join(', ')}`);
  const ids = all.map((s) => s.id || 'all');
  const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
  if (twice.length > 0) throw new MergeInputError(`instance ${twice[0]} is given twice`);
  const segmented = all.filter((s) => s.segment !== '');
  if (segmented.length === 0) {
    if (all.length > 1) throw new MergeInputError(`${all.length} summaries without execution segments: not one split test`);
    return;
  }
  if (segmented.length !== all.length) throw new MergeInputError('some summaries have an execution segment and some do not');
  const sequences = new Set(all.map((s) => s.sequence));
  if (sequences.size !== 1) throw new MergeInputError('the instances ran with different --execution-segment-sequence');
  const parts = all
    .map((s) => {
      const [from, to] = s.segment.split(':');
      if (from === undefined || to === undefined) throw new MergeInputError(`cannot read the execution segment "${s.segment}"`);
      return { id: s.id, from: fraction(from), to: fraction(to) };
    })
    .sort((a, b) => cmp(a.from, b.from));
  let at: [number, number] = [0, 1];
  for (const p of parts) {
    if (cmp(p.from, at) > 0) throw new MergeInputError(`no summary for the segment ${at.join('/')}:${p.from.join('/')}: an instance is missing`);
    if (cmp(p.from, at) < 0) throw new MergeInputError(`the segment of ${p.id} overlaps another instance's`);
    at = p.to;
  }
  if (cmp(at, [1, 1]) !== 0) throw new MergeInputError(`no summary for the segment ${at.join('/')}:1: an instance is missing`);
}

/** A k6 threshold expression: aggregation, operator, bound. */
function parseThreshold(expr: string): { stat: string; op: string; bound: number } | undefined {
  const m = /^\s*([a-z]+(?:\(\d+(?:\.\d+)?\))?)\s*(<=|>=|===|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/.exec(expr);
  return m ? { stat: m[1]!, op: m[2]!, bound: Number(m[3]) } : undefined;
}

function holds(value: number, op: string, bound: number): boolean {
  switch (op) {
    case '<':
      return value < bound;
    case '<=':
      return value <= bound;
    case '>':
      return value > bound;
    case '>=':
      return value >= bound;
    case '!=':
      return value !== bound;
    default:
      return value === bound;
  }
}

/** The merged verdict of one split test's instances. */
export function mergeSummaries(all: InstanceSummary[]): MergedVerdict {
  if (all.length === 0) throw new MergeInputError('no summaries to merge');
  checkInstances(all);
  // The instances run side by side: a counter's rate is its summed count over the longest run.
  const seconds = Math.max(...all.map((s) => (s.state?.testRunDurationMs ?? 0) / 1000));
  const metrics: MergedVerdict['metrics'] = {};
  const names = [...new Set(all.flatMap((s) => Object.keys(s.metrics)))].sort();
  for (const name of names) {
    const parts = all.map((s) => s.metrics[name]).filter((m): m is K6Metric => m !== undefined);
    const type = parts[0]!.type;
    const values: Record<string, number> = {};
    const basis: Record<string, Basis> = {};
    const sum = (k: string) => parts.reduce((a, m) => a + (m.values[k] ?? 0), 0);
    if (type === 'counter') {
      values['count'] = sum('count');
      values['rate'] = seconds > 0 ? values['count'] / seconds : 0;
      basis['count'] = 'sum';
      basis['rate'] = 'sum';
    } else if (type === 'rate') {
      values['passes'] = sum('passes');
      values['fails'] = sum('fails');
      const n = values['passes'] + values['fails'];
      values['rate'] = n > 0 ? values['passes'] / n : 0;
      for (const k of ['passes', 'fails', 'rate']) basis[k] = 'sum';
    } else if (type === 'gauge') {
      for (const k of ['value', 'min', 'max']) {
        values[k] = sum(k);
        basis[k] = 'sum';
      }
    } else {
      for (const k of Object.keys(parts[0]!.values)) {
        const each = parts.map((m) => m.values[k]).filter((v): v is number => typeof v === 'number');
        if (k === 'min') {
          values[k] = Math.min(...each);
          basis[k] = 'exact';
        } else if (k === 'max') {
          values[k] = Math.max(...each);
          basis[k] = 'exact';
        } else {
          values[k] = Math.max(...each);
          basis[k] = 'worst instance';
        }
      }
    }
    metrics[name] = { type, values, basis };
  }

  const thresholds: MergedThreshold[] = [];
  for (const name of names) {
    const exprs = [...new Set(all.flatMap((s) => Object.keys(s.metrics[name]?.thresholds ?? {})))];
    for (const expr of exprs) {
      const m = metrics[name]!;
      const t = parseThreshold(expr);
      const each = all.map((s) => s.metrics[name]?.thresholds?.[expr]?.ok).filter((v): v is boolean => v !== undefined);
      if (!t || m.values[t.stat] === undefined) {
        // not an aggregation we can recompute: it holds only where every instance held it
        thresholds.push({ metric: name, expr, ok: each.every(Boolean), value: Number.NaN, basis: 'worst instance', note: 'as each instance judged it' });
        continue;
      }
      if (m.type !== 'trend' || t.stat === 'min' || t.stat === 'max') {
        const v = m.values[t.stat]!;
        thresholds.push({ metric: name, expr, ok: holds(v, t.op, t.bound), value: v, basis: m.basis[t.stat]! });
        continue;
      }
      // A pooled average or percentile lies between the instances' lowest and highest value: the
      // threshold holds when it holds at the unfavourable end, fails when it fails at the
      // favourable end, and is otherwise undecided from summaries: judged failed.
      const each2 = all.map((s) => s.metrics[name]?.values[t.stat]).filter((v): v is number => typeof v === 'number');
      const lo = Math.min(...each2);
      const hi = Math.max(...each2);
      const upper = t.op === '<' || t.op === '<=';
      const [bad, good] = upper ? [hi, lo] : [lo, hi];
      const ok = holds(bad, t.op, t.bound);
      const decided = ok || !holds(good, t.op, t.bound);
      thresholds.push({
        metric: name,
        expr,
        ok,
        value: { best: good, worst: bad },
        basis: 'bounded',
        ...(decided ? {} : { note: 'undecided from summaries (held on some instances only): judged failed' }),
      });
    }
  }

  const checks = new Map<string, { name: string; passes: number; fails: number }>();
  for (const s of all) {
    for (const c of checksOf(s.root_group)) {
      const acc = checks.get(c.name) ?? { name: c.name, passes: 0, fails: 0 };
      acc.passes += c.passes;
      acc.fails += c.fails;
      checks.set(c.name, acc);
    }
  }
  return {
    scenario: all[0]!.scenario,
    instances: all.map((s) => (s.segment ? `${s.id || 'all'} (${s.segment})` : s.id || 'all')),
    metrics,
    checks: [...checks.values()],
    thresholds,
    ok: thresholds.every((t) => t.ok),
  };
}

function show(v: MergedThreshold['value']): string {
  if (typeof v === 'number') return Number.isNaN(v) ? '' : String(Math.round(v * 10000) / 10000);
  return `instances ${Math.round(v.best * 100) / 100}…${Math.round(v.worst * 100) / 100}`;
}

/** The verdict as text: the instances, one line per threshold (value and how it was merged), failed checks. */
export function formatVerdict(v: MergedVerdict): string {
  const lines = [`${v.scenario}: ${v.instances.length} instance(s): ${v.instances.join(', ')}`];
  for (const t of v.thresholds) {
    if (/^http_reqs\{/.test(t.metric) && t.expr === 'count>=0') continue;
    lines.push(`${t.ok ? 'ok   ' : 'FAIL '}${t.metric} ${t.expr}  (${show(t.value)}; ${t.basis}${t.note ? `; ${t.note}` : ''})`);
  }
  for (const c of v.checks) if (c.fails > 0) lines.push(`check failed ${c.fails} of ${c.passes + c.fails}: ${c.name}`);
  lines.push(v.ok ? 'verdict: every threshold held on the merged instances' : 'verdict: a threshold failed on the merged instances');
  return `${lines.join('\n')}\n`;
}

const USAGE = `usage: pmv6 load merge FILE… [--out merged.json]
Merges the summaries of the k6 instances of one split test (each runner's log with its summary
JSON line, e.g. \`kubectl logs job/pmv6-large-pages-1 > 1.log\`, or its summary-*.json file) into
one verdict. Exit 0 every threshold held, 1 one failed, 2 bad input (a missing or repeated
instance, different scenarios, no summary in a file).
`;

/** The command: exit 0 held, 1 failed, 2 bad input. */
export async function mergeCommand(argv: string[], out: (s: string) => void = (s) => process.stdout.write(s)): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: { out: { type: 'string' }; help: { type: 'boolean'; short: 'h' } }; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: { out: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true });
  } catch (e) {
    process.stderr.write(`pmv6 load merge: ${(e as Error).message}\n${USAGE}`);
    return MERGE_EXIT.usage;
  }
  if (parsed.values.help) {
    out(USAGE);
    return MERGE_EXIT.held;
  }
  if (parsed.positionals.length === 0) {
    process.stderr.write(`pmv6 load merge: no summaries given\n${USAGE}`);
    return MERGE_EXIT.usage;
  }
  try {
    const all: InstanceSummary[] = [];
    for (const file of parsed.positionals) {
      let text: string;
      try {
        const buf = readFileSync(file);
        if (buf.length > MAX_INPUT_BYTES) throw new MergeInputError(`${file}: larger than ${MAX_INPUT_BYTES} bytes`);
        text = buf.toString('utf8');
      } catch (e) {
        if (e instanceof MergeInputError) throw e;
        throw new MergeInputError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
      all.push(...parseInstances(text, file));
    }
    const verdict = mergeSummaries(all);
    out(formatVerdict(verdict));
    if (parsed.values.out) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(parsed.values.out, `${JSON.stringify(verdict, null, 2)}\n`);
    }
    return verdict.ok ? MERGE_EXIT.held : MERGE_EXIT.failed;
  } catch (e) {
    if (e instanceof MergeInputError) {
      process.stderr.write(`pmv6 load merge: ${e.message}\n`);
      return MERGE_EXIT.usage;
    }
    throw e;
  }
}
