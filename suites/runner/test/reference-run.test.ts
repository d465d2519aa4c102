// Every conformance suite against the embedded reference server, with the property tests at
// PMV6_DEPTH (quick, standard or deep; .ci/run sets deep): the reference is the suite's own proof
// that a conformant server passes. Every test passes or records an observation, the response
// oracle finds nothing, the harness reports no error, and the run leaves nothing behind.
import { expect, test } from 'vitest';
import { startEmbeddedTarget } from '../../../targets/embedded.ts';
import { isDepth } from '../../harness/config.ts';
import { runSuites } from '../run-suites.ts';

test('the reference server passes every conformance suite', async () => {
  const depth = process.env['PMV6_DEPTH'];
  const target = await startEmbeddedTarget(depth !== undefined && isDepth(depth) ? { depth } : {});
  try {
    const result = await runSuites(target.config);
    const notHolding = result.tests
      .filter((t) => t.outcome !== 'pass' && t.outcome !== 'info')
      .map((t) => `${t.file} ${t.title}: ${t.outcome} ${t.note ?? ''} ${t.failure?.message ?? ''} ${t.failure?.expected ?? ''} ${t.failure?.actual ?? ''}`);
    expect(notHolding).toEqual([]);
    expect(result.harnessErrors).toEqual([]);
    expect(result.cleanup?.leftovers).toEqual([]);
    expect(result.tests.length).toBeGreaterThan(200);
  } finally {
    await target.close();
  }
}, 600_000);
