import { createServer, type Server } from 'node:http';
import { createServer as netServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TargetError } from '../../core/errors.ts';
import { ControlClient } from '../../suites/harness/control.ts';
import { type EmbeddedTarget, startEmbeddedTarget } from '../embedded.ts';
import { type PreflightConfig, preflight } from '../preflight.ts';

// Each failure of the target itself is one clear line (a TargetError: the CLI prints it and
// exits 2), well within 15 s.
async function refused(config: PreflightConfig): Promise<{ message: string; ms: number }> {
  const started = Date.now();
  try {
    await preflight(config);
  } catch (e) {
    expect(e).toBeInstanceOf(TargetError);
    const message = (e as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    return { message, ms: Date.now() - started };
  }
  throw new Error('preflight accepted the target');
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`)));
}

describe('preflight: clear failures of the target', () => {
  let https: EmbeddedTarget;
  let http: EmbeddedTarget;
  let html: Server;
  let htmlUrl: string;
  beforeAll(async () => {
    https = await startEmbeddedTarget({ timeoutMs: 5_000 });
    http = await startEmbeddedTarget({ timeoutMs: 5_000 }, { http: true });
    html = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><html><body>Welcome</body></html>');
    });
    htmlUrl = await listen(html);
  });
  afterAll(async () => {
    await https.close();
    await http.close();
    await new Promise((r) => html.close(r));
  });

  test('the reference server passes and answers its version', async () => {
    expect(await preflight(http.config)).toMatchObject({ api_version: '6' });
    expect(await preflight(https.config)).toMatchObject({ api_version: '6' });
  });

  test('nothing listening', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = netServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const r = await refused({ ...http.config, target: `http://127.0.0.1:${port}` });
    expect(r.message).toMatch(/cannot reach .*ECONNREFUSED/);
    expect(r.ms).toBeLessThan(15_000);
  });

  test('a host name that does not resolve', async () => {
    const r = await refused({ ...http.config, target: 'http://pmv6-no-such-host.invalid' });
    expect(r.message).toMatch(/cannot reach http:\/\/pmv6-no-such-host\.invalid: (ENOTFOUND|EAI_AGAIN|request timed out)/);
    expect(r.ms).toBeLessThan(15_000);
  });

  test('a certificate nobody vouched for, with the --ca/--insecure hint; --insecure gets through', async (ctx) => {
    if (!https.config.target.startsWith('https:')) ctx.skip('openssl is missing: no https target');
    const { tls: _tls, ...untrusted } = https.config;
    const r = await refused(untrusted);
    expect(r.message).toMatch(/cannot reach https:.*(CERT|certificate|self.signed)/i);
    expect(r.message).toMatch(/--ca FILE, or --insecure/);
    expect(await preflight({ ...untrusted, tls: { insecure: true } })).toMatchObject({ api_version: '6' });
  });

  test('a wrong base URL: the server answers 404 there', async () => {
    const r = await refused({ ...http.config, target: `${http.config.target}/not-here` });
    expect(r.message).toMatch(/no v6 API at .*not-here\/index\.php\/api\/v6\/ \(GET version\.json answered 404/);
  });

  test('a server that answers HTML', async () => {
    const { control: _control, ...noControl } = http.config;
    const r = await refused({ ...noControl, target: htmlUrl });
    expect(r.message).toMatch(/no v6 API at .* answered 200, not JSON/);
  });

  test('rejected admin credentials', async () => {
    const r = await refused({ ...http.config, password: `${http.config.password}-wrong` });
    expect(r.message).toMatch(/rejected the credentials of user "admin" \(401/);
  });

  test('API access disabled, then maintenance mode, before the run', async () => {
    const control = new ControlClient({ ...http.config.control! });
    try {
      await control.putSettings({ api_enabled: false });
      expect((await refused(http.config)).message).toMatch(/API access is disabled on the target/);
      await control.putSettings({ api_enabled: true, maintenance_mode: true });
      expect((await refused(http.config)).message).toMatch(/maintenance mode/);
    } finally {
      await control.putSettings({ api_enabled: true, maintenance_mode: false });
      await control.close();
    }
  });

  test('an installation that allows one method only: the line names the refused method and the accepted one; signing in the allowed way passes', async () => {
    const control = new ControlClient({ ...http.config.control! });
    try {
      const password = 'preflight-only-0123456789';
      const u = await control.createUser({ username: `preflight-only-${Date.now()}`, password, role: 'admin' });
      const config = { ...http.config, user: u.username, password, hmac: { publicKey: u.public_key, privateKey: u.private_key } };
      await control.putSettings({ auth_methods: 'hmac' });
      expect((await refused(config)).message).toMatch(/refused HTTP Basic for user ".*" \(401 .*\) and accepted the HMAC keys: it allows HMAC only/);
      expect((await refused({ ...http.config, user: u.username, password })).message).toMatch(/rejected the credentials of user/);
      expect(await preflight({ ...config, signIn: 'hmac' })).toMatchObject({ api_version: '6' });
      await control.putSettings({ auth_methods: 'basic' });
      expect((await refused({ ...config, signIn: 'hmac' })).message).toMatch(/refused the HMAC keys .* and accepted HTTP Basic .*: it allows HTTP Basic only/);
    } finally {
      await control.putSettings({ auth_methods: 'basic+hmac' });
      await control.close();
    }
  });

  test('a control protocol that does not answer as expected', async () => {
    const r = await refused({ ...http.config, control: { url: `${http.config.target}/__control`, token: 'wrong-token' } });
    expect(r.message).toMatch(/control protocol at .* did not answer as expected: .*401/);
  });
});
