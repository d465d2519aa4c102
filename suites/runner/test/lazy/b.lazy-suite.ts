// A file that notes when it is imported and when its test runs (run-suites.test.ts).
import { clauseTest } from '../../../harness/clause-test.ts';
import { timeline } from './timeline.ts';

timeline().push('b loaded');
clauseTest('VER-01', 'note that it ran (b)', async () => {
  timeline().push('b start');
  await new Promise((resolve) => setTimeout(resolve, 20));
});
