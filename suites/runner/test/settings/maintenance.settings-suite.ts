// A file that turns Maintenance Mode on and stays in the section: run by settings.test.ts, which
// interrupts the run there, or runs it where the settings cannot be read.

import { clauseTest } from '../../../harness/clause-test.ts';
import { useSession } from '../../../harness/session.ts';
import { mark } from '../side/timeline.ts';

const s = useSession();

clauseTest('ERR-04', 'hold Maintenance Mode on', async (t) => {
  await s.withSettings({ maintenance_mode: true }, async () => {
    mark('maintenance on');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 20_000);
      t.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  });
});
