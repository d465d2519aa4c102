import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { useOperations } from './operations-helpers.ts';

const s = useSession();
const row = useOperations(s, 'Groups');

clauseTest('OPS-07', "answer list, show, create, update, add user, delete user and delete of groups with 2XX at the product's paths", (t) => row.offered(t));
clauseTest('STAT-02', 'answer each GET operation of groups with 200 OK', (t) => row.gets(t));
clauseTest('STAT-03', 'answer the creation of a group with 201 Created', (t) => row.creations(t));
clauseTest('STAT-04', 'answer update, add user, delete user and delete of groups with 204 No Content', (t) => row.noContent(t));
