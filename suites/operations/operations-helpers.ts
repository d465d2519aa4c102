import type { Exchange } from '../../core/exchange.ts';
import { expectNoBody, expectResponse, expectStatus, violation } from '../harness/assert.ts';
import { isSuccess } from '../harness/checks.ts';
import type { ClauseTestContext } from '../harness/clause-test.ts';
import { type Endpoint, type EndpointCall, entriesOf, label, notServed, OPERATIONS, type Resource, useEndpoints } from '../harness/endpoints.ts';
import type { Session } from '../harness/session.ts';

/**
 * The operations of one row of §1's table ("Operations offered per resource"), each called once
 * as the Admin at the product's path with the product's payload, on objects the run made for it
 * (suites/harness/endpoints.ts), and the checks the spec allows on their replies.
 */
export interface RowOperations {
  /** Every operation of the row answers 2XX at each of its paths (the row's OPS clause, INFO). */
  offered(t: ClauseTestContext): Promise<void>;
  /** "usually 200 OK for GET" (STAT-02, SHOULD): every GET of the row that succeeded. */
  gets(t: ClauseTestContext): Promise<void>;
  /** "201 Created for POST that creates" (STAT-03, SHOULD): every creation of the row that succeeded. */
  creations(t: ClauseTestContext): Promise<void>;
  /** "PUT and DELETE requests that return no content answer 204 No Content" (STAT-04, MUST). */
  noContent(t: ClauseTestContext): Promise<void>;
}

type Sent = { endpoint: Endpoint; ex: Exchange };

export function useOperations(s: Session, resource: Resource): RowOperations {
  const calls = useEndpoints(s);
  const entries = entriesOf(resource);
  let replies: Promise<EndpointCall[]> | undefined;
  const all = () => (replies ??= calls.succeedEach(entries));

  /** The successes among the replies to the entries `pick` selects; a row with none is unverifiable. */
  const successes = async (t: ClauseTestContext, pick: (e: Endpoint) => boolean, what: string): Promise<Sent[]> => {
    const out = (await all()).filter((o): o is Sent => 'ex' in o && pick(o.endpoint) && !notServed(o.endpoint, o.ex) && isSuccess(o.ex));
    if (out.length === 0) t.unverifiable(`no ${what} of ${resource} succeeded at the product's paths (see the row's OPS clause)`);
    return out;
  };

  return {
    async offered(t) {
      const outcomes = await all();
      const missing: Array<{ what: string; ex?: Exchange }> = [];
      for (const op of OPERATIONS[resource]) {
        const realised = outcomes.filter((o) => o.endpoint.ops?.includes(`${resource}: ${op}`));
        if (realised.length === 0) throw new Error(`endpoint table: no entry performs "${resource}: ${op}"`);
        t.observe(
          op,
          realised.map((o) => `${label(o.endpoint)}: ${'ex' in o ? (o.ex.response?.status ?? o.ex.error) : `not sent (${o.skipped})`}`),
        );
        for (const o of realised) {
          if (!('ex' in o)) missing.push({ what: `${op}: ${label(o.endpoint)} not sent: ${o.skipped}` });
          else if (!isSuccess(o.ex)) missing.push({ what: `${op}: ${label(o.endpoint)} answered ${o.ex.response?.status ?? o.ex.error}`, ex: o.ex });
        }
      }
      if (missing.length > 0) {
        violation(
          missing.find((m) => m.ex)?.ex,
          `every operation of the ${resource} row answering 2XX at the product's path`,
          missing.map((m) => m.what).join('; '),
        );
      }
    },
    async gets(t) {
      for (const { ex } of await successes(t, (e) => e.method === 'GET', 'GET')) expectStatus(ex, 200);
    },
    async creations(t) {
      for (const { ex } of await successes(t, (e) => e.creates !== undefined, 'creation')) expectStatus(ex, 201);
    },
    async noContent(t) {
      let judged = 0;
      for (const { endpoint, ex } of await successes(t, (e) => e.method === 'PUT' || e.method === 'DELETE', 'PUT or DELETE')) {
        expectResponse(ex, `204 No Content for ${label(endpoint)}`);
        // The rule covers "PUT and DELETE requests that return no content"; one that returns content is outside it.
        if (ex.response.status !== 204 && ex.response.body.trim() !== '') continue;
        expectStatus(ex, 204);
        expectNoBody(ex);
        judged++;
      }
      if (judged === 0) t.unverifiable(`every PUT and DELETE of ${resource} that succeeded returned content, which the 204 rule does not cover`);
    },
  };
}
