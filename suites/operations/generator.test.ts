import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { useOperations } from './operations-helpers.ts';

const s = useSession();
const row = useOperations(s, 'Passwords generator');

clauseTest('OPS-08', "answer GET /generate_password.json with 2XX (the product's path)", (t) => row.offered(t));
clauseTest('STAT-02', 'answer GET /generate_password.json with 200 OK', (t) => row.gets(t));
