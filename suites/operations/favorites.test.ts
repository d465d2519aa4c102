import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { useOperations } from './operations-helpers.ts';

const s = useSession();
const row = useOperations(s, 'Favorites');

clauseTest('OPS-05', "answer the favorite lists and making a password or a project favorite and not favorite with 2XX at the product's paths", (t) =>
  row.offered(t),
);
clauseTest('STAT-02', 'answer the lists of favorite passwords and projects with 200 OK', (t) => row.gets(t));
clauseTest('STAT-04', 'answer making a password or a project not favorite (DELETE) with 204 No Content', (t) => row.noContent(t));
