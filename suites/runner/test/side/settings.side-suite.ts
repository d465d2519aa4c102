// A file that runs beside others and changes a setting outside an exclusive section: the
// harness's mistake, reported as a harness error, never sent and never the server's violation.
import { clauseTest } from '../../../harness/clause-test.ts';
import { ControlClient } from '../../../harness/control.ts';

clauseTest('GEN-03', 'change a setting outside Session.withSettings', async () => {
  await new ControlClient({ url: 'http://127.0.0.1:9/__control', token: 'side-by-side-token' }).putSettings({ api_enabled: false });
});
