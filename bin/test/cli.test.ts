import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { hmacHeaders } from '../../core/signers.ts';
import { freePort, serve } from './serve-child.ts';
import { pmv6 } from './spawn-cli.ts';

// Decision (runtime, issue 38): every case is its own child processes on ports of its own; they
// mostly wait on them, so they run side by side.
describe.concurrent('pmv6 CLI', () => {
  test('--help lists the commands and exits 0', async () => {
    const r = await pmv6(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/run\s+run the conformance suites/);
    expect(r.stdout).toMatch(/serve/);
  });

  test('an unknown command or flag is a usage error (exit 2, one line)', async () => {
    const a = await pmv6(['frobnicate']);
    expect(a.code).toBe(2);
    expect(a.stderr.trim().split('\n')).toHaveLength(1);
    const b = await pmv6(['run', '--no-such-flag']);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/no-such-flag/);
    const c = await pmv6(['run', '--target', 'not a url', '--user', 'u', '--password', 'p']);
    expect(c.code).toBe(2);
    expect(c.stderr).toMatch(/--target must be an absolute/);
    const d = await pmv6(['run', '--only', 'NOPE-99']);
    expect(d.code).toBe(2);
  });

  // Issue 27: invocations that must never turn a gate green; each is one line of ours and exit 2,
  // and nothing is run (no embedded server is started: each ends at once).
  test.each([
    [['run', 'http://127.0.0.1:9'], /unexpected argument "http:\/\/127\.0\.0\.1:9"; did you mean --target/],
    [['serve', '8080'], /unexpected argument "8080"/],
    [['load', 'http://127.0.0.1:9'], /did you mean --target/],
    [['clauses', 'PAG'], /unexpected argument "PAG"/],
    [['variants', 'extra'], /unexpected argument "extra"/],
    [['mutants', 'extra'], /unexpected argument "extra"/],
    [['run', '--timeout', '-5'], /^pmv6 run: --timeout needs a value; a value starting with "-" is written --timeout=-/],
    [['run', '--timeout=-5'], /--timeout must be an integer from 100/],
    [['run', '--seed'], /^pmv6 run: --seed needs a value$/m],
    [['run', '--strict=yes'], /^pmv6 run: --strict takes no value$/m],
    [['run', '--bogus'], /^pmv6 run: unknown option --bogus \(--help lists the options\)$/m],
    [['run', '--control-token', 'tok-123'], /--control-token need --target/],
  ])('pmv6 %j is refused: one line, exit 2', async (args, message) => {
    const r = await pmv6(args);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });

  test('a control token without --control is refused, whether given as a flag or in the environment', async () => {
    const env = { PMV6_USER: 'admin', PMV6_PASSWORD: 'x', PMV6_CONTROL_TOKEN: 'ctl-token-0123456789' };
    const r = await pmv6(['run', '--target', 'http://127.0.0.1:9'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/a control token is set \(PMV6_CONTROL_TOKEN\) but no --control URL/);
    expect(r.stderr).not.toContain('ctl-token-0123456789');
  });

  test('run against a port where nothing listens exits 2 within 10 s with one clear line', async () => {
    const port = await freePort();
    const r = await pmv6(['run', '--target', `http://127.0.0.1:${port}`], { PMV6_USER: 'admin', PMV6_PASSWORD: 'x' });
    expect(r.code).toBe(2);
    expect(r.ms).toBeLessThan(10_000);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+/);
  });

  test('clauses --json lists the catalogue with quotes', async () => {
    const r = await pmv6(['clauses', '--json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { clauses: Array<{ id: string; quote: string }> };
    expect(doc.clauses.length).toBeGreaterThanOrEqual(60);
    for (const c of doc.clauses) expect(c.quote.length).toBeGreaterThan(0);
  });

  test('serve answers Basic requests, then run by URL with --control passes and rejected credentials exit 2', async () => {
    const { base, password, token, child, output } = await serve();
    try {
      expect(output()).not.toContain(password);
      const res = await fetch(`${base}/index.php/api/v6/version.json`, {
        headers: { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`, 'content-type': 'application/json; charset=utf-8' },
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { api_version: string }).api_version).toBe('6');

      const created = await fetch(`${base}/__control/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ username: 'hmac-user', password: randomBytes(9).toString('hex'), role: 'normal user', api_only: false, active: true }),
      });
      expect(created.status).toBe(201);
      const keys = (await created.json()) as { public_key: string; private_key: string };
      const signed = async (tamper: boolean) => {
        const headers = hmacHeaders({
          publicKey: keys.public_key,
          privateKey: keys.private_key,
          uri: 'api/v6/version.json',
          timestamp: Math.floor(Date.now() / 1000),
          body: '',
        });
        if (tamper) headers['X-Request-Hash'] = (headers['X-Request-Hash']!.startsWith('0') ? '1' : '0') + headers['X-Request-Hash']!.slice(1);
        return (await fetch(`${base}/index.php/api/v6/version.json`, { headers: { ...headers, 'content-type': 'application/json; charset=utf-8' } })).status;
      };
      expect(await signed(false)).toBe(200);
      expect(await signed(true)).toBe(401);

      const run = await pmv6(
        ['run', '--target', base, '--control', `${base}/__control`],
        {
          PMV6_USER: 'admin',
          PMV6_PASSWORD: password,
          PMV6_CONTROL_TOKEN: token,
        },
        { timeoutMs: 120_000 },
      );
      expect(run.stdout + run.stderr).not.toContain(password);
      expect(run.stdout + run.stderr).not.toContain(token);
      // What a failed run said: the lines not ok and the verdict.
      const why = `exit ${run.code}\n${run.stdout
        .split('\n')
        .filter((l) => /^(FAIL|INCONCLUSIVE|HARNESS|verdict)|inconclusive|FAIL/.test(l))
        .join('\n')
        .slice(-3000)}\n${run.stderr.slice(-1000)}`;
      expect(run.stdout, why).toMatch(/verdict: CONFORMANT/);
      expect(run.code, why).toBe(0);

      const bad = await pmv6(['run', '--target', base], { PMV6_USER: 'admin', PMV6_PASSWORD: `${password}x` });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/rejected the credentials/);
    } finally {
      child.kill('SIGTERM');
      const code = await new Promise((resolve) => child.on('close', resolve));
      expect(code).toBe(0);
    }
  }, 180_000);
});
