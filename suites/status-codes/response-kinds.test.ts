import { expectErrorObject, expectResponse, violation } from '../harness/assert.ts';
import { expectJsonBody, expectUtf8Body } from '../harness/checks.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { type Reply, useEndpoints, variedReplies } from '../harness/endpoints.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();
const calls = useEndpoints(s);
let replies: Promise<Reply[]> | undefined;
const allReplies = async () => (replies ??= calls.data().then((d) => variedReplies(s, calls, d)));

clauseTest('STAT-01', 'answer every call, accepted or refused, with a 2XX, a 4XX or a 500', async () => {
  for (const { what, ex } of await allReplies()) {
    expectResponse(ex, `a 2XX, 4XX or 500 status (${what})`);
    const { status } = ex.response;
    if (!((status >= 200 && status < 300) || (status >= 400 && status < 500) || status === 500)) {
      violation(ex, `a 2XX, 4XX or 500 status (${what})`, `status ${status}`);
    }
  }
});

clauseTest('STAT-06', 'send the error object as the body of every 4XX response', async () => {
  const list = await allReplies();
  const refused = list.filter(({ ex }) => (ex.response?.status ?? 0) >= 400 && (ex.response?.status ?? 0) < 500);
  // The calls without credentials must be refused (§5), so the check never runs empty.
  const anonymous = list.find(({ what }) => what.startsWith('no credentials'));
  if (anonymous && !refused.includes(anonymous))
    violation(anonymous.ex, 'a 4XX status without credentials', `status ${anonymous.ex.response?.status ?? 'none'}`);
  for (const { ex } of refused) expectErrorObject(ex);
});

clauseTest('GEN-03', 'return a JSON body on every endpoint of the table, for successes and refusals alike', async () => {
  for (const { ex } of await allReplies()) expectJsonBody(ex);
});

clauseTest('GEN-04', 'encode every response body in UTF-8 on every endpoint of the table, for successes and refusals alike', async () => {
  for (const { ex } of await allReplies()) expectUtf8Body(ex);
});
