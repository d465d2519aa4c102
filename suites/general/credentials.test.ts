import { expectErrorObject, expectStatus } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import type { Role } from '../harness/control.ts';
import { useSession } from '../harness/session.ts';
import { notServed, useEndpoints } from './endpoints.ts';

const s = useSession();
const calls = useEndpoints(s);
const ROLES: readonly Role[] = ['admin', 'it', 'project manager', 'normal user', 'read only'];

clauseTest('GEN-07', 'let an active user of every role call GET /version.json and GET /passwords.json with their own Basic credentials', async () => {
  for (const role of ROLES) {
    const user = await s.user(role, { label: `gen07-${role.replace(/\s+/g, '-')}` });
    expectStatus(await user.client.get('/version.json'), 200);
    expectStatus(await user.client.get('/passwords.json'), 200);
  }
});

// Every entry of the endpoint table; a product path that answers 404 or 405 may be routed before
// authentication on a target that does not serve it, which proves nothing.
clauseTest(['AUTH-01', 'STAT-06'], 'answer every endpoint of the table without credentials with 401 and the error object', async () => {
  const d = await calls.data();
  for (const { endpoint, ex } of await calls.callEach(s.anonymous, d)) {
    if (!notServed(endpoint, ex)) expectErrorObject(ex, { status: 401 });
  }
});
