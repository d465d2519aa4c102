import { expectNoBody, expectResponse, expectSchema, expectStatus, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { ENDPOINTS, WRITE_ENDPOINTS, label, useEndpoints } from '../general/endpoints.ts';

const s = useSession();
const calls = useEndpoints(s);

clauseTest('STAT-02', 'answer each successful GET of §4 with 200 OK', async () => {
  const d = await calls.data();
  for (const { ex } of await calls.callEach(s.admin, d, {}, ENDPOINTS.filter((e) => e.method === 'GET'))) expectStatus(ex, 200);
});

// The project is created by the call under test, not by a fixture, so that a POST answering
// another 2XX is this SHOULD's warning and not a failed setup.
clauseTest('STAT-03', 'answer each POST of §4 that creates with 201 Created', async () => {
  const [project, password] = [ENDPOINTS.find((e) => e.creates === 'project'), ENDPOINTS.find((e) => e.creates === 'password')];
  if (!project || !password) throw new Error('endpoint table: no POST that creates a project and a password');
  const none = { projectId: 0, passwordId: 0, passwordName: '', name: (l: string) => s.fixtures.name(l) };
  const ex = await calls.call(s.admin, project, none);
  expectStatus(ex, 201);
  const projectId = (expectSchema(ex, 'created') as { id: number }).id;
  expectStatus(await calls.call(s.admin, password, { ...none, projectId }), 201);
});

clauseTest('STAT-04', 'answer PUT and DELETE without content with 204 No Content and an empty body (the product\'s paths)', async (t) => {
  const d = await calls.data();
  const disposable = { ...d, passwordId: await s.fixtures.createPassword(d.projectId) };
  for (const endpoint of WRITE_ENDPOINTS) {
    const ex = await calls.call(s.admin, endpoint, disposable);
    expectResponse(ex, `204 No Content for ${label(endpoint)}`);
    const { status, body } = ex.response;
    // §4 does not show these paths: 404 or 405 there proves nothing.
    if (status === 404 || status === 405) t.unverifiable(`${label(endpoint)} answered ${status}: the spec does not show this path`);
    // The rule covers "PUT and DELETE requests that return no content"; one that returns content is outside it.
    if (status >= 200 && status < 300 && status !== 204 && body.trim() !== '') {
      t.unverifiable(`${label(endpoint)} answered ${status} with content, which the 204 rule does not cover`);
    }
    expectStatus(ex, 204);
    expectNoBody(ex);
  }
});

clauseTest('STAT-05', 'send a JSON object or array as the body of each success of §4', async () => {
  const d = await calls.data();
  for (const { endpoint, ex } of await calls.callEach(s.admin, d)) {
    expectResponse(ex);
    const { status, body } = ex.response;
    if (status < 200 || status > 299) violation(ex, `a success for ${label(endpoint)}`, `status ${status}`);
    // §4 gives every one of these endpoints a body ("JSON array", "count object", "object with id", ...).
    const kind = body.trim() === '' ? 'no body' : ex.json === undefined ? 'a body that is not JSON' : ex.json === null ? 'null' : Array.isArray(ex.json) ? 'array' : typeof ex.json;
    if (kind !== 'array' && kind !== 'object') violation(ex, `a JSON object or array from ${label(endpoint)}`, kind);
  }
});
