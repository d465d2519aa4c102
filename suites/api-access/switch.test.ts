import { expectClientError, expectErrorObject, expectStatus } from '../harness/assert.ts';
import type { ApiClient } from '../harness/client.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { API_DISABLED } from '../general/checks.ts';
import { useEndpoints } from '../general/endpoints.ts';

const s = useSession();
const calls = useEndpoints(s);

async function usersOfEveryRole(): Promise<Array<[string, ApiClient]>> {
  const out: Array<[string, ApiClient]> = [['the run\'s Admin', s.admin]];
  for (const role of ['admin', 'it', 'project manager', 'normal user', 'read only'] as const) {
    out.push([role, (await s.user(role, { label: `gen10-${role.replace(/\s+/g, '-')}` })).client]);
  }
  return out;
}

clauseTest('GEN-10', 'refuse users of every role while API access is off, and serve them all once it is on again', async () => {
  const users = await usersOfEveryRole();
  await s.withSettings({ api_enabled: false }, async () => {
    for (const [, client] of users) {
      expectClientError(await client.get('/passwords.json'));
      expectClientError(await client.get('/version.json'));
    }
  });
  await s.withSettings({ api_enabled: true }, async () => {
    for (const [, client] of users) {
      expectStatus(await client.get('/passwords.json'), 200);
      expectStatus(await client.get('/version.json'), 200);
    }
  });
});

clauseTest('ERR-01', 'answer every endpoint of §4 with 403 and "API access is disabled" while API access is off', async () => {
  const d = await calls.data();
  const user = await s.user('normal user', { label: 'err01-normal-user' });
  await s.withSettings({ api_enabled: false }, async () => {
    for (const { ex } of await calls.callEach(s.admin, d)) expectErrorObject(ex, { status: 403, message: API_DISABLED });
    for (const { ex } of await calls.callEach(user.client, d)) expectErrorObject(ex, { status: 403, message: API_DISABLED });
  });
});
