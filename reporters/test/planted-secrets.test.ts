import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createReferenceServer, type ReferenceServer } from '../../fixtures/reference-server/src/index.ts';
import { resultsErrors } from '../read-results.ts';

const BIN = fileURLToPath(new URL('../../bin/pmv6.js', import.meta.url));
const adminPassword = `adm-${randomBytes(10).toString('hex')}`;
const controlToken = `tok-${randomBytes(10).toString('hex')}`;
const secretValue = `pwd-${randomBytes(10).toString('hex')}`;
let hmac: { public_key: string; private_key: string };
let server: ReferenceServer;
let base: string;

// A hostile server: every error body it sends echoes the caller's Authorization header, HMAC
// hash and private key, the admin password, the control token and a stored password's secret,
// so the run fails many clauses and every failure's exchange is full of secrets.
beforeAll(async () => {
  server = await createReferenceServer({ adminPassword, controlToken });
  server.app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode < 400 || request.url.includes('__control')) return payload;
    return JSON.stringify({
      error: true,
      type: `Echo ${request.headers.authorization ?? ''} ${request.headers['x-request-hash'] ?? ''}`,
      message: `${hmac?.private_key} ${adminPassword} ${controlToken}`,
      password: secretValue,
    });
  });
  base = await server.listen({ host: '127.0.0.1', port: 0 });
  const created = await fetch(`${base}/__control/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${controlToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'hmac-admin', password: adminPassword, role: 'admin' }),
  });
  hmac = (await created.json()) as typeof hmac;
  await fetch(`${base}/index.php/api/v6/passwords.json`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`admin:${adminPassword}`).toString('base64')}`, 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ name: 'planted', project_id: 1, password: secretValue }),
  });
});

afterAll(() => server?.close());

function forms(secret: string): string[] {
  return [secret, Buffer.from(secret).toString('base64'), Buffer.from(`admin:${secret}`).toString('base64'), encodeURIComponent(secret)];
}

describe('secrets in a full run with failures', () => {
  test('no output byte of pmv6 run (console, results.json, junit.xml, report.html, summary.md) holds a secret', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pmv6-secrets-'));
    const summary = join(dir, 'step-summary.md');
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [BIN, 'run', '--target', base, '--control', `${base}/__control`, '--report-dir', join(dir, 'report'), '--only', 'AUTH,ERR,STAT,RES'],
        {
          env: {
            ...process.env,
            PMV6_USER: 'admin',
            PMV6_PASSWORD: adminPassword,
            PMV6_HMAC_PUBLIC: hmac.public_key,
            PMV6_HMAC_PRIVATE: hmac.private_key,
            PMV6_CONTROL_TOKEN: controlToken,
            GITHUB_STEP_SUMMARY: summary,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let text = '';
      child.stdout.on('data', (d) => (text += d));
      child.stderr.on('data', (d) => (text += d));
      child.on('error', reject);
      child.on('close', (c) => resolve({ code: c, out: text }));
    });
    expect(code, out.slice(-2000)).toBe(1);
    const files = readdirSync(join(dir, 'report')).map((f) => join(dir, 'report', f));
    expect(files.map((f) => f.split('/').at(-1)).sort()).toEqual(['journal.jsonl', 'junit.xml', 'report.html', 'results.json', 'summary.md']);
    const outputs: Array<[string, string]> = [
      ['console', out],
      ['step summary', readFileSync(summary, 'utf8')],
      ...files.map((f) => [f, readFileSync(f, 'utf8')] as [string, string]),
    ];
    for (const secret of [adminPassword, controlToken, secretValue, hmac.private_key]) {
      for (const form of forms(secret)) {
        for (const [name, text] of outputs) expect(text.includes(form), `${name} holds a secret`).toBe(false);
      }
    }
    expect(resultsErrors(JSON.parse(readFileSync(join(dir, 'report', 'results.json'), 'utf8')))).toEqual([]);
    expect(out).toMatch(/verdict: NOT CONFORMANT/);
  }, 120_000);
});
