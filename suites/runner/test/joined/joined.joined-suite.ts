// A file whose tests run side by side and ask for settings (Session.withSettings `requestsOnly`):
// run by settings.test.ts. Two ask for "HMAC only" and share one section; the third, beside them
// and in no section, sends an HTTP Basic request while the section is held: it must wait and be
// sent under the settings put back.
import { clauseTest } from '../../../harness/clause-test.ts';
import { activeGate } from '../../../harness/gate.ts';
import { useSession } from '../../../harness/session.ts';
import { testsSideBySide } from '../../../harness/suite-api.ts';
import { mark, timeline } from '../side/timeline.ts';

const s = useSession();
testsSideBySide('the fake checks only send requests');

const hmacOnly = (name: string) => async () => {
  await s.withSettings(
    { auth_methods: 'hmac' },
    async () => {
      const status = (await s.admin.get('/passwords.json')).response?.status;
      timeline().push(`${name}: held ${activeGate()?.joined() ?? false}, Basic ${status}`);
      // Holds the section until the sibling has asked for its request (at most 2 s).
      await mark(`${name} waits`, 2000, 'sibling asks');
    },
    { requestsOnly: true },
  );
};

clauseTest('AUTH-07', 'ask for HMAC only', hmacOnly('first'));
clauseTest('AUTH-07', 'ask for HMAC only too', hmacOnly('second'));
clauseTest('AUTH-06', 'send a Basic request while the others hold the section', async () => {
  await mark('sibling waits', 2000, 'second waits start');
  const sent = s.admin.get('/passwords.json');
  timeline().push('sibling asks');
  timeline().push(`sibling: Basic ${(await sent).response?.status}`);
});
