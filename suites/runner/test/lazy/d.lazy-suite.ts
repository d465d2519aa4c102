// A file that notes when it is imported and when its test runs (run-suites.test.ts).
import { clauseTest } from '../../../harness/clause-test.ts';
import { timeline } from './timeline.ts';

timeline().push('d loaded');
clauseTest('VER-01', 'note that it ran (d)', async () => {
  timeline().push('d start');
  await new Promise((resolve) => setTimeout(resolve, 20));
});
