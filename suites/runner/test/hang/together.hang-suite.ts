// Requests sent together to paths that hang, then a read that is answered: run by hang.test.ts
// against a target that hangs on the log and answers everything else. Together they are one
// wait, not a target that stopped answering.

import { clauseTest } from '../../../harness/clause-test.ts';
import { useSession } from '../../../harness/session.ts';

const s = useSession();

clauseTest('GEN-03', 'read the log four times at once, then the version', async () => {
  await Promise.all([1, 2, 3, 4].map((page) => s.admin.get(`/log/page/${page}.json`)));
  await s.admin.get('/version.json');
});
