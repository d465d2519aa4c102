import type { Exchange } from '../../core/exchange.ts';
import { expectStatus, violation } from '../harness/assert.ts';
import { withSettingsSnapshot } from '../harness/checks.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { beforeAll } from '../harness/suite-api.ts';
import { lazy } from '../resources/resource-helpers.ts';

const s = useSession();

// Decision: the fault (control protocol POST /faults) is set on the show of a password of the
// run's own, which no one else asks for. A fault on a path others read (GET /passwords.json) is
// taken by whichever request comes first: on an installation in use, another user's.
let fault: { method: string; path: string; times: number };

beforeAll(async () => {
  const password = await s.fixtures.createPassword(await s.fixtures.createProject());
  fault = { method: 'GET', path: `/passwords/${password}.json`, times: 1 };
});

// Decision (issue 38: a section holds the target to itself): one fault, one section, and its one
// reply judged by both clauses (its status, its body); the settings' snapshot is read beside the
// fault's injection, which changes no setting.
const faulted = lazy(
  (): Promise<Exchange> =>
    withSettingsSnapshot(
      s,
      async (control) => {
        await control.addFault(fault);
        return s.admin.get(fault.path);
      },
      { faultsOnly: true },
    ),
);

clauseTest('STAT-07', 'answer an unhandled exception on the server with 500 Internal Server Error', async () => {
  expectStatus(await faulted(), 500);
});

clauseTest('STAT-08', 'describe a 500 error in a JSON object body, never HTML', async () => {
  const ex = await faulted();
  expectStatus(ex, 500);
  const json = ex.json;
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    violation(
      ex,
      'a JSON object describing the error',
      ex.response?.body === '' ? 'an empty body' : json === undefined ? 'a body that is not JSON' : `JSON ${Array.isArray(json) ? 'array' : String(json)}`,
    );
  }
});
