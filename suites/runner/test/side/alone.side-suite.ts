// A file that runs alone: nothing else may run while it does.
import { clauseTest } from '../../../harness/clause-test.ts';
import { runsAlone } from '../../../harness/suite-api.ts';
import { mark } from './timeline.ts';

runsAlone('it reads what the others change');
clauseTest('PAG-05', 'run with nothing beside it', () => mark('alone'));
