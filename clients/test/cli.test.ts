import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PASSWORD = `pw-${randomBytes(8).toString('hex')}`;
const TOKEN = randomBytes(16).toString('hex');
const env = { ...process.env, PMV6_ADMIN_PASSWORD: PASSWORD, PMV6_CONTROL_TOKEN: TOKEN };

function cli(args: string[]) {
  return spawnSync(process.execPath, ['bin/pmv6.js', ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 30_000 });
}

/** Starts `pmv6 clients serve`, lets `drive` send requests, stops it through the kit, returns exit code and output. */
async function serve(args: string[], drive: (base: string) => Promise<void>): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['bin/pmv6.js', 'clients', 'serve', '--port', '0', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  const killer = setTimeout(() => child.kill('SIGKILL'), 40_000);
  try {
    const started = Date.now();
    while (!/listening on (\S+)/.test(out) && Date.now() - started < 30_000) await new Promise((r) => setTimeout(r, 50));
    const base = /listening on (\S+)/.exec(out)?.[1];
    if (base === undefined) throw new Error(`the kit did not start: ${out}`);
    await drive(base);
    const stop = await fetch(`${base}/__clients/stop`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, signal: AbortSignal.timeout(10_000) });
    expect(stop.status).toBe(204);
    return { code: await closed, out };
  } finally {
    clearTimeout(killer);
  }
}

const headers = (ct = true) => ({
  authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`,
  'user-agent': 'cli-test/1.0',
  ...(ct ? { 'content-type': 'application/json; charset=utf-8' } : {}),
});

describe('pmv6 clients', () => {
  test.each([
    [['clients'], 2, /Usage:/],
    [['clients', 'bogus'], 2, /^pmv6 clients: unknown subcommand "bogus"/],
    [['clients', 'serve', '--scenario', 'flood'], 2, /^pmv6 clients: --scenario: name must be one of/],
    [['clients', 'serve', '--port', 'eighty'], 2, /^pmv6 clients: --port must be an integer/],
    [['clients', 'run'], 2, /^pmv6 clients: give the client's command after --/],
    [['clients', 'run', 'npm', 'test'], 2, /^pmv6 clients: give the client's command after --/],
    [['clients', 'run', '--scenarios', 'flood', '--', 'true'], 2, /^pmv6 clients: --scenarios: "flood" is not one of/],
    [['clients', 'run', '--expect', 'normal=maybe', '--', 'true'], 2, /^pmv6 clients: --expect: "normal=maybe" is not SCENARIO=EXPECTATION/],
    [['clients', 'serve', '--nope'], 2, /^pmv6 clients: unknown option --nope \(--help lists the options\)/],
  ])('%j exits %i with one clear line', (args, code, text) => {
    const r = cli(args);
    expect(r.status).toBe(code);
    expect(`${r.stderr}${r.stdout}`).toMatch(text);
    if (code === 2 && args.length > 1) expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  test('clauses lists the client clauses', () => {
    const r = cli(['clients', 'clauses', '--json']);
    expect(r.status).toBe(0);
    expect((JSON.parse(r.stdout) as Array<{ id: string }>).map((c) => c.id)).toContain('CLI-06');
  });

  test('serve: no request at all is inconclusive (exit 3)', async () => {
    const r = await serve(['--quiet'], async () => undefined);
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/verdict: INCONCLUSIVE/);
  }, 60_000);

  test('serve: a conforming client exits 0', async () => {
    const r = await serve([], async (base) => {
      expect((await fetch(`${base}/index.php/api/v6/version.json`, { headers: headers() })).status).toBe(200);
    });
    expect(r.out).toMatch(/verdict: CONFORMANT: 0 findings from 1 requests of 1 clients/);
    expect(r.code).toBe(0);
  }, 60_000);

  test('serve: a MUST finding exits 1, writes the three report files, and no secret is printed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pmv6-clients-cli-'));
    const r = await serve(['--report-dir', dir], async (base) => {
      expect((await fetch(`${base}/index.php/api/v6/version.json`, { headers: headers(false) })).status).toBe(415);
    });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/FAIL \[CLI-01\]/);
    expect(r.out).toMatch(/reproduce: curl /);
    for (const f of ['results.json', 'junit.xml', 'report.html']) expect(existsSync(join(dir, f)), f).toBe(true);
    expect(r.out).not.toContain(PASSWORD);
    expect(r.out).not.toContain(TOKEN);
  }, 60_000);
});

describe('pmv6 clients run', () => {
  // Issue 37: the command gets the control URL and the token given in PMV6_CONTROL_TOKEN, so its
  // own tests can make a second user; --report-dir writes the four reports.
  test('PMV6_CONTROL_URL and the given PMV6_CONTROL_TOKEN reach the command; a second user made through them works; four reports', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pmv6-clients-run-cli-'));
    const script = [
      `curl -sf -X POST -H "Authorization: Bearer $PMV6_CONTROL_TOKEN" -H 'Content-Type: application/json; charset=utf-8' \\`,
      `  -d '{"username":"second","password":"second-pw-123","role":"normal user"}' "$PMV6_CONTROL_URL/users" >/dev/null || { echo 'control refused'; exit 3; }`,
      `[ "$PMV6_CONTROL_TOKEN" = "$EXPECTED_TOKEN" ] || { echo 'not the given token'; exit 4; }`,
      `code=$(curl -s -o /dev/null -w '%{http_code}' -u second:second-pw-123 -H 'Content-Type: application/json; charset=utf-8' "\${PMV6_API_URL}version.json")`,
      `echo "second user: $code"; [ "$code" = 200 ]`,
    ].join('\n');
    const r = spawnSync(
      process.execPath,
      ['bin/pmv6.js', 'clients', 'run', '--scenarios', 'normal', '--deadline', '5', '--report-dir', join(dir, 'out'), '--', 'sh', '-c', script],
      { cwd: ROOT, env: { ...env, EXPECTED_TOKEN: TOKEN }, encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.stdout, r.stderr).toMatch(/verdict: CONFORMANT: 1 of 1 scenarios/);
    expect(r.status).toBe(0);
    for (const f of ['client-run.json', 'report.html', 'summary.md', 'junit.xml']) expect(existsSync(join(dir, 'out', f)), f).toBe(true);
    expect(r.stdout).not.toContain(TOKEN);
  }, 60_000);

  test.each([
    [['--deadline', '10', '--max-time', '5'], /--max-time \(5\) must be at least --deadline \(10\)/],
    [['--jobs', '0'], /--jobs/],
  ])('usage error: %j', (args, message) => {
    const r = cli(['clients', 'run', ...args, '--', 'true']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
