import { expectClientError, expectResponse } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();

// "The API uses HTTP methods GET, POST, PUT and DELETE": what another method gets is not shown;
// a refusal must still be a client error with the error object, never a success or a crash.
clauseTest('GEN-02', 'record the reply to PATCH and to a made-up method, and refuse them', async (t) => {
  for (const method of ['PATCH', 'PURGE']) {
    const ex = await s.admin.request({ method, path: '/passwords.json' });
    expectResponse(ex);
    t.observe(`${method} /passwords.json`, ex.response.status);
    expectClientError(ex);
  }
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
