import { describe, expect, test } from 'vitest';
import { pmv6 } from './spawn-cli.ts';

// The full matrix runs in fixtures/mutants/test/kill-matrix.test.ts; here only the command's surface.
describe('pmv6 mutants', () => {
  test('--help explains the options and exit codes', async () => {
    const r = await pmv6(['mutants', '--help']);
    expect(r.code).toBe(0);
    for (const word of ['--only', '--jobs', '--json', 'Exit codes']) expect(r.stdout).toContain(word);
  });

  test('--list names each mutant with its clause', async () => {
    const r = await pmv6(['mutants', '--list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^link-missing-prev {2}PAG-07 /m);
    expect(r.stdout.trim().split('\n').length).toBeGreaterThanOrEqual(40);
  });

  test('an unknown mutant or a bad --jobs is a usage error', async () => {
    expect((await pmv6(['mutants', '--only', 'no-such-mutant'])).code).toBe(2);
    expect((await pmv6(['mutants', '--jobs', '0'])).code).toBe(2);
  });

  test('--only runs the named mutant and prints the score', async () => {
    const r = await pmv6(['mutants', '--only', 'page-too-high-other-message', '--jobs', '1']);
    expect(r.stdout).toMatch(/page-too-high-other-message +PAG-11 +FAIL +yes +PAG-11/);
    expect(r.stdout).toMatch(/score 1\/1 \(100%\)/);
    expect(r.code).toBe(0);
  }, 120_000);
});
