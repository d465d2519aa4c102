/**
 * The other half of the kill matrix: every lawful variant of the reference server
 * (fixtures/variants/) against the whole suite with the response oracle. A variant makes one
 * choice the spec leaves open; it passes only when the run is CONFORMANT under --strict
 * semantics (no failed clause, no warned clause, no inconclusive one).
 *
 * Decision (runtime): unlike a mutant, a variant can trip any check, so each runs every
 * conformance file (about 10 s here). Variants run in `jobs` child processes (default 2), each
 * taking the next variant from the queue, one at a time, since suites change server-wide settings.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { OUTCOMES, type Outcome } from '../../core/outcomes.ts';
import type { Variant } from '../../fixtures/variants/variant.ts';
import { CHILD_EXEC_ARGV, onDisk, PACKAGE_ROOT } from './layout.ts';
import type { RunResult } from './run-suites.ts';
import { type VerdictLabel, verdictOf } from './verdict.ts';

export interface VariantResult {
  id: string;
  /** The run's verdict under --strict: a lawful variant must be CONFORMANT. */
  label: VerdictLabel | 'ERROR';
  quiet: boolean;
  /** Clauses that failed, warned or were inconclusive, with the first test's message. */
  alarms: Array<{ id: string; outcome: Outcome; message: string }>;
  harnessErrors: string[];
  durationMs: number;
}

export interface VariantMatrixResult {
  results: VariantResult[];
  quiet: number;
  total: number;
  durationMs: number;
  jobs: number;
}

/** What a run on a variant raised: every clause that did not hold or was not judged for a reason on our side. */
export function summariseVariant(variant: Pick<Variant, 'id'>, result: RunResult): VariantResult {
  const verdict = verdictOf(result, true);
  const alarms = result.clauses
    .filter((c) => c.outcome === 'fail' || c.outcome === 'warn' || OUTCOMES[c.outcome].verdict === 'inconclusive')
    .map((c) => {
      const test = c.tests.find((t) => t.outcome === c.outcome);
      const message = (test?.failure?.message ?? test?.note ?? c.note ?? '').split('\n')[0] ?? '';
      return { id: c.clause.id, outcome: c.outcome, message: `${test ? `${test.title}: ` : ''}${message}`.slice(0, 400) };
    });
  return {
    id: variant.id,
    label: verdict.label,
    quiet: verdict.label === 'CONFORMANT',
    alarms,
    harnessErrors: result.harnessErrors,
    durationMs: result.durationMs,
  };
}

const WORKER = fileURLToPath(new URL(onDisk('./mutant-worker.ts'), import.meta.url));

function childEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'NODE_OPTIONS' && k !== 'TEST'));
}

function errored(id: string, message: string): VariantResult {
  return { id, label: 'ERROR', quiet: false, alarms: [], harnessErrors: [message], durationMs: 0 };
}

/**
 * Sets of variants to apply together, one of each area per set: every variant once, in as few
 * runs as the largest area has variants. Choices of different areas do not touch each other's
 * part of a reply, and a conformant server may make them all at once. `npm test` runs these; an
 * alarm on a set is pinned on its variant by `pmv6 variants --only`.
 */
export function variantSets(variants: readonly Variant[]): Variant[][] {
  const byArea = new Map<string, Variant[]>();
  for (const v of variants) byArea.set(v.area, [...(byArea.get(v.area) ?? []), v]);
  const n = Math.max(0, ...[...byArea.values()].map((a) => a.length));
  return Array.from({ length: n }, (_, i) => [...byArea.values()].flatMap((a) => (a[i] ? [a[i]] : [])));
}

/**
 * Runs each run's variants (one variant, or a set applied together: variantSets) in `jobs` child
 * processes; `onResult` sees each result as it arrives. A set's result is named "a+b+c".
 */
export async function runVariants(
  runs: ReadonlyArray<Variant | readonly Variant[]>,
  options: { jobs?: number; concurrency?: number; onResult?: (r: VariantResult, done: number, total: number) => void } = {},
): Promise<VariantMatrixResult> {
  const started = Date.now();
  const variants = runs.map((r) => {
    const set: readonly Variant[] = Array.isArray(r) ? r : [r as Variant];
    return { id: set.map((v) => v.id).join('+'), ids: set.map((v) => v.id) };
  });
  const jobs = Math.max(1, Math.min(options.jobs ?? 2, variants.length || 1));
  const queue = [...variants];
  const results: VariantResult[] = [];
  const push = (r: VariantResult) => {
    results.push(r);
    options.onResult?.(r, results.length, variants.length);
  };
  const worker = () =>
    new Promise<void>((resolve, reject) => {
      const child = fork(WORKER, [], { execArgv: [...CHILD_EXEC_ARGV], cwd: PACKAGE_ROOT, env: childEnv(), stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
      let stderr = '';
      let current: { id: string; ids: string[] } | undefined;
      child.stderr?.on('data', (d: Buffer) => {
        stderr = (stderr + d.toString('utf8')).slice(-4000);
      });
      const next = () => {
        current = queue.shift();
        if (current) child.send({ variants: current.ids, concurrency: options.concurrency });
        else child.send({ done: true });
      };
      child.on('message', (msg: { variantResult?: VariantResult; error?: string }) => {
        push(msg.variantResult ?? errored(current!.id, msg.error ?? 'the worker gave no result'));
        next();
      });
      child.on('error', reject);
      child.on('exit', (code) => {
        if (current && !results.some((r) => r.id === current!.id)) {
          push(errored(current.id, `worker exited with code ${code}: ${stderr.trim().split('\n').slice(-5).join(' | ')}`));
          current = undefined;
          if (queue.length > 0) worker().then(resolve, reject);
          else resolve();
          return;
        }
        resolve();
      });
      next();
    });
  await Promise.all(Array.from({ length: jobs }, () => worker()));
  const order = new Map(variants.map((v, i) => [v.id, i]));
  results.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  return { results, quiet: results.filter((r) => r.quiet).length, total: variants.length, durationMs: Date.now() - started, jobs };
}

/** The matrix as text: one line per variant, then each alarm it raised. */
export function variantMatrixText(m: VariantMatrixResult): string {
  const width = Math.max(7, ...m.results.map((r) => r.id.length));
  const lines = [`${'variant'.padEnd(width)}  verdict         alarms`];
  for (const r of m.results) {
    lines.push(`${r.id.padEnd(width)}  ${r.label.padEnd(15)} ${r.alarms.map((a) => `${a.id}(${a.outcome})`).join(' ') || '-'}`);
    if (!r.quiet) {
      for (const a of r.alarms.slice(0, 6)) lines.push(`${''.padEnd(width)}  ! ${a.id} ${a.outcome}: ${a.message.slice(0, 300)}`);
      for (const e of r.harnessErrors.slice(0, 3)) lines.push(`${''.padEnd(width)}  ! ${e.slice(0, 300)}`);
    }
  }
  lines.push('');
  lines.push(`score ${m.quiet}/${m.total} lawful variants conformant under --strict; ${(m.durationMs / 1000).toFixed(1)} s with ${m.jobs} job(s)`);
  return `${lines.join('\n')}\n`;
}
