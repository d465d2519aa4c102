import type { Exchange } from '../../core/exchange.ts';
import { expectStatus, violation } from '../harness/assert.ts';
import { MAINTENANCE_MESSAGE } from '../harness/checks.ts';
import { clauseTest } from '../harness/clause-test.ts';
import type { ApiClient } from '../harness/client.ts';
import { inFlight } from '../harness/config.ts';
import { label, TABLE, useEndpoints } from '../harness/endpoints.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();
const calls = useEndpoints(s);

// "Installation in Maintenance Mode (all requests)": every endpoint of the table (the product's
// paths included, on the file's own objects), an unknown path and a method other than the four,
// from every kind of caller, with and without Content-Type. Asked once for both clauses.
let replies: Promise<Array<{ what: string; ex: Exchange }>> | undefined;
const repliesInMaintenance = () => (replies ??= askInMaintenance());

async function askInMaintenance(): Promise<Array<{ what: string; ex: Exchange }>> {
  const d = await calls.data(TABLE);
  const user = await s.user('normal user', { label: 'maintenance-normal-user' });
  const callers: Array<[string, ApiClient]> = [
    ['Admin', s.admin],
    ['Normal user', user.client],
    ['no credentials', s.anonymous],
    ['wrong password', s.admin.withAuth({ kind: 'basic', user: s.config.user, password: `${s.config.password}-wrong` })],
  ];
  const hmac = await s.adminHmac();
  if (hmac) callers.push(['Admin over HMAC', hmac]);
  const out: Array<{ what: string; ex: Exchange }> = [];
  await s.withSettings({ maintenance_mode: true }, async () => {
    // Refusals change nothing, so they go out side by side, every caller's at once (--concurrency
    // bounds them all); the replies are kept in the callers' and the table's order.
    const replies = await Promise.all(
      callers.map(async ([, client]) => ({
        table: await calls.callEach(client, d, {}, TABLE, inFlight(s.config)),
        others: await Promise.all([
          client.get('/pmv6-unknown.json'),
          client.request({ method: 'PATCH', path: '/passwords.json', json: {} }),
          client.get('/passwords.json', { contentType: null }),
        ]),
      })),
    );
    for (const [i, [who]] of callers.entries()) {
      const { table, others } = replies[i]!;
      for (const { endpoint, ex } of table) out.push({ what: `${who}: ${label(endpoint)}`, ex });
      out.push({ what: `${who}: GET /pmv6-unknown.json`, ex: others[0]! });
      out.push({ what: `${who}: PATCH /passwords.json`, ex: others[1]! });
      out.push({ what: `${who} without Content-Type: GET /passwords.json`, ex: others[2]! });
    }
  });
  return out;
}

clauseTest('ERR-04', 'answer every request, from any caller, to any path and with any method, with 503 in Maintenance Mode', async () => {
  for (const { ex } of await repliesInMaintenance()) expectStatus(ex, 503);
});

clauseTest('ERR-05', 'give the message "This installation is in Maintenance Mode." to every request in Maintenance Mode', async () => {
  for (const { what, ex } of await repliesInMaintenance()) {
    const message = (ex.json as { message?: unknown } | undefined)?.message;
    if (message !== MAINTENANCE_MESSAGE) {
      violation(
        ex,
        `message ${JSON.stringify(MAINTENANCE_MESSAGE)} (${what})`,
        message === undefined ? 'no message field in a JSON body' : `message ${JSON.stringify(message)}`,
      );
    }
  }
});
