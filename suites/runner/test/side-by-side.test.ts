import { beforeEach, describe, expect, test } from 'vitest';
import type { RunConfig } from '../../harness/config.ts';
import { ALONE, CHAINS } from '../chains.ts';
import { CONFORMANCE_EXCLUDE, CONFORMANCE_INCLUDE } from '../layout.ts';
import { runSuites, STARTED_FIRST } from '../run-suites.ts';
import { suiteFiles } from '../suite-runner.ts';
import { timeline } from './side/timeline.ts';

const config: RunConfig = {
  target: 'http://127.0.0.1:9',
  user: 'admin',
  password: 'side-by-side',
  runId: 'selftest',
  seed: 1,
  readOnly: false,
  timeoutMs: 1000,
};
const files = { include: ['suites/runner/test/side/*.side-suite.ts'], exclude: [] };

const at = (event: string) => {
  const i = timeline().indexOf(event);
  if (i < 0) throw new Error(`${event} did not happen: ${timeline().join(', ')}`);
  return i;
};

describe('suite files side by side (--concurrency)', () => {
  beforeEach(() => {
    timeline().length = 0;
  });

  test('files run side by side, a file that runs alone after them with nothing beside it, the results in the order of the files', async () => {
    const result = await runSuites({ ...config, concurrency: 4 }, { files });
    // a and b overlap: b's first test starts before a's first one ends.
    expect(at('b1 start')).toBeLessThan(at('a1 end'));
    // Each file's tests still run one after another.
    expect(at('a1 end')).toBeLessThan(at('a2 start'));
    // The file that runs alone starts when every other file has ended, and ends before anything else starts.
    expect(at('alone start')).toBeGreaterThan(Math.max(at('a2 end'), at('b2 end')));
    expect(at('alone end')).toBe(at('alone start') + 1);
    expect(result.tests.map((t) => t.file)).toEqual([
      'suites/runner/test/side/a.side-suite.ts',
      'suites/runner/test/side/a.side-suite.ts',
      'suites/runner/test/side/alone.side-suite.ts',
      'suites/runner/test/side/b.side-suite.ts',
      'suites/runner/test/side/b.side-suite.ts',
      'suites/runner/test/side/settings.side-suite.ts',
    ]);
  }, 30_000);

  test('at --concurrency 1 every file runs in turn, in the order of their paths', async () => {
    await runSuites({ ...config, concurrency: 1 }, { files });
    expect(timeline()).toEqual(['a1 start', 'a1 end', 'a2 start', 'a2 end', 'alone start', 'alone end', 'b1 start', 'b1 end', 'b2 start', 'b2 end']);
  }, 30_000);

  test("a setting changed outside an exclusive section is the harness's error: never sent, never the server's violation", async () => {
    const result = await runSuites({ ...config, concurrency: 4 }, { files });
    const gen03 = result.clauses.find((c) => c.clause.id === 'GEN-03');
    expect(gen03?.outcome).toBe('harness-error');
    expect(gen03?.tests[0]?.failure?.message).toMatch(/outside an exclusive section/);
    expect(result.requestsByFile?.['suites/runner/test/side/settings.side-suite.ts']).toBe(0);
  }, 30_000);
});

describe('the files the scheduler names', () => {
  test('every file the measured chains (chains.ts) name is a suite file (a renamed file would quietly lose its place)', () => {
    const files = suiteFiles(CONFORMANCE_INCLUDE, CONFORMANCE_EXCLUDE);
    expect(files.length).toBeGreaterThan(40);
    for (const f of [...ALONE, ...Object.keys(CHAINS)]) expect(files, f).toContain(f);
    // The longest chains start first, after the files that run alone.
    expect(STARTED_FIRST.slice(0, ALONE.length)).toEqual(ALONE);
    const after = STARTED_FIRST.slice(ALONE.length).map((f) => CHAINS[f] ?? 0);
    expect(after).toEqual([...after].sort((a, b) => b - a));
  });
});
