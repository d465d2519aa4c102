import { expectErrorObject, expectResponse } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { inFlight } from '../harness/config.ts';
import { ENDPOINTS, label, notServed, TABLE, useEndpoints } from '../harness/endpoints.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();
const calls = useEndpoints(s);

// Every entry of the endpoint table (on the file's own objects); a product path that answers 404
// or 405 may be routed first on a target that does not serve it, which proves nothing.
clauseTest('ERR-02', 'answer a request to every endpoint of the table without Content-Type with 415 Unsupported Media Type', async () => {
  const d = await calls.data();
  for (const { endpoint, ex } of await calls.callEach(s.admin, d, { contentType: null }, TABLE, inFlight(s.config))) {
    if (!notServed(endpoint, ex)) expectErrorObject(ex, { status: 415 });
  }
});

// The same over HMAC: §4's endpoints, and a write of the product's (the body is hashed as sent).
clauseTest('ERR-02', 'answer requests signed with HMAC without Content-Type with 415 Unsupported Media Type', async (t) => {
  const hmac = await s.adminHmac();
  if (!hmac) return t.unverifiable('no HMAC keys: give --hmac-public and --hmac-private, or --control');
  const d = await calls.data();
  for (const { endpoint, ex } of await calls.callEach(hmac, d, { contentType: null }, ENDPOINTS, inFlight(s.config))) {
    if (!notServed(endpoint, ex)) expectErrorObject(ex, { status: 415 });
  }
});

const OTHER_TYPES = ['text/plain', 'application/xml', 'application/json', 'application/json; charset=iso-8859-1'];

clauseTest('ERR-03', 'record the reply to a Content-Type other than application/json; charset=utf-8', async (t) => {
  const d = await calls.data();
  const probed = ENDPOINTS.filter((e) => e.path === '/version.json' || e.path === '/projects.json');
  for (const contentType of OTHER_TYPES) {
    for (const { endpoint, ex } of await calls.callEach(s.admin, d, { contentType }, probed)) {
      expectResponse(ex);
      const { status } = ex.response;
      t.observe(`${label(endpoint)} with Content-Type: ${contentType}`, status);
      // §7: "Client error | 4XX | error object".
      if (status >= 400 && status < 500) expectErrorObject(ex);
    }
  }
});
