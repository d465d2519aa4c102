import { STATUS_CODES } from 'node:http';
import type { Exchange } from '../../core/exchange.ts';
import { clip } from '../../core/redact.ts';
import { violation } from '../harness/assert.ts';
import { type ClauseTestContext, clauseTest } from '../harness/clause-test.ts';
import { guessedData, kindsOf, label as labelOf, pathOf, TABLE, UNKNOWN_ID } from '../harness/endpoints.ts';
import { useSession } from '../harness/session.ts';
import { beforeAll } from '../harness/suite-api.ts';
import { describesStatus } from '../oracle/oracle.ts';
import { oracleTest } from '../oracle/probe.ts';
import { useCreations } from './resource-helpers.ts';

// Decision: beside other files. The page above the last of the Admin's list is asked for by the
// count read just before; should files beside it grow the list in between, the page answers 200
// and is not among the 4XX replies judged here.
const s = useSession();
const create = useCreations(s);

/** Error replies provoked without the control protocol; only those that end in a 4XX are checked. */
let errors: Array<{ label: string; ex: Exchange }> = [];

beforeAll(async () => {
  const count = await s.admin.get('/passwords/count.json');
  const pages = (count.json as { num_pages?: unknown } | undefined)?.num_pages;
  const tooHigh = typeof pages === 'number' && Number.isSafeInteger(pages) ? pages + 1 : 1_000_000;
  const { user, password } = s.config;
  const guessed = guessedData();
  // A run that signs in with HMAC only sends nothing over HTTP Basic (RunConfig.signIn).
  const basic = s.admin.basicRefused === undefined;
  const sent: Array<[string, Promise<Exchange>]> = [
    ...(basic
      ? ([['wrong password (401)', s.admin.withAuth({ kind: 'basic', user, password: `${password}x` }).get('/passwords.json')]] as Array<
          [string, Promise<Exchange>]
        >)
      : []),
    ['no credentials (401)', s.anonymous.get('/passwords.json')],
    ['no Content-Type (415)', s.admin.get('/passwords.json', { contentType: null })],
    ['page above the last (404)', s.admin.get(`/passwords/page/${tooHigh}.json`)],
    ...(s.config.readOnly
      ? []
      : ([
          ['password without name and project_id', create('password', {})],
          ['project without name', create('project', { parent_id: 0 })],
        ] as Array<[string, Promise<Exchange>]>)),
    ['unknown password id', s.admin.get(`/passwords/${UNKNOWN_ID}.json`)],
    // Every GET of the endpoint table: with guessed ids (only ever read), and without Content-Type.
    ...TABLE.filter((e) => e.method === 'GET' && kindsOf(e).length > 0).map((e): [string, Promise<Exchange>] => [
      `unknown id: ${labelOf(e)}`,
      s.admin.get(pathOf(e, guessed)),
    ]),
    ...TABLE.filter((e) => e.method === 'GET' && kindsOf(e).length === 0).map((e): [string, Promise<Exchange>] => [
      `no Content-Type: ${labelOf(e)}`,
      s.admin.get(pathOf(e, guessed), { contentType: null }),
    ]),
  ];
  // More kinds and more places: a method the path does not take (405), a role refused (403),
  // an error over HMAC, a failed Basic on a list page and a count.
  if (!s.config.readOnly) {
    sent.push(['PUT on a list (405)', s.admin.put('/passwords.json', {})]);
    sent.push(['DELETE of the version (405)', s.admin.delete('/version.json')]);
  }
  if (basic) {
    sent.push(['wrong password on a list page (401)', s.admin.withAuth({ kind: 'basic', user, password: `${password}x` }).get('/passwords/page/1.json')]);
    sent.push(['wrong password on a count (401)', s.admin.withAuth({ kind: 'basic', user, password: `${password}x` }).get('/passwords/count.json')]);
  }
  const hmac = await s.adminHmac();
  if (hmac) sent.push(['unknown password id over HMAC', hmac.get(`/passwords/${UNKNOWN_ID}.json`)]);
  if (s.control && !s.config.readOnly) {
    const normal = await s.user('normal user', { label: 'errors-normal-user' });
    sent.push(['check_latest as a Normal user (403)', normal.client.get('/version/check_latest.json')]);
  }
  errors = [];
  for (const [label, pending] of sent) errors.push({ label, ex: await pending });
});

function clientErrors(t: ClauseTestContext): Array<{ label: string; ex: Exchange; body: Record<string, unknown> }> {
  const out: Array<{ label: string; ex: Exchange; body: Record<string, unknown> }> = [];
  for (const { label, ex } of errors) {
    const status = ex.response?.status ?? 0;
    if (status < 400 || status > 499) continue;
    const body = ex.json;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      violation(
        ex,
        `an error object as the body of the ${status} reply (${label})`,
        body === undefined ? 'a body that is not JSON' : clip(JSON.stringify(body), 200),
      );
    }
    out.push({ label, ex, body: body as Record<string, unknown> });
  }
  t.observe(
    '4XX replies checked',
    out.map((e) => `${e.label}: ${e.ex.response?.status}`),
  );
  if (out.length === 0) t.unverifiable('none of the provoked errors ended in a 4XX');
  return out;
}

clauseTest('RES-14', 'set error to true in every error object', async (t) => {
  for (const { label, ex, body } of clientErrors(t)) {
    if (body['error'] !== true) violation(ex, `"error": true (${label})`, 'error' in body ? `"error": ${JSON.stringify(body['error'])}` : 'no error field');
  }
});

clauseTest('RES-15', 'give a type string in every error object', async (t) => {
  for (const { label, ex, body } of clientErrors(t)) {
    const type = body['type'];
    if (typeof type !== 'string') violation(ex, `type as a string (${label})`, 'type' in body ? `"type": ${JSON.stringify(type)}` : 'no type field');
    if (type.trim() === '') violation(ex, `a type describing the status (${label})`, 'an empty type');
  }
});

// "description of the status code" paraphrases: the wording is SHOULD. Met by the status's reason
// phrase (case, spaces and punctuation ignored: "Not Found", "NotFound", "not_found"), the number,
// or words of the same meaning ("Access denied" for 403): describesStatus in suites/oracle/oracle.ts.
clauseTest('RES-18', 'describe the status code in the type of every error object, e.g. by its reason phrase', async (t) => {
  for (const { label, ex, body } of clientErrors(t)) {
    const type = body['type'];
    const status = ex.response!.status;
    if (typeof type !== 'string') continue;
    if (!describesStatus(type, status))
      violation(ex, `a type describing status ${status}, e.g. ${JSON.stringify(STATUS_CODES[status])} (${label})`, `"type": ${JSON.stringify(type)}`);
  }
});

clauseTest('RES-16', "give the reason for the failure in the error object's message string", async (t) => {
  for (const { label, ex, body } of clientErrors(t)) {
    const message = body['message'];
    if (typeof message !== 'string')
      violation(ex, `message as a string (${label})`, 'message' in body ? `"message": ${JSON.stringify(message)}` : 'no message field');
    if (message.trim() === '') violation(ex, `a message giving the reason (${label})`, 'an empty message');
  }
});

// Every 4XX this file and its fixtures provoked, whatever test or step provoked it, is judged by
// the response oracle (suites/oracle/) under the error object's clauses and §5's 401.
oracleTest(
  ['STAT-06', 'RES-14', 'RES-15', 'RES-16', 'RES-18', 'AUTH-12', 'AUTH-13', 'AUTH-14'],
  'every 4XX of this file, over Basic and HMAC, on lists, pages, counts and writes',
);
