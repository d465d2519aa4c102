import type { Level } from '../catalogue/clauses.ts';
import { type RunConfig, setRunConfig } from '../harness/config.ts';
import type { SuiteDeclarations } from '../harness/suite-api.ts';
import { CONFORMANCE_EXCLUDE, CONFORMANCE_INCLUDE } from './layout.ts';
import { errorText, loadSuiteFile, suiteFiles } from './suite-runner.ts';

export interface DeclaredTest {
  /** the suite file, relative to the package root: suites/pagination/links.test.ts */
  file: string;
  ids: string[];
  level: Level;
  /** the test's title: the behaviour it checks */
  behaviour: string;
  /** whether it would run (false for a test declared as skipped) */
  runs: boolean;
}

const COLLECT_CONFIG: RunConfig = {
  target: 'http://127.0.0.1:9',
  user: 'collect',
  password: 'collect',
  // With a control protocol, so that no test is left out for the lack of one.
  control: { url: 'http://127.0.0.1:9/__control', token: 'collect' },
  runId: 'list',
  seed: 0,
  readOnly: false,
  timeoutMs: 1,
};

// The tests the suites declare, as the runner collects them: each file is imported (no hook and
// no test body runs, so nothing is sent) and every test's clause IDs and level are read from the
// meta clauseTest gives it. `pmv6 run --list`, the self-checks and the kill matrix read this.
export async function declaredTests(): Promise<DeclaredTest[]> {
  const out: DeclaredTest[] = [];
  setRunConfig(COLLECT_CONFIG);
  try {
    for (const file of suiteFiles(CONFORMANCE_INCLUDE, CONFORMANCE_EXCLUDE)) {
      let declared: SuiteDeclarations;
      try {
        declared = await loadSuiteFile(file);
      } catch (e) {
        throw new Error(`collecting ${file} failed: ${errorText(e)}`);
      }
      for (const test of declared.tests) {
        out.push({ file, ids: test.meta.clauses, level: test.meta.level, behaviour: test.meta.behaviour, runs: test.body !== undefined });
      }
    }
    return out;
  } finally {
    setRunConfig(undefined);
  }
}
