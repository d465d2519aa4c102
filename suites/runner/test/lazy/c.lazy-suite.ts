// A file that notes when it is imported and when its test runs (run-suites.test.ts).
import { clauseTest } from '../../../harness/clause-test.ts';
import { timeline } from './timeline.ts';

timeline().push('c loaded');
clauseTest('VER-01', 'note that it ran (c)', async () => {
  timeline().push('c start');
  await new Promise((resolve) => setTimeout(resolve, 20));
});
