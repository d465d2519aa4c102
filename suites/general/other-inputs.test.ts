import { expectClientError, expectResponse } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { inFlight } from '../harness/config.ts';
import { missing, pathOf, TABLE, useEndpoints } from '../harness/endpoints.ts';
import { ahead } from '../harness/in-order.ts';
import { mayWrite } from '../harness/ownership.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();
const calls = useEndpoints(s);

// "The API uses HTTP methods GET, POST, PUT and DELETE": what another method gets is not shown;
// a refusal must still be a client error with the error object, never a success or a crash.
// PATCH goes to every path of the endpoint table, naming the file's own objects: a run writes
// only to what it made (a guessed id may be someone's), and a server that takes PATCH as a
// change changes only those.
clauseTest('GEN-02', 'record the reply to PATCH on every path of the endpoint table and to a made-up method, and refuse them', async (t) => {
  const d = await calls.data(TABLE);
  const named = [...new Set(TABLE.filter((e) => missing(e, d) === undefined).map((e) => pathOf(e, d)))];
  // A path naming an object not the run's (users/me: the Admin) is left out, and said.
  const paths = named.filter((p) => mayWrite('PATCH', p));
  if (paths.length < named.length)
    t.observe(
      'not sent: paths naming objects not made by the run',
      named.filter((p) => !paths.includes(p)),
    );
  const statuses: Record<string, number> = {};
  const sent = [...paths.map((p) => ['PATCH', p] as const), ['PURGE', '/passwords.json'] as const];
  // Side by side, judged in order.
  for await (const [[method, path], ex] of ahead(sent, inFlight(s.config), ([method, path]) => s.admin.request({ method, path }))) {
    expectResponse(ex);
    statuses[ex.response.status] = (statuses[ex.response.status] ?? 0) + 1;
    if (path === '/passwords.json') t.observe(`${method} /passwords.json`, ex.response.status);
    expectClientError(ex);
  }
  t.observe('statuses of PATCH and PURGE', statuses);
});

// "All request and response bodies are JSON": the reply to a body that is not JSON is not shown.
clauseTest('GEN-05', 'record the reply to a request body that is not valid JSON, and refuse it', async (t) => {
  for (const rawBody of ['{"name": "unterminated', 'name=x&project_id=1', '\u00ff\u00fe']) {
    const ex = await s.admin.request({ method: 'POST', path: '/projects.json', rawBody });
    expectResponse(ex);
    t.observe(`POST /projects.json with ${JSON.stringify(rawBody.slice(0, 12))}`, ex.response.status);
    expectClientError(ex);
  }
});
