import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type EmbeddedTarget, startEmbeddedTarget } from '../../../targets/embedded.ts';
import { ControlClient } from '../../harness/control.ts';
import { sendJson, startStub } from '../../harness/test/stub-server.ts';
import { cleanupText } from '../cleanup.ts';
import { runSuites } from '../run-suites.ts';
import { timeline } from './side/timeline.ts';

const files = { include: ['suites/runner/test/settings/*.settings-suite.ts'], exclude: [] };

describe('settings: restored after an interrupt, never changed when unreadable', () => {
  let t: EmbeddedTarget;
  let control: ControlClient;
  beforeAll(async () => {
    t = await startEmbeddedTarget({ runId: 'sett1' }, { http: true });
    control = new ControlClient({ ...t.config.control! });
  });
  afterAll(async () => {
    await control.close();
    await t.close();
  });

  test('a section that only sends requests, with the settings already those in force between sections, runs beside the others: no section, no PUT', async () => {
    timeline().length = 0;
    const result = await runSuites({ ...t.config, concurrency: 4 }, { files: { include: ['suites/runner/test/between/*.between-suite.ts'], exclude: [] } });
    expect(result.tests.map((r) => r.outcome)).toEqual(['pass']);
    expect(timeline()).toEqual(['as between: held false, status 200', 'changed: held true', 'not requests only: held true']);
    expect(result.schedule?.sections).toBe(2);
    expect((await control.getSettings()).auth_methods).toBe('basic+hmac');
  }, 30_000);

  test('beside the other tests of a file, the calls that ask the same settings share one section; a sibling outside it waits and is sent under the settings put back', async () => {
    timeline().length = 0;
    const result = await runSuites({ ...t.config, concurrency: 4 }, { files: { include: ['suites/runner/test/joined/*.joined-suite.ts'], exclude: [] } });
    expect(result.tests.map((r) => r.outcome)).toEqual(['pass', 'pass', 'pass']);
    const events = timeline();
    expect(events.filter((e) => e.includes(': '))).toEqual(
      expect.arrayContaining(['first: held true, Basic 401', 'second: held true, Basic 401', 'sibling: Basic 200']),
    );
    // The sibling asked while the section was held, and was answered only after both had left it.
    expect(events.indexOf('sibling asks')).toBeLessThan(events.indexOf('first waits end'));
    expect(events.indexOf('sibling: Basic 200')).toBeGreaterThan(Math.max(events.indexOf('first waits end'), events.indexOf('second waits end')));
    expect(result.schedule?.sectionsByFile['suites/runner/test/joined/joined.joined-suite.ts']).toMatchObject({ sections: 1, joined: 1 });
    expect((await control.getSettings()).auth_methods).toBe('basic+hmac');
  }, 30_000);

  test('an interrupt inside a Maintenance Mode section: the files send nothing more, the runner puts it back and reads it back', async () => {
    timeline().length = 0;
    const stop = new AbortController();
    const poll = setInterval(() => {
      if (timeline().includes('maintenance on start')) stop.abort();
    }, 20);
    const result = await runSuites({ ...t.config, timeoutMs: 2000 }, { files, signal: stop.signal }).finally(() => clearInterval(poll));
    expect(result.interrupted).toBe(true);
    expect((await control.getSettings()).maintenance_mode).toBe(false);
    expect(result.settings?.restored).toContain('maintenance_mode');
    expect(result.settings?.unrestored).toBeUndefined();
  }, 30_000);

  test('settings that cannot be read at the start: none is changed, the check is skipped-unverifiable, and the report says so', async () => {
    const stub = await startStub((req, res) =>
      req.url.startsWith('/__control') ? sendJson(res, 500, { error: true, type: 'Internal Server Error', message: 'boom' }) : sendJson(res, 200, []),
    );
    try {
      const result = await runSuites(
        {
          target: stub.url,
          user: 'admin',
          password: 'pw-settings',
          runId: 'sett2',
          seed: 1,
          readOnly: false,
          timeoutMs: 1000,
          control: { url: `${stub.url}/__control`, token: 'tok-settings-0123456789' },
        },
        { files },
      );
      expect(stub.received.filter((r) => r.url.startsWith('/__control') && r.method !== 'GET')).toEqual([]);
      const test = result.tests.find((r) => r.title.includes('hold Maintenance Mode on'));
      expect(test?.outcome).toBe('skipped-unverifiable');
      expect(test?.note).toMatch(/the settings could not be read at the start of the run \(control GET \/settings: expected status 200, got 500/);
      expect(result.settings?.unread).toMatch(/expected status 200, got 500/);
      expect(cleanupText(result.cleanup!, result.settings)).toMatch(/settings: could not be read at the start of the run \(.*\): none was changed/);
    } finally {
      await stub.close();
    }
  }, 30_000);
});
