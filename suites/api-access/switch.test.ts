import { expectClientError, expectErrorObject, expectStatus, violation } from '../harness/assert.ts';
import type { ApiClient } from '../harness/client.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { API_DISABLED } from '../general/checks.ts';
import { TABLE, label, notServed, useEndpoints } from '../general/endpoints.ts';

const s = useSession();
const calls = useEndpoints(s);

async function usersOfEveryRole(): Promise<Array<[string, ApiClient]>> {
  const out: Array<[string, ApiClient]> = [['the run\'s Admin', s.admin]];
  for (const role of ['admin', 'it', 'project manager', 'normal user', 'read only'] as const) {
    out.push([role, (await s.user(role, { label: `gen10-${role.replace(/\s+/g, '-')}` })).client]);
  }
  return out;
}

// Off: every endpoint of the table (on the file's own objects) is refused to every role. On
// again: the lists and the version answer 200, and no GET of the table gives the refusal that
// API access off gives.
clauseTest('GEN-10', 'refuse users of every role on every endpoint of the table while API access is off, and serve them all once it is on again', async () => {
  const d = await calls.data(TABLE);
  const users = await usersOfEveryRole();
  let offReply: string | undefined;
  await s.withSettings({ api_enabled: false }, async () => {
    for (const [, client] of users) {
      expectClientError(await client.get('/passwords.json'));
      offReply ??= (expectClientError(await client.get('/version.json'))).message;
      for (const { endpoint, ex } of await calls.callEach(client, d)) {
        if (!notServed(endpoint, ex)) expectClientError(ex);
      }
    }
  });
  await s.withSettings({ api_enabled: true }, async () => {
    for (const [who, client] of users) {
      expectStatus(await client.get('/passwords.json'), 200);
      expectStatus(await client.get('/version.json'), 200);
      for (const { endpoint, ex } of await calls.callEach(client, d, {}, TABLE.filter((e) => e.method === 'GET'))) {
        const message = (ex.json as { message?: unknown } | undefined)?.message;
        if (ex.response?.status === 403 && (message === offReply || (typeof message === 'string' && API_DISABLED.test(message)))) {
          violation(ex, `${label(endpoint)} served to ${who} once API access is on again`, `the refusal given while it was off: ${JSON.stringify(message)}`);
        }
      }
    }
  });
});

clauseTest('ERR-01', 'answer every endpoint of the table with 403 and "API access is disabled" while API access is off', async () => {
  const d = await calls.data(TABLE);
  const user = await s.user('normal user', { label: 'err01-normal-user' });
  await s.withSettings({ api_enabled: false }, async () => {
    for (const client of [s.admin, user.client]) {
      for (const { endpoint, ex } of await calls.callEach(client, d)) {
        if (!notServed(endpoint, ex)) expectErrorObject(ex, { status: 403, message: API_DISABLED });
      }
    }
  });
});
