import type { Exchange } from '../../core/exchange.ts';
import { expectClientError, expectErrorObject, expectStatus, violation } from '../harness/assert.ts';
import { API_DISABLED } from '../harness/checks.ts';
import { clauseTest } from '../harness/clause-test.ts';
import type { ApiClient } from '../harness/client.ts';
import { inFlight } from '../harness/config.ts';
import { type Endpoint, type EndpointData, label, notServed, TABLE, useEndpoints } from '../harness/endpoints.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();
const calls = useEndpoints(s);

async function usersOfEveryRole(): Promise<Array<[string, ApiClient]>> {
  const out: Array<[string, ApiClient]> = [["the run's Admin", s.admin]];
  const roles = ['admin', 'it', 'project manager', 'normal user', 'read only'] as const;
  const made = await Promise.all(roles.map((role) => s.user(role, { label: `gen10-${role.replace(/\s+/g, '-')}` })));
  for (const [i, role] of roles.entries()) {
    out.push([role, made[i]!.client]);
    if (role === 'normal user') out.push(['normal user over HMAC', made[i]!.hmacClient]);
  }
  return out;
}

interface Sweep {
  users: Array<[string, ApiClient]>;
  /** Every endpoint of the table, called by every user while API access is off. */
  off: Array<{ who: string; endpoint: Endpoint; ex: Exchange }>;
  d: EndpointData;
}

// One sweep while API access is off serves GEN-10 and ERR-01 (and the response oracle judges
// every reply of it): every endpoint of the table, on the file's own objects, for users of every
// role over Basic and a Normal user over HMAC.
let sweep: Promise<Sweep> | undefined;
const offSweep = () =>
  (sweep ??= (async () => {
    const d = await calls.data(TABLE);
    const users = await usersOfEveryRole();
    const off: Sweep['off'] = [];
    await s.withSettings({ api_enabled: false }, async () => {
      // Refusals change nothing, so they go out side by side, every user's at once (--concurrency
      // bounds them all); the replies are kept in the users' and the table's order.
      const replies = await Promise.all(users.map(([, client]) => calls.callEach(client, d, {}, TABLE, inFlight(s.config))));
      for (const [i, [who]] of users.entries()) for (const { endpoint, ex } of replies[i]!) off.push({ who, endpoint, ex });
    });
    return { users, off, d };
  })());

// Off: every endpoint of the table is refused to every role, over Basic and HMAC. On again: the
// lists and the version answer 200, and no GET of the table gives the refusal API access off gave.
clauseTest(
  'GEN-10',
  'refuse users of every role, over Basic and HMAC, on every endpoint of the table while API access is off, and serve them once it is on again',
  async () => {
    const { users, off, d } = await offSweep();
    let offReply: string | undefined;
    for (const { endpoint, ex } of off) {
      if (notServed(endpoint, ex)) continue;
      offReply ??= expectClientError(ex).message;
    }
    await s.withSettings(
      { api_enabled: true },
      async () => {
        // GETs change nothing: side by side, judged in order.
        const served = await Promise.all(users.map(([, client]) => Promise.all([client.get('/passwords.json'), client.get('/version.json')])));
        for (const [list, version] of served) {
          expectStatus(list, 200);
          expectStatus(version, 200);
        }
        // Every GET of the table for the Admin over Basic and a Normal user over HMAC.
        const readers = users.filter(([who]) => who === "the run's Admin" || who === 'normal user over HMAC');
        const gets = TABLE.filter((e) => e.method === 'GET');
        const replies = await Promise.all(readers.map(([, client]) => calls.callEach(client, d, {}, gets, inFlight(s.config))));
        for (const [i, [who]] of readers.entries()) {
          for (const { endpoint, ex } of replies[i]!) {
            const message = (ex.json as { message?: unknown } | undefined)?.message;
            if (ex.response?.status === 403 && (message === offReply || (typeof message === 'string' && API_DISABLED.test(message)))) {
              violation(
                ex,
                `${label(endpoint)} served to ${who} once API access is on again`,
                `the refusal given while it was off: ${JSON.stringify(message)}`,
              );
            }
          }
        }
        // Only requests: with API access on between sections (as it is on every installation the run
        // can test), the reads run beside the other files.
      },
      { requestsOnly: true },
    );
  },
);

clauseTest(
  'ERR-01',
  'answer every endpoint of the table with 403 and "API access is disabled" for every role, over Basic and HMAC, while API access is off',
  async () => {
    for (const { endpoint, ex } of (await offSweep()).off) {
      if (!notServed(endpoint, ex)) expectErrorObject(ex, { status: 403, message: API_DISABLED });
    }
  },
);
