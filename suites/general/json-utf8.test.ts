import { expectStatus, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { containsString, expectJsonBody, expectUtf8Body } from './checks.ts';
import { useEndpoints, variedReplies, type Reply } from './endpoints.ts';

const s = useSession();
const calls = useEndpoints(s);
let replies: Promise<Reply[]> | undefined;
const allReplies = async () => (replies ??= calls.data().then((d) => variedReplies(s, calls, d)));

clauseTest('GEN-03', 'return a JSON body on every endpoint of the table, for successes and refusals alike', async () => {
  for (const { ex } of await allReplies()) expectJsonBody(ex);
});

clauseTest('GEN-04', 'encode every response body in UTF-8 on every endpoint of the table, for successes and refusals alike', async () => {
  for (const { ex } of await allReplies()) expectUtf8Body(ex);
});

clauseTest('GEN-04', 'return a password with a non-ASCII name as UTF-8 that decodes to the name sent', async () => {
  const d = await calls.data();
  const ex = await s.admin.get(`/passwords/${d.ids.password}.json`);
  expectStatus(ex, 200);
  expectUtf8Body(ex);
  expectJsonBody(ex);
  // §4: "200 OK, all data of the password"; the name is part of that data.
  if (!containsString(ex.json, d.passwordName)) violation(ex, `the name ${JSON.stringify(d.passwordName)} decoded intact`, 'no string value equal to it');
});
