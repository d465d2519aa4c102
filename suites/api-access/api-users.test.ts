import { expectClientError, expectStatus } from '../harness/assert.ts';
import { withSettingsSnapshot } from '../harness/checks.ts';
import { clauseTest } from '../harness/clause-test.ts';
import type { FixtureUser } from '../harness/fixtures.ts';
import { useSession } from '../harness/session.ts';
import { testsSideBySide } from '../harness/suite-api.ts';

const s = useSession();
/** The checks under "API only" only send requests: the four share one section (Session.withSettings, suites/harness/gate.ts). */
const REQUESTS_ONLY = { requestsOnly: true };

testsSideBySide('the checks under "API only" share users made once and only send requests; the reset of GEN-12 runs on its own first');

// "Allowed values are: all users (default), or only users flagged "API only"." The default is
// what the control protocol's reset restores; API access itself is off by default, so it is
// switched on.
clauseTest(
  'GEN-12',
  'let users not flagged "API only" call the API under the default setting',
  async () => {
    const [user, admin] = await Promise.all([
      s.user('normal user', { api_only: false, label: 'gen12-normal-user' }),
      s.user('admin', { api_only: false, label: 'gen12-admin' }),
    ]);
    await withSettingsSnapshot(s, async (control) => {
      await control.reset();
      await control.putSettings({ api_enabled: true });
      const [normal, asAdmin] = await Promise.all([user.client.get('/passwords.json'), admin.client.get('/passwords.json')]);
      expectStatus(normal, 200);
      expectStatus(asAdmin, 200);
    });
  },
  { afterOthers: true },
);

/**
 * The users of the checks under "API only", made once, side by side, for all four: the checks
 * then ask for the setting together and share one section (a check whose users were still being
 * made would find the section gone and open another).
 */
let made: Promise<Record<'plain' | 'plainAdmin' | 'plainHmac' | 'flagged' | 'flaggedAdmin' | 'flaggedHmac', FixtureUser>> | undefined;
function users() {
  made ??= (async () => {
    const [plain, plainAdmin, plainHmac, flagged, flaggedAdmin, flaggedHmac] = await Promise.all([
      s.user('normal user', { api_only: false, label: 'gen13-normal-user' }),
      s.user('admin', { api_only: false, label: 'gen13-admin' }),
      s.user('normal user', { api_only: false, label: 'gen13-hmac' }),
      s.user('normal user', { api_only: true, label: 'gen14-normal-user' }),
      s.user('admin', { api_only: true, label: 'gen14-admin' }),
      s.user('normal user', { api_only: true, label: 'gen14-hmac' }),
    ]);
    return { plain, plainAdmin, plainHmac, flagged, flaggedAdmin, flaggedHmac };
  })();
  return made;
}

clauseTest('GEN-13', 'refuse users not flagged "API only", Admins included, while the API is restricted to them', async () => {
  const { plain, plainAdmin } = await users();
  await s.withSettings(
    { api_users: 'api_only' },
    async () => {
      const [list, version] = await Promise.all([plain.client.get('/passwords.json'), plainAdmin.client.get('/version.json')]);
      expectClientError(list);
      expectClientError(version);
    },
    REQUESTS_ONLY,
  );
});

clauseTest('GEN-14', 'accept users flagged "API only" while the API is restricted to them', async () => {
  const { flagged, flaggedAdmin } = await users();
  await s.withSettings(
    { api_users: 'api_only' },
    async () => {
      const [list, version] = await Promise.all([flagged.client.get('/passwords.json'), flaggedAdmin.client.get('/version.json')]);
      expectStatus(list, 200);
      expectStatus(version, 200);
    },
    REQUESTS_ONLY,
  );
});

// The restriction holds whatever the method of authentication and whatever the request does.
clauseTest('GEN-13', 'refuse a user not flagged "API only" over HMAC and on a write while the API is restricted', async () => {
  const { plainHmac } = await users();
  await s.withSettings(
    { api_users: 'api_only' },
    async () => {
      // A write the user may make when the API is open to all: a personal password of their own.
      const [read, write] = await Promise.all([
        plainHmac.hmacClient.get('/passwords.json'),
        plainHmac.client.post('/my_passwords.json', { name: s.fixtures.name('gen13-refused') }),
      ]);
      expectClientError(read);
      expectClientError(write);
    },
    REQUESTS_ONLY,
  );
});

clauseTest('GEN-14', 'accept a user flagged "API only" over HMAC while the API is restricted to them', async () => {
  const { flaggedHmac } = await users();
  await s.withSettings({ api_users: 'api_only' }, async () => expectStatus(await flaggedHmac.hmacClient.get('/passwords.json'), 200), REQUESTS_ONLY);
});
