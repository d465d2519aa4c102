import { describe, expect, test } from 'vitest';
import type { RunConfig } from '../../harness/config.ts';
import { sendJson, startStub, stopsAnswering } from '../../harness/test/stub-server.ts';
import { cleanupText } from '../cleanup.ts';
import { hangBoundMs, runSuites } from '../run-suites.ts';

/** A run against a stub: 300 ms deadlines, at the given concurrency. */
const configFor = (target: string, runId: string, concurrency: number): RunConfig => ({
  target,
  user: 'admin',
  password: 'pw-hang-0123',
  runId,
  seed: 1,
  readOnly: false,
  timeoutMs: 300,
  concurrency,
});

// The hang bound: a target that stops answering mid-run ends the run within hangBoundMs after
// its last answer; the tests left are harness errors, and the cleanup report says what it could
// not tell instead of "0 left over".
describe('a target that stops answering mid-run', () => {
  test('ends the run within the stated bound, with the rest inconclusive and the leftovers unknown', async () => {
    let answering = true;
    let lastAnswer = 0;
    let made = 0;
    const stub = await startStub(
      stopsAnswering(
        (req, res) => {
          lastAnswer = Date.now();
          if (req.method === 'POST' && req.url.endsWith('/projects.json')) {
            made++;
            sendJson(res, 201, { id: 41 });
            // The project made (its read-back waits for the first write to it), then nothing: a
            // count of requests, not a time, so the test does not rest on the machine's speed.
            answering = false;
            return;
          }
          if (req.url.endsWith('/projects/41.json')) {
            sendJson(res, 200, { id: 41, name: 'pmv6-hang1-x-project-1' });
            return;
          }
          sendJson(res, 200, { version: '1' });
        },
        () => answering,
      ),
    );
    try {
      const config = configFor(stub.url, 'hang1', 1);
      const result = await runSuites(config, { files: { include: ['suites/runner/test/hang/slow.hang-suite.ts'], exclude: [] } });
      const ended = Date.now();
      expect(made).toBe(1);
      expect(ended - lastAnswer).toBeLessThanOrEqual(hangBoundMs(config.timeoutMs) + 1000);
      expect(result.stopped).toMatch(/the target stopped answering: 3 requests in a row/);
      const rounds = result.tests.filter((t) => t.title.includes('round'));
      expect(rounds.length).toBe(6);
      // A round may pass before the target stops; every other is a harness error, never a violation.
      expect(rounds.filter((t) => t.outcome !== 'pass').every((t) => t.outcome === 'harness-error')).toBe(true);
      expect(rounds.filter((t) => t.outcome === 'harness-error').length).toBeGreaterThanOrEqual(5);
      // The project could not be deleted and no list could be read: never "0 left over".
      const text = cleanupText(result.cleanup!, result.settings);
      expect(text).toMatch(/at least 0 left over \(unknown: \d+ lists? could not be read\)/);
      expect(result.cleanup?.unknown?.length).toBeGreaterThan(0);
    } finally {
      await stub.close();
    }
  }, 30_000);
});

describe('a target that hangs on some paths', () => {
  test('requests in flight together that pass their deadline together are one wait, not a target that stopped answering', async () => {
    const stub = await startStub((req, res) => {
      if (req.url.includes('/log/')) return; // never answered
      sendJson(res, 200, { version: '1' });
    });
    try {
      const config = configFor(stub.url, 'hang2', 8);
      const result = await runSuites(config, { files: { include: ['suites/runner/test/hang/together.hang-suite.ts'], exclude: [] } });
      expect(result.stopped).toBeUndefined();
      expect(result.harnessErrors).toEqual([]);
      expect(result.tests.map((t) => t.outcome)).toEqual(['pass']);
    } finally {
      await stub.close();
    }
  }, 30_000);
});
