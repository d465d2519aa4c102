import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Decision: the longest files start first, the kill matrix beside the long files that mostly
// wait (deadlines, hostile servers) rather than beside the other files that keep both cores
// busy (the lawful variants). On a clean clone vitest has no durations and starts the largest
// files first: the kill matrix (about 300 s, a small file) started after 700 s and ran alone for
// the last 200 s of CI; started together with the variants' load runs, both took half as long
// again. Measured in CI (seconds) before issue 38, which stopped each mutant's run at its kill
// (kill-matrix.ts) and spared the variants' k6 runs Babel (load/test/k6-support.ts); the order
// stands until CI measures again. The rest follow in vitest's own order.
const LONGEST_FIRST = [
  'suites/runner/test/kill-matrix.test.ts', // 320, both cores
  'bin/test/hostile-target.test.ts', // 140, mostly waiting
  'fixtures/front-ends/test/front-ends.test.ts', // 90, real nginx and Apache, mostly waiting
  'load/test/variants-load.test.ts', // 250
  'suites/runner/test/variants.test.ts', // 190
  // Issue 38 ran the cases of the files below side by side and spared their k6 runs Babel: they
  // take less than the files above now (side by side with the tree before, in the report of the
  // change); cli.test.ts is one whole run against `pmv6 serve`.
  'bin/test/cli.test.ts', // 75
  'clients/test/correct-clients.test.ts', // 110 under load, a third of it waiting on the clients' own timeouts
  'fixtures/container/test/container-run.test.ts', // 65
  'load/test/k6-scripts.test.ts', // 65
  'bin/test/hostile-servers.test.ts', // 85, mostly waiting
  'bin/test/journal.test.ts', // 70 here unloaded (165 under a load of 16), mostly waiting on slow targets
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.indexOf(relative(f.project.config.root, f.moduleId).split('\\').join('/'));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    // A stable sort: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

// The project's own tests. The conformance suites are not vitest files: pmv6's runner runs them
// (suites/runner/suite-runner.ts), and suites/runner/test/reference-run.test.ts runs them all
// against the embedded reference server.
export default defineConfig({
  test: {
    // Decision: two test files at once. Vitest's default leaves a core free, which on a 2-core
    // machine ran the files one after another (319 s in CI); most files wait on child processes
    // and sockets, and two at once ran in 181 s here with the same results.
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
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
            'suites/log/test/**/*.test.ts',
            'fixtures/**/test/**/*.test.ts',
            'reporters/test/**/*.test.ts',
            'bin/test/**/*.test.ts',
            'load/test/**/*.test.ts',
            'clients/**/test/**/*.test.ts',
            'package/test/**/*.test.ts',
          ],
          testTimeout: 30_000,
          // The journals of the runs the tests start (suites/harness/journal/) go to a folder of
          // the test run's, never into the user's own state folder.
          env: { PMV6_STATE_DIR: join(tmpdir(), `pmv6-test-state-${process.pid}`) },
        },
      },
    ],
  },
});
