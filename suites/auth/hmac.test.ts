import type { Exchange } from '../../core/exchange.ts';
import { hmacSign } from '../../core/signers.ts';
import { expectClientError, expectResponse, expectStatus } from '../harness/assert.ts';
import { type ClauseTestContext, clauseTest } from '../harness/clause-test.ts';
import type { ApiClient, Auth } from '../harness/client.ts';
import { useSession } from '../harness/session.ts';
import { oracleTest } from '../oracle/probe.ts';

const s = useSession();

async function hmacClient(t: ClauseTestContext): Promise<ApiClient> {
  const client = await s.adminHmac();
  if (!client) t.unverifiable('no HMAC keys: give --hmac-public and --hmac-private, or --control');
  return client;
}

function keyOf(client: ApiClient): string {
  return (client.auth as Extract<Auth, { kind: 'hmac' }>).privateKey;
}

function tampered(client: ApiClient, mutate: NonNullable<Extract<Auth, { kind: 'hmac' }>['mutate']>): ApiClient {
  const auth = client.auth as Extract<Auth, { kind: 'hmac' }>;
  return client.withAuth({ ...auth, mutate });
}

clauseTest('AUTH-03', 'accept GET and POST requests signed with HMAC-SHA256 over path, timestamp and body', async (t) => {
  const client = await hmacClient(t);
  expectStatus(await client.get('/passwords.json'), 200);
  expectStatus(await client.get('/passwords.json', { headers: { 'X-Page-Size': '5' } }), 200);
  const project = await s.fixtures.createProject(client);
  expectStatus(await client.get(`/projects/${project}.json`), 200);
});

clauseTest('AUTH-04', 'refuse a request whose hash, signed path, timestamp or body was changed', async (t) => {
  const client = await hmacClient(t);
  const flip = (hex: string) => (hex[0] === 'a' ? 'b' : 'a') + hex.slice(1);
  const cases: Array<[string, Parameters<typeof tampered>[1]]> = [
    ['one changed hex digit of the hash', (p) => ({ hash: flip(p.hash) })],
    ['a hash over another path', (p) => ({ uri: p.uri.replace('passwords', 'projects') })],
    ['a hash over another body', () => ({ body: '{"name":"x"}' })],
    [
      'a hash over another timestamp than the header says',
      (p) => ({ hash: hmacSign({ privateKey: keyOf(client), uri: p.uri, timestamp: String(Number(p.timestamp) - 1), body: p.body }) }),
    ],
  ];
  for (const [, mutate] of cases) {
    expectClientError(await tampered(client, mutate).get('/passwords.json'));
  }
  const project = await s.fixtures.createProject();
  const body = { name: s.fixtures.name('hmac-tamper'), project_id: project };
  expectClientError(await tampered(client, (p) => ({ body: p.body.replace('hmac-tamper', 'hmac-tampeR') })).post('/passwords.json', body));
});

clauseTest('AUTH-05', 'refuse an HMAC request whose timestamp is an hour old', async (t) => {
  const client = await hmacClient(t);
  const auth = client.auth as Extract<Auth, { kind: 'hmac' }>;
  const ex = await client.withAuth({ ...auth, timestamp: Math.floor(Date.now() / 1000) - 3600 }).get('/passwords.json');
  expectResponse(ex);
  t.observe('status for a timestamp 3600 s old', ex.response.status);
  expectClientError(ex);
});

// HMAC over every kind of request the run makes, not only GET and POST without a query: a query
// string (product facts §2.2: the signed URI keeps it), a PUT with a body, a DELETE.
clauseTest('AUTH-03', 'accept HMAC on a GET with a query string, a PUT with a body and a DELETE', async (t) => {
  const client = await hmacClient(t);
  expectStatus(await client.get('/passwords.json?pmv6=1'), 200);
  const project = await s.fixtures.createProject(client);
  // Accepted is any success: whether a PUT or DELETE returns content is the server's choice (§4).
  expectSuccess(await client.put(`/projects/${project}.json`, { name: s.fixtures.name('hmac-put') }));
  const doomed = await s.fixtures.createProject(client);
  const ex = await client.delete(`/projects/${doomed}.json`);
  expectSuccess(ex);
  s.fixtures.forget('project', doomed);
});

function expectSuccess(ex: Exchange): void {
  expectResponse(ex, 'a 2XX success');
  if (ex.response.status < 200 || ex.response.status > 299) expectStatus(ex, [200, 201, 204]);
}

clauseTest(
  'AUTH-04',
  'refuse an HMAC request whose hash leaves out the query string, or covers another body of a PUT or another path of a DELETE',
  async (t) => {
    const client = await hmacClient(t);
    expectClientError(await tampered(client, (p) => ({ uri: p.uri.split('?')[0]! })).get('/passwords.json?pmv6=1'));
    const project = await s.fixtures.createProject();
    expectClientError(
      await tampered(client, () => ({ body: JSON.stringify({ name: 'another name' }) })).put(`/projects/${project}.json`, {
        name: s.fixtures.name('hmac-put-tamper'),
      }),
    );
    const other = await s.fixtures.createProject();
    expectClientError(await tampered(client, (p) => ({ uri: p.uri.replace(String(project), String(other)) })).delete(`/projects/${project}.json`));
  },
);

// §4 "PUT and DELETE requests that return no content answer 204 No Content", whichever method
// of authentication signed them.
clauseTest('STAT-04', 'answer a PUT and a DELETE signed with HMAC that return no content with 204 No Content', async (t) => {
  const client = await hmacClient(t);
  const project = await s.fixtures.createProject();
  const put = await client.put(`/projects/${project}.json`, { name: s.fixtures.name('hmac-204') });
  if (put.response?.status === 401) t.unverifiable('HMAC was not accepted (AUTH-03)');
  const doomed = await s.fixtures.createProject();
  const del = await client.delete(`/projects/${doomed}.json`);
  if (del.response?.status === 204 || del.response?.status === 200) s.fixtures.forget('project', doomed);
  // The rule covers PUT and DELETE "that return no content": a success with a body is not judged.
  const judged = [put, del].filter((ex) => !(ex.response && ex.response.status >= 200 && ex.response.status < 300 && ex.response.body.trim() !== ''));
  if (judged.length === 0) t.unverifiable('the signed PUT and DELETE both returned content, which the 204 rule does not cover');
  for (const ex of judged) expectStatus(ex, 204);
});

// Every reply to an HMAC-signed request of this file (creations, updates, refusals) held to the
// kinds of response and their bodies (suites/oracle/).
oracleTest(['STAT-05', 'GEN-03', 'GEN-04', 'STAT-06', 'RES-14', 'RES-16', 'EP-08', 'RES-04'], 'every reply to the HMAC-signed requests of this file');
