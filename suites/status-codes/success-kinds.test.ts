import type { Exchange } from '../../core/exchange.ts';
import { expectNoBody, expectResponse, expectSchema, expectStatus, violation } from '../harness/assert.ts';
import { isSuccess } from '../harness/checks.ts';
import { type ClauseTestContext, clauseTest } from '../harness/clause-test.ts';
import { ENDPOINTS, type Endpoint, type EndpointData, label, notServed, sent, useEndpoints } from '../harness/endpoints.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();
const calls = useEndpoints(s);

/** Every entry of the table called once as the Admin, on objects the run made for it. */
let replies: Promise<Array<{ endpoint: Endpoint; ex: Exchange }>> | undefined;
const allReplies = () => (replies ??= calls.succeedEach().then(sent));

/** The successes among the replies to these entries; a product path that is not served is left out. */
async function successes(t: ClauseTestContext, pick: (e: Endpoint) => boolean): Promise<Array<{ endpoint: Endpoint; ex: Exchange }>> {
  const picked = (await allReplies()).filter(({ endpoint }) => pick(endpoint));
  const out = picked.filter(({ endpoint, ex }) => !notServed(endpoint, ex) && isSuccess(ex));
  const left = picked.filter((p) => !out.includes(p)).map(({ endpoint, ex }) => `${label(endpoint)}: ${ex.response?.status ?? ex.error}`);
  if (left.length > 0) t.observe('not successful, left out', left);
  if (out.length === 0) t.unverifiable('none of these endpoints answered with a success');
  return out;
}

// §4's own GETs must succeed (EP-*); the product's GETs are judged where they succeed.
clauseTest('STAT-02', 'answer each successful GET of the endpoint table with 200 OK', async (t) => {
  for (const { ex } of await successes(t, (e) => e.method === 'GET')) expectStatus(ex, 200);
});

// The project is created by the call under test, not by a fixture, so that a POST answering
// another 2XX is this SHOULD's warning and not a failed setup.
clauseTest('STAT-03', 'answer each POST of the endpoint table that creates with 201 Created', async (t) => {
  const [project, password] = [ENDPOINTS.find((e) => e.creates === 'project'), ENDPOINTS.find((e) => e.creates === 'password')];
  if (!project || !password) throw new Error('endpoint table: no POST that creates a project and a password');
  const d = await calls.data();
  const none: EndpointData = { ...d, ids: {} };
  const ex = await calls.call(s.admin, project, none);
  expectStatus(ex, 201);
  const projectId = (expectSchema(ex, 'created') as { id: number }).id;
  expectStatus(await calls.call(s.admin, password, { ...none, ids: { project: projectId } }), 201);
  for (const { ex: created } of await successes(t, (e) => e.creates !== undefined)) expectStatus(created, 201);
});

clauseTest(
  'STAT-04',
  "answer every PUT and DELETE of the endpoint table without content with 204 No Content and an empty body (the product's paths)",
  async (t) => {
    const judged: string[] = [];
    for (const { endpoint, ex } of await successes(t, (e) => e.method === 'PUT' || e.method === 'DELETE')) {
      expectResponse(ex, `204 No Content for ${label(endpoint)}`);
      const { status, body } = ex.response;
      // The rule covers "PUT and DELETE requests that return no content"; one that returns content is outside it.
      if (status !== 204 && body.trim() !== '') continue;
      expectStatus(ex, 204);
      expectNoBody(ex);
      judged.push(label(endpoint));
    }
    if (judged.length === 0) t.unverifiable('every PUT and DELETE that succeeded returned content, which the 204 rule does not cover');
  },
);

clauseTest('STAT-05', 'send a JSON object or array as the body of each success of the endpoint table that has content', async (t) => {
  for (const { endpoint, ex } of await successes(t, () => true)) {
    expectResponse(ex);
    const { status, body } = ex.response;
    // §4 gives each of its own endpoints a body ("JSON array", "count object", "object with id", ...).
    if (status === 204 || (endpoint.source === 'product' && body.trim() === '')) continue;
    const kind =
      body.trim() === ''
        ? 'no body'
        : ex.json === undefined
          ? 'a body that is not JSON'
          : ex.json === null
            ? 'null'
            : Array.isArray(ex.json)
              ? 'array'
              : typeof ex.json;
    if (kind !== 'array' && kind !== 'object') violation(ex, `a JSON object or array from ${label(endpoint)}`, kind);
  }
  // §4's endpoints must all have succeeded (EP-02 .. EP-11).
  for (const { endpoint, ex } of (await allReplies()).filter(({ endpoint: e }) => e.source === 'spec')) {
    if (!isSuccess(ex)) violation(ex, `a success for ${label(endpoint)}`, `status ${ex.response?.status ?? ex.error}`);
  }
});
