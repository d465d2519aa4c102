// A file that may run beside others: two tests that each take a while.
import { clauseTest } from '../../../harness/clause-test.ts';
import { mark } from './timeline.ts';

clauseTest('PAG-03', 'take a while (b 1)', () => mark('b1'));
clauseTest('PAG-04', 'take a while (b 2)', () => mark('b2'));
