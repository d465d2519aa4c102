// The suite runner's own rules (suites/runner/suite-runner.ts): hook order, what a failed
// beforeAll leaves, deadlines, interrupts, skips, and which files it finds.
import { describe, expect, test } from 'vitest';
import type { Exchange } from '../../../core/exchange.ts';
import { expectStatus } from '../../harness/assert.ts';
import { clauseTest } from '../../harness/clause-test.ts';
import { setRunConfig } from '../../harness/config.ts';
import { exclusive } from '../../harness/gate.ts';
import type { TestMeta } from '../../harness/results.ts';
import { collectDeclarations, type DeclaredCase, type SuiteDeclarations, type TestBody } from '../../harness/suite-api.ts';
import { currentScope } from '../../harness/traffic.ts';
import { runSuiteFile, suiteFiles } from '../suite-runner.ts';

const meta = (): TestMeta => ({ clauses: ['GEN-01'], level: 'MUST', behaviour: 'b' });
/** A request of the calling test answered, counted as emitExchange counts it: in its scope and the file's. */
const answered = () => {
  for (let s = currentScope(); s; s = s.parent) s.sent++;
};
const runnable = (title: string, body: TestBody, timeoutMs?: number): DeclaredCase => ({ title, meta: meta(), body, ...(timeoutMs ? { timeoutMs } : {}) });
const options = { testTimeoutMs: 1_000, hookTimeoutMs: 1_000 };

describe('suite runner', () => {
  test('runs beforeAll hooks in order, the tests in order, afterAll hooks last registered first', async () => {
    const order: string[] = [];
    const declared: SuiteDeclarations = {
      beforeAll: [() => void order.push('before 1'), () => void order.push('before 2')],
      afterAll: [() => void order.push('after 1'), () => void order.push('after 2')],
      tests: [runnable('t1', () => void order.push('t1')), runnable('t2', () => void order.push('t2'))],
    };
    const run = await runSuiteFile('f', declared, options);
    expect(order).toEqual(['before 1', 'before 2', 't1', 't2', 'after 2', 'after 1']);
    expect(run.cases.map((c) => c.state)).toEqual(['passed', 'passed']);
  });

  test('a file whose tests run side by side: they start together, a test declared afterOthers waits for those before it, and the cases are reported in the order declared', async () => {
    const order: string[] = [];
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const declared: SuiteDeclarations = {
      beforeAll: [],
      afterAll: [],
      testsTogether: 'they only read',
      tests: [
        runnable('slow', async () => {
          order.push('slow start');
          await sleep(60);
          order.push('slow end');
        }),
        runnable('fast', async () => {
          order.push('fast start');
          await sleep(10);
          order.push('fast end');
        }),
        { ...runnable('judge', () => void order.push('judge')), afterOthers: true },
        runnable('last', () => void order.push('last')),
      ],
    };
    const run = await runSuiteFile('f', declared, options);
    expect(order).toEqual(['slow start', 'fast start', 'fast end', 'slow end', 'judge', 'last']);
    expect(run.cases.map((c) => c.title)).toEqual(['slow', 'fast', 'judge', 'last']);
    // Without the declaration, one after another.
    order.length = 0;
    const { testsTogether: _, ...inTurn } = declared;
    await runSuiteFile('f', inTurn, options);
    expect(order).toEqual(['slow start', 'slow end', 'fast start', 'fast end', 'judge', 'last']);
  });

  test('a test beside the others of its file that opens an exclusive section (a setting) is a harness error; declared afterOthers, it runs', async () => {
    const section = () => exclusive(async () => {});
    const declared: SuiteDeclarations = {
      beforeAll: [],
      afterAll: [],
      testsTogether: 'they only read',
      tests: [runnable('reads', () => {}), runnable('changes a setting', section), { ...runnable('on its own', section), afterOthers: true }],
    };
    const run = await runSuiteFile('f', declared, options);
    expect(run.cases.map((c) => c.state)).toEqual(['passed', 'failed', 'passed']);
    expect(run.cases[1]?.error).toMatch(/harness: an exclusive section .* declare the test afterOthers/);
  });

  test('a failed beforeAll: the tests do not run (skipped, no note), the afterAll hooks still run', async () => {
    const order: string[] = [];
    const declared: SuiteDeclarations = {
      beforeAll: [
        () => {
          throw new Error('no fixture');
        },
        () => void order.push('before 2'),
      ],
      afterAll: [() => void order.push('after')],
      tests: [runnable('t', () => void order.push('t'))],
    };
    const run = await runSuiteFile('f', declared, options);
    expect(run.setupError).toBe('Error: no fixture');
    expect(order).toEqual(['after']);
    expect(run.cases).toMatchObject([{ state: 'skipped' }]);
    expect(run.cases[0]?.note).toBeUndefined();
  });

  test('no hook runs when every test of the file is skipped', async () => {
    const order: string[] = [];
    const skipped: DeclaredCase = { title: 's', meta: { ...meta(), outcome: 'disabled', note: 'not selected' } };
    const declared: SuiteDeclarations = { beforeAll: [() => void order.push('before')], afterAll: [() => void order.push('after')], tests: [skipped] };
    const run = await runSuiteFile('f', declared, options);
    expect(order).toEqual([]);
    expect(run.cases).toMatchObject([{ state: 'skipped', note: 'not selected' }]);
  });

  test('a test past its deadline fails and its signal is aborted; an afterAll past its deadline is an error of the file', async () => {
    let aborted = false;
    const declared: SuiteDeclarations = {
      beforeAll: [],
      afterAll: [() => new Promise(() => {})],
      tests: [
        runnable(
          'slow',
          (ctx) =>
            new Promise<void>((resolve) => {
              ctx.signal.addEventListener('abort', () => {
                aborted = true;
                resolve();
              });
            }),
          50,
        ),
      ],
    };
    const run = await runSuiteFile('f', declared, { testTimeoutMs: 1_000, hookTimeoutMs: 50 });
    expect(run.cases[0]).toMatchObject({ state: 'failed' });
    expect(run.cases[0]?.error).toMatch(/had no request answered for 50 ms/);
    expect(aborted).toBe(true);
    expect(run.errors).toEqual([expect.stringMatching(/afterAll had no request answered for 50 ms/)]);
  });

  test('the deadline is one of inactivity: a test whose requests keep being answered runs past it, up to ten times it', async () => {
    const busy = (ms: number) => async () => {
      for (const end = Date.now() + ms; Date.now() < end; ) {
        await new Promise((r) => setTimeout(r, 20));
        answered();
      }
    };
    const declared: SuiteDeclarations = {
      beforeAll: [],
      afterAll: [],
      tests: [runnable('slow but answered', busy(300), 100), runnable('answered for ever', busy(5_000), 100)],
    };
    const run = await runSuiteFile('f', declared, { testTimeoutMs: 100, hookTimeoutMs: 1_000 });
    expect(run.cases[0]).toMatchObject({ state: 'passed' });
    expect(run.cases[1]).toMatchObject({ state: 'failed' });
    expect(run.cases[1]?.error).toMatch(/did not end within 1000 ms/);
  });

  test('beside the other tests of its file, a test waiting on a reading another test sends does not meet the deadline while that reading is answered', async () => {
    let shared: Promise<void> | undefined;
    const reading = () => {
      shared ??= (async () => {
        for (const end = Date.now() + 400; Date.now() < end; ) {
          await new Promise((r) => setTimeout(r, 20));
          answered();
        }
      })();
      return shared;
    };
    const declared: SuiteDeclarations = {
      beforeAll: [],
      afterAll: [],
      testsTogether: 'they share one reading',
      tests: [
        runnable('sends the reading', reading, 100),
        runnable('waits on it', () => new Promise((r) => setTimeout(r, 5)).then(reading), 100),
        runnable('hangs', () => new Promise(() => {}), 100),
      ],
    };
    const run = await runSuiteFile('f', declared, { testTimeoutMs: 100, hookTimeoutMs: 1_000 });
    expect(run.cases.map((c) => c.state)).toEqual(['passed', 'passed', 'failed']);
    expect(run.cases[2]?.error).toMatch(/had no request answered for 100 ms/);
  });

  test('a request a test meets after its deadline (a closed client) is never recorded as a violation', async () => {
    setRunConfig({ target: 'http://127.0.0.1:9', user: 'u', password: 'p', runId: 'r', seed: 1, readOnly: false, timeoutMs: 1_000 });
    let late: Promise<void> | undefined;
    const declared = await collectDeclarations(async () => {
      clauseTest('GEN-01', 'walks a long list', (t) => {
        late = new Promise<void>((resolve) => t.signal.addEventListener('abort', () => resolve()));
        return late.then(() => {
          // The session closed its clients meanwhile: the late request has no response.
          const closed: Exchange = {
            request: { method: 'GET', url: 'http://127.0.0.1:9/x', headers: {} },
            error: 'UND_ERR_CLOSED: The client is closed',
            durationMs: 0,
          };
          expectStatus(closed, 200);
        });
      });
    });
    const run = await runSuiteFile('f', declared, { testTimeoutMs: 50, hookTimeoutMs: 1_000 });
    await late;
    await new Promise((r) => setTimeout(r, 10));
    setRunConfig(undefined);
    expect(run.cases[0]).toMatchObject({ state: 'failed' });
    expect(run.cases[0]?.meta.failure).toMatchObject({
      kind: 'harness',
      message: expect.stringMatching(/^harness: the test had no request answered for 50 ms/),
    });
  });

  test('an interrupt: the running test sees it, the next tests do not run, the afterAll hooks still run', async () => {
    const controller = new AbortController();
    const order: string[] = [];
    const declared: SuiteDeclarations = {
      beforeAll: [],
      afterAll: [() => void order.push('after')],
      tests: [
        runnable('first', (ctx) => {
          controller.abort();
          order.push(`first saw abort: ${ctx.signal.aborted}`);
        }),
        runnable('second', () => void order.push('second')),
      ],
    };
    const run = await runSuiteFile('f', declared, { ...options, signal: controller.signal });
    expect(order).toEqual(['first saw abort: true', 'after']);
    expect(run.cases[1]).toMatchObject({ state: 'skipped', note: 'not run: the run was interrupted' });
  });

  test('skip() ends a test as skipped with its reason; any other error fails it', async () => {
    const declared: SuiteDeclarations = {
      beforeAll: [],
      afterAll: [],
      tests: [runnable('skips', (ctx) => ctx.skip('cannot tell')), runnable('throws', () => Promise.reject(new TypeError('boom')))],
    };
    const run = await runSuiteFile('f', declared, options);
    expect(run.cases).toMatchObject([
      { state: 'skipped', note: 'cannot tell' },
      { state: 'failed', error: 'TypeError: boom' },
    ]);
  });

  test('finds the conformance suites (never the harness, catalogue or runner) and exact paths', () => {
    const files = suiteFiles(['suites/*/**/*.test.ts'], ['suites/harness/**', 'suites/catalogue/**', 'suites/runner/**']);
    expect(files).toContain('suites/pagination/every-list.test.ts');
    expect(files.some((f) => f.startsWith('suites/harness/') || f.startsWith('suites/runner/'))).toBe(false);
    expect(files).toEqual([...files].sort());
    expect(suiteFiles(['suites/runner/test/fake/*.fake-suite.ts'], [])).toEqual([
      'suites/runner/test/fake/hooks.fake-suite.ts',
      'suites/runner/test/fake/outcomes.fake-suite.ts',
    ]);
    expect(suiteFiles(['suites/version/version.test.ts'], [])).toEqual(['suites/version/version.test.ts']);
  });
});
