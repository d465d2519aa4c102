// Every conformance suite against the embedded reference server, with the property tests at
// PMV6_DEPTH (quick, standard or deep; .ci/run sets deep): the reference is the suite's own proof
// that a conformant server passes. Every test passes or records an observation, the response
// oracle finds nothing, the harness reports no error, and the run leaves nothing behind. And it
// sends every operation of §1's table at least once (issue 35): the API requests of the run,
// matched against the endpoint table's entries (operationsSent).
import { expect, test } from 'vitest';
import { startEmbeddedTarget } from '../../../targets/embedded.ts';
import { isDepth } from '../../harness/config.ts';
import { operationsSent } from '../../harness/endpoints.ts';
import { onExchange } from '../../harness/traffic.ts';
import { runSuites } from '../run-suites.ts';

test('the reference server passes every conformance suite', async () => {
  const depth = process.env['PMV6_DEPTH'];
  const target = await startEmbeddedTarget(depth !== undefined && isDepth(depth) ? { depth } : {});
  const requests: Array<{ method: string; path: string }> = [];
  const stop = onExchange(({ exchange, channel }) => {
    if (channel !== 'api') return;
    const path = /\/index\.php\/api\/v6(\/[^?#]*)/.exec(exchange.request.url)?.[1];
    if (path !== undefined) requests.push({ method: exchange.request.method, path });
  });
  try {
    const result = await runSuites(target.config);
    stop();
    expect(operationsSent(requests).missing, 'the operations of §1 this run never sent').toEqual([]);
    const notHolding = result.tests
      .filter((t) => t.outcome !== 'pass' && t.outcome !== 'info')
      .map((t) => `${t.file} ${t.title}: ${t.outcome} ${t.note ?? ''} ${t.failure?.message ?? ''} ${t.failure?.expected ?? ''} ${t.failure?.actual ?? ''}`);
    expect(notHolding).toEqual([]);
    expect(result.harnessErrors).toEqual([]);
    expect(result.cleanup?.leftovers).toEqual([]);
    expect(result.tests.length).toBeGreaterThan(200);
  } finally {
    stop();
    await target.close();
  }
}, 600_000);
