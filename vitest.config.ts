import { defineConfig } from 'vitest/config';
import { CONFORMANCE_EXCLUDE, CONFORMANCE_INCLUDE, ORACLE_SETUP } from './suites/runner/layout.ts';

// Two projects: `unit` is the project's own tests; `conformance` runs the suites against the
// embedded reference server started by the global setup (the same files `pmv6 run` runs).
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
      {
        test: {
          name: 'conformance',
          include: CONFORMANCE_INCLUDE,
          exclude: CONFORMANCE_EXCLUDE,
          globalSetup: ['suites/runner/global-setup.ts'],
          setupFiles: [ORACLE_SETUP],
          fileParallelism: false,
          isolate: false,
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
    ],
  },
});
