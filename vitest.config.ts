import { defineConfig } from 'vitest/config';

// The project's own tests. The conformance suites are not vitest files: pmv6's runner runs them
// (suites/runner/suite-runner.ts), and suites/runner/test/reference-run.test.ts runs them all
// against the embedded reference server.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: [
            'core/test/**/*.test.ts',
            'targets/test/**/*.test.ts',
            'suites/harness/test/**/*.test.ts',
            'suites/catalogue/test/**/*.test.ts',
            'suites/runner/test/**/*.test.ts',
            'fixtures/**/test/**/*.test.ts',
            'reporters/test/**/*.test.ts',
            'bin/test/**/*.test.ts',
            'load/test/**/*.test.ts',
            'clients/**/test/**/*.test.ts',
          ],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
