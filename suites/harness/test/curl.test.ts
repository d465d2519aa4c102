import { execFileSync } from 'node:child_process';
import { beforeEach, describe, expect, test } from 'vitest';
import type { Exchange } from '../../../core/exchange.ts';
import { clearSecrets, registerCredentials, registerSecret } from '../../../core/redact.ts';
import { basicAuthorization, hmacHeaders } from '../../../core/signers.ts';
import { shellQuote, toCurl } from '../curl.ts';

const URL = 'http://127.0.0.1:8080/index.php/api/v6/passwords.json';

function exchange(request: Partial<Exchange['request']>): Exchange {
  return { request: { method: 'GET', url: URL, headers: {}, ...request }, durationMs: 1 };
}

/** What bash makes of a word: the single argument it expands to. */
function bashWord(word: string, env: Record<string, string> = {}): string {
  return execFileSync('bash', ['-c', `printf '%s' ${word}`], { env: { PATH: process.env['PATH'] ?? '', ...env } }).toString('utf8');
}

beforeEach(() => {
  clearSecrets();
  registerCredentials('admin', 'S3cret-pass', 'password');
});

describe('shellQuote', () => {
  test.each([[`it's`], [`{"name":"O'Brien \\"x\\" $HOME \`id\` !"}`], ['line one\nline two\ttab\r'], ["'"], [''], ['ünïcödé ✓ €']])(
    'bash reads %j back unchanged',
    (text) => {
      const quoted = shellQuote(text);
      expect(quoted).not.toContain('\n');
      expect(bashWord(quoted)).toBe(text);
    },
  );

  test('a registered secret becomes a variable outside the quotes', () => {
    registerSecret('p@ss w0rd!', 'user pw');
    const quoted = shellQuote('{"password":"«redacted:user pw»","x":"it\'s"}');
    expect(quoted).toBe(`'{"password":"'"$PMV6_USER_PW"'","x":"it'\\''s"}'`);
    expect(bashWord(quoted, { PMV6_USER_PW: 'p@ss w0rd!' })).toBe('{"password":"p@ss w0rd!","x":"it\'s"}');
  });
});

describe('toCurl', () => {
  test('Basic auth, JSON body with quotes', () => {
    const line = toCurl(
      exchange({
        method: 'POST',
        headers: { 'Content-Type': 'application/json; charset=utf-8', Authorization: basicAuthorization('admin', 'S3cret-pass') },
        body: `{"name":"pmv6-1-O'Brien"}`,
      }),
    );
    expect(line).toBe(
      `curl -sS -i -X 'POST' '${URL}' -H 'Content-Type: application/json; charset=utf-8' -u "$PMV6_USER:$PMV6_PASSWORD" --data-raw '{"name":"pmv6-1-O'\\''Brien"}'`,
    );
    expect(line).not.toContain('S3cret-pass');
  });

  test('a missing Content-Type stays missing', () => {
    const line = toCurl(exchange({ method: 'POST', headers: {}, body: '{}' }));
    expect(line).toContain(`-H 'Content-Type:' --data-raw '{}'`);
    expect(toCurl(exchange({ method: 'GET', headers: {} }))).toBe(`curl -sS -i -X 'GET' '${URL}'`);
  });

  test('HMAC: headers from variables and a comment to recompute the hash', () => {
    const headers = hmacHeaders({ publicKey: 'pubkey0123', privateKey: 'private-key-value', uri: 'api/v6/passwords.json?x=1', timestamp: 99, body: '' });
    registerSecret('private-key-value', 'hmac private key');
    const line = toCurl(exchange({ url: `${URL}?x=1`, headers }));
    expect(line).toContain(`-H "X-Public-Key: $PMV6_HMAC_PUBLIC" -H "X-Request-Hash: $PMV6_HMAC_HASH" -H "X-Request-Timestamp: $PMV6_HMAC_TIMESTAMP"`);
    expect(line).toContain('# HMAC: recompute PMV6_HMAC_HASH');
    expect(line).toContain('"api/v6/passwords.json?x=1"');
    expect(line).not.toContain(headers['X-Request-Hash']);
    expect(line).not.toContain('pubkey0123');
    expect(line.split('\n')).toHaveLength(1);
  });

  test('control token as a variable; other headers quoted; multi-line body stays on one line', () => {
    const line = toCurl(
      exchange({
        method: 'PUT',
        url: 'http://h/__control/settings',
        headers: { Authorization: 'Bearer tok_abcdefghijklmnopqrstuvwxyz', 'X-Page-Size': '5' },
        body: '{\n  "api_enabled": false\n}',
      }),
    );
    expect(line).toBe(
      `curl -sS -i -X 'PUT' 'http://h/__control/settings' -H "Authorization: Bearer $PMV6_CONTROL_TOKEN" -H 'X-Page-Size: 5' -H 'Content-Type:' --data-raw $'{\\n  "api_enabled": false\\n}'`,
    );
  });

  test('sensitive JSON fields of the body are hidden', () => {
    const line = toCurl(exchange({ method: 'POST', headers: {}, body: '{"name":"n","password":"unregistered"}' }));
    expect(line).not.toContain('unregistered');
    expect(line).toContain('"password":"«redacted»"');
  });
});
