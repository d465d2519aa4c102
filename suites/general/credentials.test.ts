import { expectClientError, expectErrorObject, expectStatus } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { inFlight } from '../harness/config.ts';
import type { Role } from '../harness/control.ts';
import { notServed, TABLE, useEndpoints } from '../harness/endpoints.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();
const calls = useEndpoints(s);
const ROLES: readonly Role[] = ['admin', 'it', 'project manager', 'normal user', 'read only'];

clauseTest('GEN-07', 'let an active user of every role call GET /version.json and GET /passwords.json with their own Basic credentials', async () => {
  // Each user's two reads side by side with the others' (reads and users of their own), judged in order.
  const replies = await Promise.all(
    ROLES.map(async (role) => {
      const user = await s.user(role, { label: `gen07-${role.replace(/\s+/g, '-')}` });
      return Promise.all([user.client.get('/version.json'), user.client.get('/passwords.json')]);
    }),
  );
  for (const [version, passwords] of replies) {
    expectStatus(version, 200);
    expectStatus(passwords, 200);
  }
});

// Every entry of the endpoint table; a product path that answers 404 or 405 may be routed before
// authentication on a target that does not serve it, which proves nothing.
clauseTest(['AUTH-01', 'STAT-06'], 'answer every endpoint of the table without credentials with 401 and the error object', async () => {
  const d = await calls.data();
  for (const { endpoint, ex } of await calls.callEach(s.anonymous, d, {}, TABLE, inFlight(s.config))) {
    if (!notServed(endpoint, ex)) expectErrorObject(ex, { status: 401 });
  }
});

// "Any active user can use the API": a user made inactive (through the control protocol) and a
// user deactivated through the product's PUT users/ID/deactivate.json are both refused.
clauseTest('GEN-15', "refuse a deactivated user's own credentials over HTTP Basic and HMAC, on a read and on a write", async () => {
  const inactive = await s.user('normal user', { active: false, label: 'gen15-inactive' });
  const deactivated = await s.user('normal user', { label: 'gen15-deactivated' });
  expectStatus(await deactivated.client.get('/version.json'), 200);
  const off = await s.admin.put(`/users/${deactivated.id}/deactivate.json`);
  const users = off.response?.status === 204 || off.response?.status === 200 ? [inactive, deactivated] : [inactive];
  for (const user of users) {
    for (const client of [user.client, user.hmacClient]) {
      expectClientError(await client.get('/passwords.json'));
      expectClientError(await client.post('/projects.json', { name: s.fixtures.name('gen15-refused'), parent_id: 0 }));
    }
  }
});
