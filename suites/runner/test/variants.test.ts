import { describe, expect, test } from 'vitest';
import { VARIANTS } from '../../../fixtures/variants/index.ts';
import { variantSets } from '../variant-matrix.ts';
import { checkoutModule } from './compiled.ts';

// The other half of the kill matrix: pmv6 stays quiet on every lawful variant of the reference
// server (fixtures/variants/). Decision (runtime): a variant can trip any check, so each run is a
// whole suite run; the variants run in sets, one of each area applied together (variantSets), so
// every variant runs once in as many runs as the largest area has variants. `pmv6 variants` runs
// them one by one and pins an alarm on its variant.

describe('variant registry', () => {
  test('has at least 40 variants with unique ids, each citing what allows it', () => {
    const ids = VARIANTS.map((v) => v.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(VARIANTS.length).toBeGreaterThanOrEqual(40);
    for (const v of VARIANTS) {
      expect(v.id, v.id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(v.allowedBy, `${v.id}: cite the sentence or product fact that allows it`).toMatch(/§\d|product facts|RFC \d+/);
    }
  });

  test('the sets hold every variant once, and no two of one area', () => {
    const sets = variantSets(VARIANTS);
    expect(
      sets
        .flat()
        .map((v) => v.id)
        .sort(),
    ).toEqual(VARIANTS.map((v) => v.id).sort());
    for (const set of sets) expect(new Set(set.map((v) => v.area)).size).toBe(set.length);
  });
});

describe('variant matrix', () => {
  test('the suites with the oracle stay quiet on every lawful variant (CONFORMANT under --strict)', { timeout: 1_800_000 }, async () => {
    const { runVariants, variantMatrixText, variantSets } = await checkoutModule<typeof import('../variant-matrix.ts')>('suites/runner/variant-matrix.ts');
    const { VARIANTS } = await checkoutModule<typeof import('../../../fixtures/variants/index.ts')>('fixtures/variants/index.ts');
    const matrix = await runVariants(variantSets(VARIANTS), { jobs: 2 });
    const text = variantMatrixText(matrix);
    process.stdout.write(`\n${text}`);
    const alarms = matrix.results
      .filter((r) => !r.quiet)
      .map((r) => `${r.id}: ${r.label} ${r.alarms.map((a) => `${a.id}(${a.outcome})`).join(' ')} ${r.harnessErrors[0] ?? ''}`);
    expect(alarms, text).toEqual([]);
  });
});
