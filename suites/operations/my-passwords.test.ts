import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { useOperations } from './operations-helpers.ts';

const s = useSession();
const row = useOperations(s, 'My Passwords');

clauseTest('OPS-03', "answer list, show, create, update and delete of my passwords with 2XX at the product's paths", (t) => row.offered(t));
clauseTest('STAT-02', 'answer each GET operation of my passwords with 200 OK', (t) => row.gets(t));
clauseTest('STAT-03', 'answer the creation of a personal password with 201 Created', (t) => row.creations(t));
clauseTest('STAT-04', 'answer update and delete of my passwords with 204 No Content', (t) => row.noContent(t));
