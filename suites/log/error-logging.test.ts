import { randomBytes } from 'node:crypto';
import type { Exchange } from '../../core/exchange.ts';
import { clip } from '../../core/redact.ts';
import { violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { inFlight } from '../harness/config.ts';
import { UNKNOWN_ID } from '../harness/endpoints.ts';
import { exclusive } from '../harness/gate.ts';
import { inOrder, together } from '../harness/in-order.ts';
import { useSession } from '../harness/session.ts';
import { oracleTest } from '../oracle/probe.ts';
import { lazy, useCreations } from '../resources/resource-helpers.ts';
import { COPIES, CountWindows, countDrift, entriesMentioning } from './log-reader.ts';

// Decision (issue 38: no serial tail): the file runs beside the others; only its windows of the
// log's count hold the target to themselves (the gate's exclusive section), what they need made
// before they open.
const s = useSession();
const create = useCreations(s);
const project = lazy(() => s.fixtures.createProject());

// "Requests that end in an error are not logged, except 401 Unauthorized, which is logged." The
// requests are judged by the log's count just before and after them, less what reading the count
// adds by itself. Decision: they go out side by side first; a window in which the log gained
// nothing proves each of them unlogged. An entry that appears in a window is not yet blamed on
// its requests, since other users of an installation act while the run goes on, and a read of
// ours the server logs (the oracle's look-up of a count, made once) can land in it: the window's
// refusals are halved and sent again, down to one request, which then goes out again COPIES
// times at once; a server that logs it adds an entry for each, and is named with the request.
clauseTest('LOG-03', 'leave requests that end in an error other than 401 out of the log', async (t) => {
  const marker = `pmv6-${s.config.runId}-unlogged-${randomBytes(4).toString('hex')}`;
  // Writes to ids that do not exist name objects the run deleted itself: a guessed id may be someone's.
  const [projectId, goneProject, gonePassword, hmac, normal] = await together([
    project(),
    s.fixtures.deletedId('project'),
    project().then((id) => s.fixtures.deletedId('password', id)),
    s.adminHmac(),
    s.control && !s.config.readOnly ? s.user('normal user', { label: 'log03-normal-user' }) : undefined,
  ]);
  const requests: Array<[string, () => Promise<Exchange>]> = [
    ['POST /passwords.json without name', () => create('password', { project_id: projectId, username: marker, access_info: marker })],
    ['GET of a password id that does not exist', () => s.admin.get(`/passwords/${UNKNOWN_ID}.json`)],
    ['GET of a page above the last', () => s.admin.get('/passwords/page/1000000.json')],
    ['GET of a project list page above the last', () => s.admin.get('/projects/page/1000000.json')],
    ['GET without Content-Type', () => s.admin.get('/passwords.json', { contentType: null })],
    ['POST without Content-Type', () => s.admin.post('/projects.json', { name: marker, parent_id: 0 }, { contentType: null })],
    ...(goneProject === undefined
      ? []
      : ([['PUT of a project id that no longer exists', () => s.admin.put(`/projects/${goneProject}.json`, { name: marker })]] as Array<
          [string, () => Promise<Exchange>]
        >)),
    ...(gonePassword === undefined
      ? []
      : ([['DELETE of a password id that no longer exists', () => s.admin.delete(`/passwords/${gonePassword}.json`)]] as Array<
          [string, () => Promise<Exchange>]
        >)),
    ['GET with X-Page-Size "abc"', () => s.admin.get('/passwords.json', { headers: { 'X-Page-Size': 'abc' } })],
    ['POST with a body that is not JSON', () => s.admin.post('/projects.json', undefined, { rawBody: '{"name":' })],
    ['PUT on a list (405)', () => s.admin.put('/passwords.json', { name: marker })],
    ...(hmac
      ? ([['GET of a password id that does not exist, over HMAC', () => hmac.get(`/passwords/${UNKNOWN_ID}.json`)]] as Array<[string, () => Promise<Exchange>]>)
      : []),
  ];
  if (normal) requests.push(['GET /version/check_latest.json as a Normal user (403)', () => normal.client.get('/version/check_latest.json')]);
  const judged: string[] = [];
  let markerRefused = false;
  const refusal = (ex: Exchange) => {
    const status = ex.response?.status;
    return status === undefined || status < 400 || status === 401 ? undefined : status;
  };
  let windows: CountWindows;
  const judge = async (group: ReadonlyArray<[number, [string, () => Promise<Exchange>]]>): Promise<void> => {
    const { result, added } = await windows.added(() => inOrder(group, inFlight(s.config), ([, [, send]]) => send()));
    // Only the requests that ended in an error other than 401 are judged (and sent again).
    const refused = group.flatMap((g, k) => (refusal(result[k]!) === undefined ? [] : [{ g, ex: result[k]! }]));
    if (added !== 0 && refused.length > 1) {
      const half = Math.ceil(refused.length / 2);
      for (const part of [refused.slice(0, half), refused.slice(half)]) await judge(part.map((r) => r.g));
      return;
    }
    if (added !== 0 && refused.length === 1 && group.length > 1) return judge([refused[0]!.g]);
    if (added !== 0 && refused.length === 1) {
      const [, [label, send]] = group[0]!;
      const status = refusal(refused[0]!.ex);
      const again = await windows.copies(send, COPIES);
      if (again.added >= COPIES)
        violation(
          again.ex,
          `no log entry for a request that ended in ${status} (${label})`,
          `${added} new log entries, then ${again.added} while it was sent ${COPIES} times at once`,
        );
    }
    for (const { g, ex } of refused) {
      judged.push(`${g[1][0]}: ${refusal(ex)}`);
      if (g[0] === 0) markerRefused = true;
    }
  };
  // The windows with the target to itself (the gate's exclusive section): the files beside this
  // one write to the log at every step.
  await exclusive(async () => {
    const { drift, count } = await countDrift(s);
    windows = new CountWindows(s, drift, count);
    await judge([...requests.entries()]);
  });
  t.observe('errors judged', judged);
  if (judged.length === 0) t.unverifiable('none of the requests ended in an error other than 401');
  if (!markerRefused) return;
  const { ex, found } = await entriesMentioning(s, marker);
  if (found.length > 0) violation(ex, `no log entry for the refused POST carrying ${marker}`, clip(JSON.stringify(found[0]), 300));
});

/** A refusal: its label, how it is sent to `measure`, and whether it sends other requests first. */
type Refusal = [string, (measure: (send: () => Promise<Exchange>) => Promise<void>) => Promise<void>, 'prepares'?];

const plainly = (label: string, send: () => Promise<Exchange>): Refusal => [label, (measure) => measure(send)];

/** HMAC refusals: a changed hash, a key nobody has, and (with the control protocol) an expired key on a write. */
async function hmacRefusals(): Promise<Refusal[]> {
  const hmac = await s.adminHmac();
  if (hmac?.auth.kind !== 'hmac') return [];
  const auth = hmac.auth;
  const out: Refusal[] = [
    plainly('an HMAC hash that does not match', () =>
      hmac.withAuth({ ...auth, mutate: (p) => ({ hash: (p.hash[0] === 'a' ? 'b' : 'a') + p.hash.slice(1) }) }).get('/passwords.json'),
    ),
    plainly('an HMAC public key nobody has', () =>
      hmac.withAuth({ ...auth, publicKey: randomBytes(32).toString('hex') }).get('/passwords.json', { probe: true }),
    ),
  ];
  const control = s.control;
  if (control && !s.config.readOnly) {
    out.push([
      'an expired HMAC key on a POST',
      async (measure) => {
        const user = await s.user('normal user', { label: 'log04-expired' });
        const keys = await control.issueApiKeys(user.id, 10);
        const client = user.hmacClient.withAuth({ kind: 'hmac', publicKey: keys.public_key, privateKey: keys.private_key });
        await s.withSettings({ hmac_key_expiry_days: 1 }, () =>
          measure(() => client.post('/projects.json', { name: s.fixtures.name('log04-expired'), parent_id: 0 })),
        );
      },
      'prepares',
    ]);
  }
  return out;
}

clauseTest(
  'LOG-04',
  'write requests that end in 401 Unauthorized to the log: wrong password, unknown user, no credentials, HMAC refusals, on reads and writes',
  async (t) => {
    const { user, password } = s.config;
    const refusals: Refusal[] = [
      plainly('a wrong password', () => s.admin.withAuth({ kind: 'basic', user, password: `${password}x` }).get('/passwords.json')),
      plainly('an unknown user', () =>
        s.admin.withAuth({ kind: 'basic', user: `pmv6-${s.config.runId}-nobody-${randomBytes(3).toString('hex')}`, password }).get('/passwords.json'),
      ),
      plainly('no credentials', () => s.anonymous.get('/passwords.json')),
      plainly('a wrong password on a POST', () =>
        s.admin.withAuth({ kind: 'basic', user, password: `${password}x` }).post('/projects.json', { name: s.fixtures.name('log04-refused'), parent_id: 0 }),
      ),
      ...(await hmacRefusals()),
    ];
    const judged: string[] = [];
    // The windows with the target to itself, as in LOG-03.
    await exclusive(async () => {
      const { drift, count } = await countDrift(s);
      const windows = new CountWindows(s, drift, count);
      for (const [label, run, prepares] of refusals) {
        // A refusal that sends other requests around its own opens its window afresh, and so does the next.
        if (prepares) windows.restart();
        await run(async (send) => {
          const once = await windows.copies(send);
          if (once.ex.response?.status !== 401) return;
          // Decision: a window without the entry is measured again, COPIES at once, before it is
          // blamed on the server: the drift is the least of a few reads on a log others write to.
          if (once.added < 1) {
            const { ex, added } = await windows.copies(send, COPIES);
            if (added < 1)
              violation(
                ex,
                `a log entry for the 401 reply to ${label}`,
                `${once.added} new log entries, then ${added} while it was sent ${COPIES} times at once`,
              );
          }
          judged.push(label);
        });
        if (prepares) windows.restart();
      }
    });
    t.observe('401 replies judged', judged);
    if (judged.length === 0) t.unverifiable('no request ended in 401 (AUTH-12)');
  },
);

// The refusals above, over Basic and HMAC, on reads and writes, held to the error object and §5's 401.
oracleTest(['STAT-06', 'RES-14', 'RES-15', 'RES-16', 'AUTH-12', 'AUTH-13'], 'every refusal of this file, over Basic and HMAC, on reads and writes');
