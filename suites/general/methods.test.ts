import { expectResponse, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { expectSuccess } from './checks.ts';
import { WRITE_ENDPOINTS, label, useEndpoints } from './endpoints.ts';

const s = useSession();
const calls = useEndpoints(s);

clauseTest(['GEN-01', 'EP-01'], 'answer every GET and POST endpoint of §4 with 2XX to a request with Content-Type: application/json; charset=utf-8', async () => {
  const d = await calls.data();
  for (const { endpoint, ex } of await calls.callEach(s.admin, d, { contentType: 'application/json; charset=utf-8' })) {
    expectSuccess(ex, `a 2XX status for ${label(endpoint)} with Content-Type: application/json; charset=utf-8`);
  }
});

clauseTest('GEN-01', 'serve updates through PUT and deletions through DELETE (the product\'s paths)', async (t) => {
  const d = await calls.data();
  const disposable = { ...d, passwordId: await s.fixtures.createPassword(d.projectId) };
  for (const endpoint of WRITE_ENDPOINTS) {
    const ex = await calls.call(s.admin, endpoint, disposable);
    expectResponse(ex, `a 2XX status for ${label(endpoint)}`);
    const { status } = ex.response;
    // §4 does not show these paths: 404 or 405 there proves nothing.
    if (status === 404 || status === 405) t.unverifiable(`${label(endpoint)} answered ${status}: the spec does not show this path`);
    if (status < 200 || status > 299) violation(ex, `a 2XX status for ${label(endpoint)}`, `status ${status}`);
  }
});
