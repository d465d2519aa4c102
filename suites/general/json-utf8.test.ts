import { expectStatus, violation } from '../harness/assert.ts';
import { containsString, expectJsonBody, expectUtf8Body } from '../harness/checks.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useEndpoints } from '../harness/endpoints.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();
const calls = useEndpoints(s);
// The JSON and UTF-8 of every reply of the endpoint table are checked over the same varied
// replies as the kinds of response (status-codes/response-kinds.test.ts), and by the response
// oracle on every body of the run.

clauseTest('GEN-04', 'return a password with a non-ASCII name as UTF-8 that decodes to the name sent', async () => {
  const d = await calls.data();
  const ex = await s.admin.get(`/passwords/${d.ids.password}.json`);
  expectStatus(ex, 200);
  expectUtf8Body(ex);
  expectJsonBody(ex);
  // §4: "200 OK, all data of the password"; the name is part of that data.
  if (!containsString(ex.json, d.passwordName)) violation(ex, `the name ${JSON.stringify(d.passwordName)} decoded intact`, 'no string value equal to it');
});
