/**
 * Vitest setup file of the conformance suites: installs the response oracle once per worker and
 * hands each file's findings, oracle errors and request count to the runner through the file
 * task's meta (the Collector turns them into results).
 */
import { afterAll, afterEach, beforeAll, beforeEach, inject } from 'vitest';
import { getRunConfig } from '../harness/config.ts';
import { onExchange, requestsSent } from '../harness/traffic.ts';
import { Oracle, type OracleFinding } from './oracle.ts';

declare module 'vitest' {
  interface TaskMeta {
    /** The response oracle's findings in this file's traffic. */
    pmv6Oracle?: { findings: OracleFinding[]; errors: string[] };
    /** Requests this file sent (API, control and the oracle's look-ups). */
    pmv6Requests?: number;
  }
}

const state = globalThis as { __pmv6Oracle?: Oracle };
if (!state.__pmv6Oracle) {
  const oracle = new Oracle(getRunConfig());
  state.__pmv6Oracle = oracle;
  onExchange((o) => oracle.observe(o));
}
const oracle = state.__pmv6Oracle;

let before = 0;
beforeAll(() => {
  before = requestsSent();
});

// Each test's own requests, for the live progress line (the file's total is in the file's meta).
let beforeTest = 0;
beforeEach(() => {
  beforeTest = requestsSent();
});
afterEach(({ task }) => {
  task.meta.pmv6Requests = requestsSent() - beforeTest;
});

// Registered before the file's own hooks, so it runs after them (the session's cleanup included).
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a hook's fixtures from a destructured first parameter
afterAll(({}, file) => {
  const drained = oracle.drain();
  file.meta.pmv6Oracle = drained;
  file.meta.pmv6Requests = requestsSent() - before;
  // Under plain vitest (npm test's conformance project) nobody reads the meta: the file fails.
  if (inject('pmv6Runner') !== true && (drained.findings.length > 0 || drained.errors.length > 0)) {
    const lines = drained.findings.map(
      (f) => `[${f.clause}] ${f.count} exchange(s): ${f.failures[0]?.message ?? ''}\n${f.failures[0]?.expected ?? ''} / ${f.failures[0]?.actual ?? ''}`,
    );
    throw new Error(`response oracle:\n${[...lines, ...drained.errors].join('\n')}`);
  }
});
