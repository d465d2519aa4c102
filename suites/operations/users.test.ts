import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { useOperations } from './operations-helpers.ts';

const s = useSession();
const row = useOperations(s, 'Users');

clauseTest(
  'OPS-06',
  "answer list, show, create, update, activate, deactivate, convert to ldap and to normal, and delete of users with 2XX at the product's paths",
  (t) => row.offered(t),
);
clauseTest('STAT-02', 'answer each GET operation of users with 200 OK', (t) => row.gets(t));
clauseTest('STAT-03', 'answer the creation of a user with 201 Created', (t) => row.creations(t));
clauseTest('STAT-04', 'answer update, activate, deactivate, conversions and deletion of users with 204 No Content', (t) => row.noContent(t));
