import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { useOperations } from './operations-helpers.ts';

const s = useSession();
const row = useOperations(s, 'Projects');

clauseTest(
  'OPS-01',
  "answer list, show, create, update, passwords, security, archive, unarchive, files, upload and delete of projects with 2XX at the product's paths",
  (t) => row.offered(t),
);
clauseTest('STAT-02', 'answer each GET operation of projects with 200 OK', (t) => row.gets(t));
clauseTest('STAT-03', 'answer the creation of a project and the upload of a file to it with 201 Created', (t) => row.creations(t));
clauseTest('STAT-04', 'answer update, archive, unarchive and delete of projects with 204 No Content', (t) => row.noContent(t));
