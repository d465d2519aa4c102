import { describe, expect, test } from 'vitest';
import { pmv6 } from './spawn-cli.ts';

// The variant matrix runs in suites/runner/test/variants.test.ts; here only the command's surface.
describe('pmv6 variants', () => {
  test('--help and --list describe the variants and what allows each', { timeout: 60_000 }, async () => {
    const help = await pmv6(['variants', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/lawful variant/);
    const list = await pmv6(['variants', '--list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^string-ids-users-groups {2}bodies /m);
    expect(list.stdout).toMatch(/allowed by: .*product facts §7/);
  });

  test('an unknown variant or a bad --jobs is a usage error (exit 2), on variants, run and serve', { timeout: 120_000 }, async () => {
    expect((await pmv6(['variants', '--only', 'no-such-variant'])).code).toBe(2);
    expect((await pmv6(['variants', '--jobs', '0'])).code).toBe(2);
    expect((await pmv6(['run', '--variant', 'no-such-variant'])).code).toBe(2);
    expect((await pmv6(['serve', '--variant', 'no-such-variant', '--port', '0'])).code).toBe(2);
    expect((await pmv6(['run', '--variant', 'large-ids', '--target', 'http://127.0.0.1:9', '--user', 'a', '--password', 'b'])).code).toBe(2);
  });
});
