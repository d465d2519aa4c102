import { expectStatus, violation } from '../harness/assert.ts';
import { withSettingsSnapshot } from '../harness/checks.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();
const FAULT = { method: 'GET', path: '/passwords.json', times: 1 };

clauseTest('STAT-07', 'answer an unhandled exception on the server with 500 Internal Server Error', async () => {
  await withSettingsSnapshot(s, async (control) => {
    await control.addFault(FAULT);
    expectStatus(await s.admin.get(FAULT.path), 500);
  });
});

clauseTest('STAT-08', 'describe a 500 error in a JSON object body, never HTML', async () => {
  await withSettingsSnapshot(s, async (control) => {
    await control.addFault(FAULT);
    const ex = await s.admin.get(FAULT.path);
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
});
