import { describe, expect, test } from 'vitest';
import { isReadOnlyRefusal, ReadOnlyError, SetupError } from '../assert.ts';
import { ApiClient } from '../client.ts';
import { ControlClient } from '../control.ts';

// --read-only: the clients refuse to send anything but GET, HEAD and OPTIONS, before any byte
// leaves (the target here does not even exist), and the refusal is recognised when wrapped.
describe('read-only clients', () => {
  const client = new ApiClient({ target: 'http://127.0.0.1:9', auth: { kind: 'none' }, readOnly: true, timeoutMs: 200 });

  test('POST, PUT, DELETE, PATCH throw ReadOnlyError, derived clients too; GET is sent', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'patch']) {
      await expect(client.request({ method, path: '/projects.json' })).rejects.toThrow(ReadOnlyError);
    }
    await expect(client.withAuth({ kind: 'basic', user: 'u', password: 'p' }).delete('/projects/1.json')).rejects.toThrow(
      /read-only run: the check would send DELETE/,
    );
    const ex = await client.get('/version.json');
    expect(ex.error).toMatch(/ECONNREFUSED/);
  });

  test('the control client may read the settings but not change them', async () => {
    const control = new ControlClient({ url: 'http://127.0.0.1:9/__control', token: 't0ken-read-only', readOnly: true, timeoutMs: 200 });
    await expect(control.putSettings({ maintenance_mode: true })).rejects.toThrow(ReadOnlyError);
    await expect(control.getSettings()).rejects.toThrow(/no response/);
    await control.close();
  });

  test('a refusal is recognised directly, by its message, or as the cause of another error', () => {
    const e = new ReadOnlyError('the fixture would create a project');
    expect(e).toBeInstanceOf(SetupError);
    expect(isReadOnlyRefusal(e)).toBe(true);
    expect(isReadOnlyRefusal(new Error(`Property failed by returning false\n${e.message}`))).toBe(true);
    expect(isReadOnlyRefusal(new Error('wrapped', { cause: e }))).toBe(true);
    expect(isReadOnlyRefusal(new SetupError('creating a project: expected status 201, got 500'))).toBe(false);
  });
});
