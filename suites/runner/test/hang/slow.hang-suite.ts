// A file that makes a project, then reads on and on: run by hang.test.ts against a target that
// stops answering after a while.

import { clauseTest } from '../../../harness/clause-test.ts';
import { useSession } from '../../../harness/session.ts';

const s = useSession();

clauseTest('GEN-01', 'make a project', async () => {
  await s.fixtures.createProject();
});
for (let i = 0; i < 6; i++) {
  clauseTest('GEN-03', `read the version, round ${i}`, async () => {
    for (let j = 0; j < 5; j++) await s.admin.get('/version.json');
  });
}
