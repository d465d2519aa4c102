import { relative } from 'node:path';
import type { Level } from '../catalogue/clauses.ts';
import type { TestMeta } from '../harness/results.ts';
import { PACKAGE_ROOT } from './layout.ts';
import { loadVitest, SUITE_OPTIONS } from './suite-vitest.ts';

export interface DeclaredTest {
  /** the suite file, relative to the package root: suites/pagination/links.test.ts */
  file: string;
  ids: string[];
  level: Level;
  /** the test's title: the behaviour it checks */
  behaviour: string;
  /** whether vitest would run it (false for tests declared with test.skip) */
  runs: boolean;
}

// The tests the suites declare, as vitest itself collects them: each file is imported (no hook
// and no test body runs, so nothing is sent) and every test's clause IDs and level are read from
// the meta clauseTest gives it. `pmv6 run --list`, the self-checks and the kill matrix read this.
// A test without pmv6 meta is listed with no IDs, which the self-checks refuse.
export async function declaredTests(): Promise<DeclaredTest[]> {
  const { createVitest } = await loadVitest();
  const vitest = await createVitest(
    'test',
    {
      ...SUITE_OPTIONS,
      // The suites read their configuration at import; collection sends no request.
      // With a control protocol, so that no test is left out for the lack of one.
      provide: {
        pmv6: {
          target: 'http://127.0.0.1:9',
          user: 'collect',
          password: 'collect',
          control: { url: 'http://127.0.0.1:9/__control', token: 'collect' },
          runId: 'list',
          seed: 0,
          readOnly: false,
          timeoutMs: 1,
        },
      },
      reporters: [],
    },
    { logLevel: 'silent' },
  );
  try {
    const { testModules, unhandledErrors } = await vitest.collect();
    if (unhandledErrors.length > 0) throw new Error(`collecting the suites failed: ${String((unhandledErrors[0] as Error)?.message ?? unhandledErrors[0])}`);
    const out: DeclaredTest[] = [];
    for (const module of [...testModules].sort((a, b) => a.moduleId.localeCompare(b.moduleId))) {
      const errors = module.errors();
      if (errors.length > 0) throw new Error(`collecting ${relative(PACKAGE_ROOT, module.moduleId)} failed: ${errors[0]?.message}`);
      for (const test of module.children.allTests()) {
        const meta = test.meta().pmv6 as TestMeta | undefined;
        out.push({
          file: relative(PACKAGE_ROOT, module.moduleId),
          ids: meta?.clauses ?? [],
          level: meta?.level ?? 'INFO',
          behaviour: meta?.behaviour ?? test.name,
          runs: test.options.mode !== 'skip' && test.options.mode !== 'todo',
        });
      }
    }
    return out;
  } finally {
    await vitest.close();
  }
}
