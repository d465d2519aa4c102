import type { Exchange } from '../../core/exchange.ts';
import { expectClientError, expectResponse, expectStatus, SetupError, violation } from '../harness/assert.ts';
import { type ClauseTestContext, clauseTest } from '../harness/clause-test.ts';
import type { ApiClient } from '../harness/client.ts';
import type { ControlClient } from '../harness/control.ts';
import type { FixtureUser } from '../harness/fixtures.ts';
import { together } from '../harness/in-order.ts';
import { useSession } from '../harness/session.ts';
import { testsSideBySide } from '../harness/suite-api.ts';

const s = useSession();
const PATH = '/passwords.json';
/** Every section of this file only sends requests: one whose settings are already in force runs beside the other files. */
const REQUESTS_ONLY = { requestsOnly: true };

function control(): ControlClient {
  if (!s.control) throw new SetupError('the method and key-expiry settings need the control protocol');
  return s.control;
}

/** HMAC as `user` with keys issued `daysAgo` days ago (earlier keys of the user stop working). */
async function keysIssued(user: FixtureUser, daysAgo: number): Promise<ApiClient> {
  const keys = await control().issueApiKeys(user.id, daysAgo);
  return s.admin.withAuth({ kind: 'hmac', publicKey: keys.public_key, privateKey: keys.private_key });
}

// The HMAC refusals prove something only when a correct signature is accepted (AUTH-03).
async function expectHmacAccepted(t: ClauseTestContext, client: ApiClient, what: string): Promise<void> {
  const ex = await client.get(PATH);
  if (ex.response?.status !== 200) t.unverifiable(`${what} was not accepted (status ${ex.response?.status ?? ex.error}), so AUTH-03 does not hold here`);
}

function observeReply(t: ClauseTestContext, label: string, ex: Exchange): void {
  expectResponse(ex);
  const body = ex.json as { message?: unknown } | undefined;
  t.observe(label, { status: ex.response.status, ...(typeof body?.message === 'string' ? { message: body.message } : {}) });
}

// Decision (issue 38): the tests run side by side, and within a test the probes under different
// settings go out together: the calls that ask the same settings (every "basic", every "hmac",
// every expiry of 1 or of 3 days) share one section (Session.withSettings, requestsOnly), and a
// probe under the settings in force between sections (both methods, no expiry) opens none and is
// sent outside them. Issuing keys to a user revokes the user's earlier keys, so each probe of keys
// has a user of its own, made before any section opens.
testsSideBySide('each test has its own users and keys and only sends requests under its settings; those asking the same settings share a section');

// Decision: user labels unique to this file, because fixture names carry only the run ID and a
// per-file counter, so the same label in two files of one run collides.
clauseTest('AUTH-06', 'accept HTTP Basic for the Admin and a Normal user under "basic+hmac" and under "basic"', async () => {
  const user = await s.user('normal user', { label: 'methods-1' });
  await together(
    (['basic+hmac', 'basic'] as const).map((methods) =>
      s.withSettings(
        { auth_methods: methods },
        async () => {
          const [admin, normal] = await Promise.all([s.admin.get(PATH), user.client.get(PATH)]);
          expectStatus(admin, 200);
          expectStatus(normal, 200);
        },
        REQUESTS_ONLY,
      ),
    ),
  );
});

// The spec gives no status for a refused method, so any 4XX with the error object will do.
clauseTest('AUTH-07', 'refuse HTTP Basic with correct credentials while only HMAC is enabled', async (t) => {
  const user = await s.user('normal user', { label: 'methods-2' });
  await together([
    s.withSettings(
      { auth_methods: 'basic+hmac' },
      async () => {
        const ex = await user.client.get(PATH);
        if (ex.response?.status !== 200) t.unverifiable(`HTTP Basic was not accepted under "basic+hmac" either (status ${ex.response?.status ?? ex.error})`);
      },
      REQUESTS_ONLY,
    ),
    s.withSettings(
      { auth_methods: 'hmac' },
      async () => {
        const clients = [s.admin, user.client];
        const replies = await Promise.all(clients.map((client) => client.get(PATH)));
        for (const [i, ex] of replies.entries()) {
          expectClientError(ex);
          observeReply(t, `Basic under "hmac" (${i === 0 ? 'Admin' : 'Normal user'})`, ex);
        }
      },
      REQUESTS_ONLY,
    ),
  ]);
});

clauseTest('AUTH-08', 'refuse HMAC with a correct signature while only HTTP Basic is enabled', async (t) => {
  const user = await s.user('normal user', { label: 'methods-3' });
  await together([
    s.withSettings(
      { auth_methods: 'basic+hmac' },
      () => expectHmacAccepted(t, user.hmacClient, 'a correctly signed request under "basic+hmac"'),
      REQUESTS_ONLY,
    ),
    s.withSettings(
      { auth_methods: 'basic' },
      async () => {
        const ex = await user.hmacClient.get(PATH);
        expectClientError(ex);
        observeReply(t, 'HMAC under "basic"', ex);
      },
      REQUESTS_ONLY,
    ),
  ]);
});

clauseTest('AUTH-09', 'accept HMAC for a GET and a POST while only HMAC is enabled', async () => {
  const user = await s.user('admin', { label: 'methods-4' });
  await s.withSettings(
    { auth_methods: 'hmac' },
    async () => {
      // The fixtures' own Basic requests would be refused here, so the project is created over HMAC;
      // a refused creation is this clause's failure, not a failed setup. The GET and the POST go
      // out together; the GET is judged first.
      const create = async () => {
        try {
          await s.fixtures.createProject(user.hmacClient);
        } catch (e) {
          if (e instanceof SetupError && e.exchange)
            violation(
              e.exchange,
              'status 201 for POST /projects.json signed with HMAC',
              e.exchange.response ? `status ${e.exchange.response.status}` : 'no response',
            );
          throw e;
        }
      };
      const [read, created] = await Promise.allSettled([user.hmacClient.get(PATH), create()]);
      if (read.status === 'rejected') throw read.reason;
      expectStatus(read.value, 200);
      if (created.status === 'rejected') throw created.reason;
    },
    REQUESTS_ONLY,
  );
});

/** Keys issued `daysAgo` days ago accepted with no expiry and refused under an expiry of `days`, side by side. */
async function expired(t: ClauseTestContext, client: ApiClient, days: number, daysAgo: number): Promise<void> {
  await together([
    s.withSettings({ hmac_key_expiry_days: null }, () => expectHmacAccepted(t, client, `keys ${daysAgo} days old with no expiry`), REQUESTS_ONLY),
    s.withSettings(
      { hmac_key_expiry_days: days },
      async () => {
        const ex = await client.get(PATH);
        expectClientError(ex);
        observeReply(t, `keys ${daysAgo} days old, expiry ${days} days`, ex);
      },
      REQUESTS_ONLY,
    ),
  ]);
}

// Decision: each key is N + 1 days old, well past the limit; what a key exactly N days old gets
// is recorded under AUTH-11. One user for each expiry, so that the three go out together.
clauseTest('AUTH-10', 'refuse HMAC keys issued 2, 4 and 31 days ago under an expiry of 1, 3 and 30 days', async (t) => {
  await together(
    [1, 3, 30].map(async (days) => {
      const user = await s.user('normal user', { label: `methods-5-${days}` });
      await expired(t, await keysIssued(user, days + 1), days, days + 1);
    }),
  );
});

clauseTest('AUTH-11', 'accept keys 1 day old under an expiry of 3 days, keys 400 days old with no expiry, and record keys exactly 3 days old', async (t) => {
  const [young, old, edge] = await Promise.all(
    [1, 400, 3].map(async (daysAgo) => keysIssued(await s.user('normal user', { label: `methods-6-${daysAgo}` }), daysAgo)),
  );
  await together([
    s.withSettings(
      { hmac_key_expiry_days: 3 },
      async () => {
        const [y, ex] = await Promise.all([young!.get(PATH), edge!.get(PATH)]);
        expectStatus(y, 200);
        // The spec does not say whether "after N days" includes day N.
        expectResponse(ex);
        if (ex.response.status !== 200) expectClientError(ex);
        observeReply(t, 'keys exactly 3 days old, expiry 3 days', ex);
      },
      REQUESTS_ONLY,
    ),
    s.withSettings({ hmac_key_expiry_days: null }, async () => expectStatus(await old!.get(PATH), 200), REQUESTS_ONLY),
  ]);
});

// Expiry holds for every role and every kind of request, not only a Normal user's GET.
clauseTest('AUTH-10', "refuse an Admin's HMAC keys issued 2 days ago under an expiry of 1 day, on a GET and on a POST", async (t) => {
  const user = await s.user('admin', { label: 'methods-7' });
  const client = await keysIssued(user, 2);
  await together([
    s.withSettings({ hmac_key_expiry_days: null }, () => expectHmacAccepted(t, client, "an Admin's keys 2 days old with no expiry"), REQUESTS_ONLY),
    s.withSettings(
      { hmac_key_expiry_days: 1 },
      async () => {
        const [read, ex] = await Promise.all([client.get(PATH), client.post('/projects.json', { name: s.fixtures.name('expired-write'), parent_id: 0 })]);
        expectClientError(read);
        expectClientError(ex);
        observeReply(t, "an Admin's keys 2 days old on a POST, expiry 1 day", ex);
      },
      REQUESTS_ONLY,
    ),
  ]);
});
