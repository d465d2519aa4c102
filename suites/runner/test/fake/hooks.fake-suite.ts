// A file whose beforeAll fails: its tests end as setup-failed, never as disabled or violated.

import { SetupError } from '../../../harness/assert.ts';
import { clauseTest } from '../../../harness/clause-test.ts';
import { beforeAll } from '../../../harness/suite-api.ts';

beforeAll(() => {
  throw new SetupError('the fixture project could not be created');
});

clauseTest('SIZE-03', 'depend on the failed beforeAll', () => {});
