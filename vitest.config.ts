import { defineConfig } from 'vitest/config';

// The project's own tests. The conformance suites are not vitest files: pmv6's runner runs them
// (suites/runner/suite-runner.ts), and suites/runner/test/reference-run.test.ts runs them all
// against the embedded reference server.
export default defineConfig({
  test: {
    // Decision: two test files at once. Vitest's default leaves a core free, which on a 2-core
    // machine ran the files one after another (319 s in CI); most files wait on child processes
    // and sockets, and two at once ran in 181 s here with the same results.
    maxWorkers: 2,
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
            'suites/relations/test/**/*.test.ts',
            'fixtures/**/test/**/*.test.ts',
            'reporters/test/**/*.test.ts',
            'bin/test/**/*.test.ts',
            'load/test/**/*.test.ts',
            'clients/**/test/**/*.test.ts',
            'package/test/**/*.test.ts',
          ],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
