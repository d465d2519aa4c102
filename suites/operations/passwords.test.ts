import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { useOperations } from './operations-helpers.ts';

const s = useSession();
const row = useOperations(s, 'Passwords');

clauseTest('OPS-02', "answer every passwords operation of §1, from list to lock and unlock, with 2XX at the product's paths", (t) => row.offered(t));
clauseTest('STAT-02', 'answer each GET operation of passwords with 200 OK', (t) => row.gets(t));
clauseTest('STAT-03', 'answer the creation of a password and the upload of a file to it with 201 Created', (t) => row.creations(t));
clauseTest('STAT-04', 'answer update, security, custom fields, delete, archive, unarchive, move, lock and unlock of passwords with 204 No Content', (t) =>
  row.noContent(t),
);
