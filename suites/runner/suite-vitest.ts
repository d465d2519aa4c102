// How vitest runs the conformance suites, for a run (run-suites.ts) and for the inventory
// (inventory.ts) alike: the files, the oracle's setup, one forked worker, and the memory settings.
import type { TestUserConfig } from 'vitest/node';
import { CONFORMANCE_EXCLUDE, CONFORMANCE_INCLUDE, ORACLE_SETUP, PACKAGE_ROOT } from './layout.ts';

/**
 * Decision, for the memory of a run (the peak of the process tree against a URL target, median of
 * three by suites/runner/bench/run-memory.ts: 682 MB before these settings, 540 MB with them):
 * - The worker's young generation is capped at 2 MB per semi-space (V8's default grows to 16 MB and
 *   is mostly garbage here): 40 to 60 MB less, the same run time.
 * - Files run in a forked worker, not a thread: a thread shares the CLI's process, and the tree
 *   measured the same (676 MB against 698 MB with the embedded server).
 * - Rolldown (vite's bundler, loaded with vitest into this process) allocates with mimalloc, which
 *   commits its arenas up front on Linux, so what it frees is only marked reusable and stays in the
 *   RSS (about 60 MB of a run); committed on demand, it goes back to the system. mimalloc reads the
 *   setting when rolldown loads, hence vitest is imported after it is set; a value already set wins.
 */
const WORKER_EXEC_ARGV = ['--max-semi-space-size=2'];
const MIMALLOC_SETTINGS = { MIMALLOC_ARENA_EAGER_COMMIT: '0' };

/** vitest's Node API, imported once the allocator settings are in the environment. */
export async function loadVitest(): Promise<typeof import('vitest/node')> {
  for (const [name, value] of Object.entries(MIMALLOC_SETTINGS)) process.env[name] ??= value;
  return import('vitest/node');
}

/** The options every vitest the runner starts over the suites has in common. */
export const SUITE_OPTIONS: TestUserConfig & { config: false; watch: false } = {
  config: false,
  root: PACKAGE_ROOT,
  watch: false,
  include: CONFORMANCE_INCLUDE,
  exclude: CONFORMANCE_EXCLUDE,
  setupFiles: [ORACLE_SETUP],
  // One worker imports the harness once for every file; each file still has its own session.
  fileParallelism: false,
  isolate: false,
  pool: 'forks',
  execArgv: WORKER_EXEC_ARGV,
  passWithNoTests: true,
};
