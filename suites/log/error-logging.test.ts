import { randomBytes } from 'node:crypto';
import { violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import type { Exchange } from '../harness/exchange.ts';
import { useSession } from '../harness/session.ts';
import { lazy, UNLIKELY_ID, useCreations } from '../resources/support.ts';
import { countDrift, entriesMentioning, logCount } from './log-reader.ts';

const s = useSession();
const create = useCreations(s);
const project = lazy(() => s.fixtures.createProject());

// "Requests that end in an error are not logged, except 401 Unauthorized, which is logged." Each
// request is judged by the log's count just before and after it, less what reading the count
// adds by itself.
clauseTest('LOG-03', 'leave requests that end in an error other than 401 out of the log', async (t) => {
  const marker = `pmv6-${s.config.runId}-unlogged-${randomBytes(4).toString('hex')}`;
  const projectId = await project();
  const requests: Array<[string, () => Promise<Exchange>]> = [
    ['POST /passwords.json without name', () => create('password', { project_id: projectId, username: marker, access_info: marker })],
    ['GET of a password id that does not exist', () => s.admin.get(`/passwords/${UNLIKELY_ID}.json`)],
    ['GET of a page above the last', () => s.admin.get('/passwords/page/1000000.json')],
    ['GET without Content-Type', () => s.admin.get('/passwords.json', { contentType: null })],
  ];
  const judged: string[] = [];
  let markerRefused = false;
  for (const [i, [label, send]] of requests.entries()) {
    const { drift, count: before } = await countDrift(s, t);
    const ex = await send();
    const status = ex.response?.status;
    if (status === undefined || status < 400 || status === 401) continue;
    const after = await logCount(s, t);
    const added = after - before - drift;
    if (added !== 0) violation(ex, `no log entry for a request that ended in ${status} (${label})`, `${added} new log entries`);
    judged.push(`${label}: ${status}`);
    if (i === 0) markerRefused = true;
  }
  t.observe('errors judged', judged);
  if (judged.length === 0) t.unverifiable('none of the requests ended in an error other than 401');
  if (!markerRefused) return;
  const { ex, found } = await entriesMentioning(s, t, marker);
  if (found.length > 0) violation(ex, `no log entry for the refused POST carrying ${marker}`, JSON.stringify(found[0]).slice(0, 300));
});

clauseTest('LOG-04', 'write requests that end in 401 Unauthorized to the log', async (t) => {
  const { user, password } = s.config;
  const requests: Array<[string, () => Promise<Exchange>]> = [
    ['a wrong password', () => s.admin.withAuth({ kind: 'basic', user, password: `${password}x` }).get('/passwords.json')],
    ['an unknown user', () => s.admin.withAuth({ kind: 'basic', user: `pmv6-${s.config.runId}-nobody-${randomBytes(3).toString('hex')}`, password }).get('/passwords.json')],
  ];
  let judged = 0;
  for (const [label, send] of requests) {
    const { drift, count: before } = await countDrift(s, t);
    const ex = await send();
    if (ex.response?.status !== 401) continue;
    const after = await logCount(s, t);
    const added = after - before - drift;
    if (added < 1) violation(ex, `a log entry for the 401 reply to ${label}`, `${added} new log entries`);
    judged++;
  }
  if (judged === 0) t.unverifiable('no request ended in 401 (AUTH-12)');
});
