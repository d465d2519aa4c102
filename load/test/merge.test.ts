// pmv6 load merge on made-up instance summaries: sums and rates from sums, a trend's thresholds
// judged within the instances' bounds, a missing, repeated or foreign instance refused (exit 2),
// logs read as the runners print them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type InstanceSummary, MERGE_EXIT, MergeInputError, mergeCommand, mergeSummaries, parseInstances } from '../operator/merge.ts';

const dir = mkdtempSync(join(tmpdir(), 'pmv6-merge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function instance(
  n: number,
  of: number,
  o: { p95: number; p95ok: boolean; failed: number; reqs: number; dropped?: number; seconds?: number },
): InstanceSummary {
  const bound = (i: number) => (i === 0 ? '0' : i === of ? '1' : `${i}/${of}`);
  return {
    pmv6: 'k6-summary',
    scenario: 'mixed',
    id: `instance-${n}`,
    instance: String(n),
    segment: `${bound(n - 1)}:${bound(n)}`,
    sequence: Array.from({ length: of + 1 }, (_, i) => bound(i)).join(','),
    state: { testRunDurationMs: (o.seconds ?? 10) * 1000 },
    metrics: {
      http_reqs: { type: 'counter', values: { count: o.reqs, rate: o.reqs / 10 } },
      dropped_iterations: {
        type: 'counter',
        values: { count: o.dropped ?? 0, rate: (o.dropped ?? 0) / 10 },
        thresholds: { 'rate<0.1': { ok: (o.dropped ?? 0) / 10 < 0.1 } },
      },
      http_req_failed: {
        type: 'rate',
        values: { passes: o.failed, fails: o.reqs - o.failed, rate: o.failed / o.reqs },
        thresholds: { 'rate<0.01': { ok: o.failed / o.reqs < 0.01 } },
      },
      http_req_duration: {
        type: 'trend',
        values: { avg: o.p95 / 3, min: 1, med: o.p95 / 4, 'p(95)': o.p95, max: o.p95 * 2 },
        thresholds: { 'p(95)<500': { ok: o.p95ok } },
      },
    },
    root_group: { checks: [{ name: 'create project: 201 with an integer id', passes: o.reqs - o.failed, fails: o.failed }] },
  };
}

const t = (v: ReturnType<typeof mergeSummaries>, metric: string, expr: string) => v.thresholds.find((x) => x.metric === metric && x.expr === expr)!;

describe('mergeSummaries', () => {
  it('sums counts, recomputes rates from the sums, and re-judges them: one instance over the bound, the whole test under it', () => {
    // 2.5% of 1000 and 0.15% of 2000 failed: merged 28 of 3000, 0.93%
    const v = mergeSummaries([
      instance(1, 2, { p95: 100, p95ok: true, failed: 25, reqs: 1000 }),
      instance(2, 2, { p95: 120, p95ok: true, failed: 3, reqs: 2000 }),
    ]);
    expect(v.metrics['http_reqs']!.values['count']).toBe(3000);
    expect(v.metrics['http_req_failed']!.values['rate']).toBeCloseTo(28 / 3000, 10);
    expect(t(v, 'http_req_failed', 'rate<0.01')).toMatchObject({ ok: true, basis: 'sum' });
    expect(v.checks[0]).toEqual({ name: 'create project: 201 with an integer id', passes: 2972, fails: 28 });
    expect(v.ok).toBe(true);
    const worse = mergeSummaries([
      instance(1, 2, { p95: 100, p95ok: true, failed: 25, reqs: 1000 }),
      instance(2, 2, { p95: 120, p95ok: true, failed: 19, reqs: 2000 }),
    ]);
    expect(t(worse, 'http_req_failed', 'rate<0.01').ok).toBe(false);
    expect(worse.ok).toBe(false);
  });

  it("a counter's rate is the summed count over the longest instance: two instances each under the dropped bound, over it together", () => {
    const v = mergeSummaries([
      instance(1, 2, { p95: 100, p95ok: true, failed: 0, reqs: 100, dropped: 0.6 * 10 }),
      instance(2, 2, { p95: 100, p95ok: true, failed: 0, reqs: 100, dropped: 0.6 * 10, seconds: 9 }),
    ]);
    expect(v.metrics['dropped_iterations']!.values['rate']).toBeCloseTo(12 / 10, 10);
    expect(t(v, 'dropped_iterations', 'rate<0.1').ok).toBe(false);
  });

  it('a percentile threshold holds when the worst instance holds it, fails when the best fails it, else is undecided and judged failed', () => {
    const held = mergeSummaries([
      instance(1, 2, { p95: 300, p95ok: true, failed: 0, reqs: 10 }),
      instance(2, 2, { p95: 450, p95ok: true, failed: 0, reqs: 10 }),
    ]);
    expect(t(held, 'http_req_duration', 'p(95)<500')).toMatchObject({ ok: true, basis: 'bounded', value: { best: 300, worst: 450 } });
    expect(held.metrics['http_req_duration']!.values['max']).toBe(900);
    expect(held.metrics['http_req_duration']!.basis['p(95)']).toBe('worst instance');
    expect(held.ok).toBe(true);
    const failed = mergeSummaries([
      instance(1, 2, { p95: 600, p95ok: false, failed: 0, reqs: 10 }),
      instance(2, 2, { p95: 700, p95ok: false, failed: 0, reqs: 10 }),
    ]);
    expect(t(failed, 'http_req_duration', 'p(95)<500')).toMatchObject({ ok: false });
    expect(t(failed, 'http_req_duration', 'p(95)<500').note).toBeUndefined();
    const undecided = mergeSummaries([
      instance(1, 2, { p95: 300, p95ok: true, failed: 0, reqs: 10 }),
      instance(2, 2, { p95: 700, p95ok: false, failed: 0, reqs: 10 }),
    ]);
    expect(t(undecided, 'http_req_duration', 'p(95)<500')).toMatchObject({ ok: false });
    expect(t(undecided, 'http_req_duration', 'p(95)<500').note).toMatch(/undecided/);
  });

  it('refuses a missing instance, a repeated one, overlapping segments and mixed scenarios', () => {
    const a = instance(1, 3, { p95: 1, p95ok: true, failed: 0, reqs: 1 });
    const b = instance(2, 3, { p95: 1, p95ok: true, failed: 0, reqs: 1 });
    const c = instance(3, 3, { p95: 1, p95ok: true, failed: 0, reqs: 1 });
    expect(() => mergeSummaries([a, c])).toThrow(/segment 1\/3:2\/3: an instance is missing/);
    expect(() => mergeSummaries([a, b])).toThrow(/2\/3:1: an instance is missing/);
    expect(() => mergeSummaries([a, b, c, a])).toThrow(/given twice/);
    expect(() => mergeSummaries([a, { ...b, id: 'instance-9', segment: '0:2/3' }, c])).toThrow(/overlaps/);
    expect(() => mergeSummaries([a, { ...b, scenario: 'hmac' }, c])).toThrow(MergeInputError);
    expect(mergeSummaries([c, a, b]).instances).toHaveLength(3);
  });
});

describe('pmv6 load merge', () => {
  it('reads the JSON line from runner logs (kubectl --prefix too) and from summary files; exit 0 held, 1 failed, 2 bad input', async () => {
    const a = instance(1, 2, { p95: 100, p95ok: true, failed: 0, reqs: 100 });
    const b = instance(2, 2, { p95: 200, p95ok: true, failed: 0, reqs: 100 });
    writeFileSync(join(dir, '1.log'), `mixed (instance-1)\n  http_reqs  100 10.00/s\nok   checks rate>0.99\n${JSON.stringify(a)}\ntime="…" level=info\n`);
    writeFileSync(join(dir, '2.json'), JSON.stringify(b, null, 2));
    writeFileSync(join(dir, 'both.log'), `[pod/x-1] ${JSON.stringify(a)}\n[pod/x-2] ${JSON.stringify(b)}\n`);
    expect(parseInstances(`[pod/x-1] ${JSON.stringify(a)}`, 'x')[0]!.id).toBe('instance-1');
    let out = '';
    expect(await mergeCommand([join(dir, '1.log'), join(dir, '2.json')], (s) => (out += s))).toBe(MERGE_EXIT.held);
    expect(out).toMatch(/^ok {3}http_req_duration p\(95\)<500 {2}\(instances 100…200; bounded\)$/m);
    expect(await mergeCommand([join(dir, 'both.log')], () => {})).toBe(MERGE_EXIT.held);
    const slow = instance(2, 2, { p95: 900, p95ok: false, failed: 0, reqs: 100 });
    writeFileSync(join(dir, 'slow.json'), JSON.stringify(slow));
    expect(await mergeCommand([join(dir, '1.log'), join(dir, 'slow.json')], () => {})).toBe(MERGE_EXIT.failed);
    expect(await mergeCommand([join(dir, '1.log')], () => {})).toBe(MERGE_EXIT.usage);
    writeFileSync(join(dir, 'none.log'), 'no summary here\n');
    expect(await mergeCommand([join(dir, 'none.log')], () => {})).toBe(MERGE_EXIT.usage);
    expect(await mergeCommand([join(dir, 'missing.json')], () => {})).toBe(MERGE_EXIT.usage);
    expect(await mergeCommand([], () => {})).toBe(MERGE_EXIT.usage);
  });
});
