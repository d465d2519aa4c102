import { describe, expect, test } from 'vitest';
import { hideSecrets } from '../run/expectations.ts';
import { runClient, type ScenarioResult } from '../run/run-client.ts';

// The three false alarms of issue 37, each on the smallest command that shows it. Each of these
// tests failed on the rules before that issue (run against 2ad9ad4): the loop rule compared method
// and URL only, the secret pattern read free text and spanned newlines, and the hang was judged on
// the whole scenario.
const failed = (r: ScenarioResult) => r.checks.filter((c) => !c.held).map((c) => `${c.what}: ${c.detail ?? ''}`);
const node = (script: string) => [process.execPath, '-e', script];

const CREATE_MANY = `
const api = process.env.PMV6_API_URL, project = Number(process.env.PMV6_PROJECT_ID);
const auth = 'Basic ' + Buffer.from(process.env.PMV6_USER + ':' + process.env.PMV6_PASSWORD).toString('base64');
const headers = { authorization: auth, 'content-type': 'application/json; charset=utf-8', 'user-agent': 'create-many/1' };
(async () => {
  const ids = [];
  for (let i = 0; i < 32; i++) {
    const res = await fetch(api + 'passwords.json', { method: 'POST', headers, body: JSON.stringify({ name: 'many-' + i, project_id: project }), signal: AbortSignal.timeout(5000) });
    if (res.status !== 201) throw new Error('create answered ' + res.status);
    ids.push((await res.json()).id);
  }
  for (const id of ids) await fetch(api + 'passwords/' + id + '.json', { method: 'DELETE', headers, signal: AbortSignal.timeout(5000) });
  console.log('created and deleted ' + ids.length + ' passwords');
})().catch((e) => { console.error('create-many: ' + e.message); process.exit(1); });`;

// Three independent reads, each with its own 2 s timeout: under slow each gives up, and the
// whole command takes longer than the 5 s a single request may be held.
const THREE_CALLS = `
const api = process.env.PMV6_API_URL;
const auth = 'Basic ' + Buffer.from(process.env.PMV6_USER + ':' + process.env.PMV6_PASSWORD).toString('base64');
const headers = { authorization: auth, 'content-type': 'application/json; charset=utf-8', 'user-agent': 'three-calls/1' };
(async () => {
  let errors = 0;
  for (const path of ['version.json', 'projects.json', 'passwords.json']) {
    try {
      const res = await fetch(api + path, { headers, signal: AbortSignal.timeout(2000) });
      await res.text();
      console.log(path + ': ' + res.status);
    } catch (e) { errors++; console.error(path + ': gave up: ' + e.message); }
  }
  process.exit(errors ? 1 : 0);
})();`;

describe('no false alarm on correct clients (issue 37)', () => {
  test('a loop is the same request, body included: 32 creates of different passwords are none', async () => {
    const result = await runClient({ command: node(CREATE_MANY), scenarios: ['normal'], deadlineMs: 10_000 });
    const r = result.scenarios[0]!;
    expect(r.output.join('\n')).toMatch(/created and deleted 32 passwords/);
    expect(failed(r)).toEqual([]);
  }, 60_000);

  test('free text about a password, a struct dump with an empty password, an empty value before a newline: no secret', () => {
    for (const text of [
      'error: failed to find password: This installation is in Maintenance Mode.',
      '{ID:12 Name:pmv6-client-run-3 Password: ExpiryDate: Tags:[]}',
      'password: \ncreated 2026-01-01 10:00:00',
      'Password: ExpiryDate:2026-01-01',
      'password 17: pmv6-client-run-17 (password: hidden)',
    ])
      expect(hideSecrets(text), text).toBe(text);
    // What stays a credential: quoted values beside a credential key, and form or query values.
    expect(hideSecrets('{"password": "hunter2-xyz"}')).toBe('{"password": "«redacted»"}');
    expect(hideSecrets("Password(name='a', password='s3cret-pw')")).toBe("Password(name='a', password='«redacted»')");
    expect(hideSecrets('GET /x?user=a&password=abcd1234')).toBe('GET /x?user=a&password=«redacted»');
  });

  test('a flagged line is among the output lines the report shows, however early it was printed', async () => {
    const script = `console.log('sent {"name":"x","password":"early-secret-1"}'); for (let i = 0; i < 40; i++) console.log('line ' + i);`;
    const result = await runClient({ command: node(script), scenarios: ['normal'], deadlineMs: 10_000 });
    const r = result.scenarios[0]!;
    const check = r.checks.find((c) => c.what.startsWith('prints no secret'))!;
    expect(check.held).toBe(false);
    const shown = [...r.output, ...(check.lines ?? []).map((l) => l.text)].join('\n');
    expect(shown).toContain('sent {"name":"x","password":"«redacted»"}');
    expect(shown).not.toContain('early-secret-1');
  }, 30_000);

  test('a hang is judged per request: three calls with their own timeouts under slow are not hung, and the held requests count', async () => {
    const result = await runClient({ command: node(THREE_CALLS), scenarios: ['slow'], deadlineMs: 5_000 });
    const r = result.scenarios[0]!;
    expect(failed(r), r.output.join('\n')).toEqual([]);
    expect(r.hung).toBe(false);
    expect(r.requests).toBe(3);
    expect(r.sent.map((s) => s.status)).toEqual([null, null, null]);
  }, 60_000);
});
