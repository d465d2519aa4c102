import { expectClientError, expectStatus } from '../harness/assert.ts';
import { withSettingsSnapshot } from '../harness/checks.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();

// "Allowed values are: all users (default), or only users flagged "API only"." The default is
// what the control protocol's reset restores; API access itself is off by default, so it is
// switched on.
clauseTest('GEN-12', 'let users not flagged "API only" call the API under the default setting', async () => {
  const user = await s.user('normal user', { api_only: false, label: 'gen12-normal-user' });
  const admin = await s.user('admin', { api_only: false, label: 'gen12-admin' });
  await withSettingsSnapshot(s, async (control) => {
    await control.reset();
    await control.putSettings({ api_enabled: true });
    expectStatus(await user.client.get('/passwords.json'), 200);
    expectStatus(await admin.client.get('/passwords.json'), 200);
  });
});

clauseTest('GEN-13', 'refuse users not flagged "API only", Admins included, while the API is restricted to them', async () => {
  const user = await s.user('normal user', { api_only: false, label: 'gen13-normal-user' });
  const admin = await s.user('admin', { api_only: false, label: 'gen13-admin' });
  await s.withSettings({ api_users: 'api_only' }, async () => {
    // Side by side: the section holds the target for as long as its longest request.
    const [list, version] = await Promise.all([user.client.get('/passwords.json'), admin.client.get('/version.json')]);
    expectClientError(list);
    expectClientError(version);
  });
});

clauseTest('GEN-14', 'accept users flagged "API only" while the API is restricted to them', async () => {
  const user = await s.user('normal user', { api_only: true, label: 'gen14-normal-user' });
  const admin = await s.user('admin', { api_only: true, label: 'gen14-admin' });
  await s.withSettings({ api_users: 'api_only' }, async () => {
    const [list, version] = await Promise.all([user.client.get('/passwords.json'), admin.client.get('/version.json')]);
    expectStatus(list, 200);
    expectStatus(version, 200);
  });
});

// The restriction holds whatever the method of authentication and whatever the request does.
clauseTest('GEN-13', 'refuse a user not flagged "API only" over HMAC and on a write while the API is restricted', async () => {
  const user = await s.user('normal user', { api_only: false, label: 'gen13-hmac' });
  await s.withSettings({ api_users: 'api_only' }, async () => {
    // A write the user may make when the API is open to all: a personal password of their own.
    const [read, write] = await Promise.all([
      user.hmacClient.get('/passwords.json'),
      user.client.post('/my_passwords.json', { name: s.fixtures.name('gen13-refused') }),
    ]);
    expectClientError(read);
    expectClientError(write);
  });
});

clauseTest('GEN-14', 'accept a user flagged "API only" over HMAC while the API is restricted to them', async () => {
  const user = await s.user('normal user', { api_only: true, label: 'gen14-hmac' });
  await s.withSettings({ api_users: 'api_only' }, async () => {
    expectStatus(await user.hmacClient.get('/passwords.json'), 200);
  });
});
