import { expectErrorObject } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { API_DISABLED, withSettingsSnapshot } from '../general/checks.ts';

const s = useSession();

// The control protocol's reset puts the settings back to the installation's defaults; every
// previous setting is restored afterwards.
clauseTest('GEN-11', 'keep API access off in the default settings', async () => {
  await withSettingsSnapshot(s, async (control) => {
    await control.reset();
    expectErrorObject(await s.admin.get('/version.json'), { status: 403, message: API_DISABLED });
    expectErrorObject(await s.admin.get('/passwords.json'), { status: 403, message: API_DISABLED });
  });
});
