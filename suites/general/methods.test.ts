import { expectResponse, violation } from '../harness/assert.ts';
import { expectSuccess } from '../harness/checks.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { ENDPOINTS, label, notServed, TABLE, useEndpoints } from '../harness/endpoints.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();
const calls = useEndpoints(s);

clauseTest(
  ['GEN-01', 'EP-01'],
  'answer every GET and POST endpoint of §4 with 2XX to a request with Content-Type: application/json; charset=utf-8',
  async () => {
    for (const o of await calls.succeedEach(ENDPOINTS, { contentType: 'application/json; charset=utf-8' })) {
      if (!('ex' in o)) throw new Error(`endpoint table: no data for ${label(o.endpoint)}: ${o.skipped}`);
      expectSuccess(o.ex, `a 2XX status for ${label(o.endpoint)} with Content-Type: application/json; charset=utf-8`);
    }
  },
);

// The product's paths of every operation of §1 through the four methods: GET reads, POST
// creates, PUT updates, DELETE deletes. Decision: §4 shows neither these paths nor their
// payloads, so a 404 or 405 (not served) or another 4XX (the product's payload refused) proves
// nothing; a 5XX is a failure to serve the method.
clauseTest('GEN-01', "serve the operations of the endpoint table through GET, POST, PUT and DELETE (the product's paths)", async (t) => {
  const served: string[] = [];
  const refused: string[] = [];
  for (const o of await calls.succeedEach(TABLE.filter((e) => e.source === 'product'))) {
    if (!('ex' in o)) continue;
    expectResponse(o.ex, `a 2XX status for ${label(o.endpoint)}`);
    if (notServed(o.endpoint, o.ex)) continue;
    const { status } = o.ex.response;
    if (status >= 400 && status < 500) refused.push(`${label(o.endpoint)}: ${status}`);
    else if (status < 200 || status > 299) violation(o.ex, `a 2XX status for ${label(o.endpoint)}`, `status ${status}`);
    else served.push(label(o.endpoint));
  }
  if (refused.length > 0) t.observe('refused (payload not shown)', refused);
  const methods = new Set(served.map((l) => l.split(' ')[0]));
  t.observe('product paths served', served.length);
  if (!['PUT', 'DELETE'].every((m) => methods.has(m)))
    t.unverifiable(`no PUT or no DELETE of the product's paths was served (served: ${[...methods].join(', ') || 'none'})`);
});
