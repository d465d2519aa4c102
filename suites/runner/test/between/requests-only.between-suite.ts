// A file whose sections only send requests (Session.withSettings `requestsOnly`): run by
// settings.test.ts, which reads from the timeline which of them held the gate.
import { clauseTest } from '../../../harness/clause-test.ts';
import { activeGate } from '../../../harness/gate.ts';
import { useSession } from '../../../harness/session.ts';
import { timeline } from '../side/timeline.ts';

const s = useSession();
const held = () => String(activeGate()?.holding() ?? false);

clauseTest('AUTH-06', 'send requests under the settings in force between sections, and under others', async () => {
  await s.withSettings(
    { auth_methods: 'basic+hmac' },
    async () => timeline().push(`as between: held ${held()}, status ${(await s.admin.get('/passwords.json')).response?.status}`),
    {
      requestsOnly: true,
    },
  );
  await s.withSettings({ auth_methods: 'basic' }, async () => timeline().push(`changed: held ${held()}`), { requestsOnly: true });
  await s.withSettings({ auth_methods: 'basic+hmac' }, async () => timeline().push(`not requests only: held ${held()}`));
});
