// Issue 38 (the suites loaded as the run needs them): a run imports a suite file when a lane is
// free to run it, so the first files send their requests while the later ones have not loaded;
// it never waits for every import before the first test.
import { beforeEach, describe, expect, test } from 'vitest';
import type { RunConfig } from '../../harness/config.ts';
import { FILES_PER_REQUEST, runSuites } from '../run-suites.ts';
import { timeline } from './lazy/timeline.ts';

const config: RunConfig = {
  target: 'http://127.0.0.1:9',
  user: 'admin',
  password: 'lazy-loading',
  runId: 'selftest',
  seed: 1,
  readOnly: false,
  timeoutMs: 1000,
};
const files = { include: ['suites/runner/test/lazy/*.lazy-suite.ts'], exclude: [] };

describe('suite files are imported as the run needs them', () => {
  beforeEach(() => {
    timeline().length = 0;
  });

  test.each([1, 2])(
    'at --concurrency %i the first file runs before the last is imported',
    async (concurrency) => {
      // Five files: more than the lanes of --concurrency 2 (FILES_PER_REQUEST each), so the last waits for a free one.
      expect(FILES_PER_REQUEST * 2).toBeLessThan(5);
      const result = await runSuites({ ...config, concurrency }, { files });
      expect(result.tests.map((t) => t.outcome)).toEqual(['pass', 'pass', 'pass', 'pass', 'pass']);
      expect(timeline().indexOf('a start')).toBeGreaterThanOrEqual(0);
      expect(timeline().indexOf('a start')).toBeLessThan(timeline().indexOf('e loaded'));
    },
    30_000,
  );
});
