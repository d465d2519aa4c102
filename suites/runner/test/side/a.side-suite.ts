// A file that may run beside others: two tests that each take a while.
import { clauseTest } from '../../../harness/clause-test.ts';
import { mark } from './timeline.ts';

clauseTest('PAG-03', 'take a while (a 1)', () => mark('a1', 3000, 'b1 start'));
clauseTest('PAG-04', 'take a while (a 2)', () => mark('a2'));
