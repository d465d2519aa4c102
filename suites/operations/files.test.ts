import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { useOperations } from './operations-helpers.ts';

const s = useSession();
const row = useOperations(s, 'Files');

clauseTest('OPS-04', "answer list, show, notes, maximum size, uploads folder, upload, download and delete of files with 2XX at the product's paths", (t) =>
  row.offered(t),
);
clauseTest('STAT-02', 'answer each GET operation of files with 200 OK', (t) => row.gets(t));
clauseTest('STAT-03', 'answer the upload of a file to a project and to a password with 201 Created', (t) => row.creations(t));
clauseTest('STAT-04', "answer the update of a file's notes and its deletion with 204 No Content", (t) => row.noContent(t));
