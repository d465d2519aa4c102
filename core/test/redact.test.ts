import { beforeEach, describe, expect, test } from 'vitest';
import type { Exchange } from '../exchange.ts';
import { clearSecrets, redactExchange, redactHeaders, redactJsonText, registerCredentials, registerSecret, scrub } from '../redact.ts';
import { basicAuthorization, hmacHeaders } from '../signers.ts';

const PASSWORD = 'Tr0ub4dor&3 "quoted" /ü+€';
const PRIVATE_KEY = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
const TOKEN = 'ctl_Zm9vYmFyYmF6cXV4MTIzNDU2';

function forms(secret: string): string[] {
  return [
    secret,
    encodeURIComponent(secret),
    encodeURIComponent(secret).replace(/%20/g, '+'),
    encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    JSON.stringify(secret).slice(1, -1),
    Buffer.from(secret).toString('base64'),
  ];
}

beforeEach(() => {
  clearSecrets();
  registerCredentials('admin', PASSWORD, 'password');
  registerSecret(PRIVATE_KEY, 'hmac private key');
  registerSecret(TOKEN, 'control token');
});

describe('scrub', () => {
  test.each(forms(PASSWORD).map((f) => [f]))('hides the password written as %s', (form) => {
    const out = scrub(`before ${form} after`);
    expect(out).toBe('before «redacted:password» after');
  });

  test('hides every registered secret, longest first, with its label', () => {
    expect(scrub(`k=${PRIVATE_KEY}&t=${TOKEN}`)).toBe('k=«redacted:hmac private key»&t=«redacted:control token»');
  });

  test('hides base64(user:password) anywhere, and any Basic/Bearer credential', () => {
    const header = basicAuthorization('admin', PASSWORD);
    expect(scrub(`echo: ${header.slice('Basic '.length)}`)).not.toContain(header.slice(6));
    expect(scrub(`${basicAuthorization('someone', 'unregistered-pw')} x`)).toBe('Basic «redacted» x');
    expect(scrub('Authorization: Bearer abcdefghijklmnopqrstuvwxyz')).toBe('Authorization: Bearer «redacted»');
  });

  test('leaves prose alone', () => {
    const text = 'A failed HTTP Basic authentication gives 401; Bearer tokens are not used';
    expect(scrub(text)).toBe(text);
  });

  test('half a secret or more is hidden; the username of registered credentials stays readable', () => {
    expect(scrub(`tail: ${PRIVATE_KEY.slice(30)}`)).toBe('tail: «redacted:hmac private key»');
    expect(scrub(`short: ${PRIVATE_KEY.slice(40)}`)).toBe(`short: ${PRIVATE_KEY.slice(40)}`);
    registerCredentials('pmv6-r1-user-long-name', 'pw', 'password of pmv6-r1-user-long-name');
    expect(scrub('user 12 pmv6-r1-user-long-name was deleted')).toBe('user 12 pmv6-r1-user-long-name was deleted');
    expect(scrub(basicAuthorization('pmv6-r1-user-long-name', 'pw').slice(6))).toBe('«redacted:password of pmv6-r1-user-long-name»');
  });

  test('ignores empty and very short secrets', () => {
    registerSecret('', 'empty');
    registerSecret('ab', 'short');
    expect(scrub('about a cab')).toBe('about a cab');
  });
});

describe('redactHeaders', () => {
  test('Authorization keeps its scheme; hash, cookies hidden; public key shortened', () => {
    const h = {
      Authorization: basicAuthorization('admin', PASSWORD),
      ...hmacHeaders({ publicKey: 'abcdef0123456789', privateKey: PRIVATE_KEY, uri: 'api/v6/x.json', timestamp: 1, body: '' }),
      Cookie: 'session=xyz',
      'set-cookie': ['a=1', 'b=2'],
      'X-Other': `key ${PRIVATE_KEY}`,
    };
    expect(redactHeaders(h)).toEqual({
      Authorization: 'Basic «redacted»',
      'X-Public-Key': 'abcdef«…»',
      'X-Request-Hash': '«redacted»',
      'X-Request-Timestamp': '1',
      Cookie: '«redacted»',
      'set-cookie': ['«redacted»', '«redacted»'],
      'X-Other': 'key «redacted:hmac private key»',
    });
    expect(redactHeaders({ authorization: 'garbage' })).toEqual({ authorization: '«redacted»' });
  });
});

describe('redactJsonText', () => {
  test('hides sensitive keys at any depth, keeps the rest', () => {
    const text = JSON.stringify({
      name: 'n',
      password: 'unregistered-one',
      nested: [{ private_key: 'k', privateKey: 'k2', token: 't', ok: 1 }],
      user: { new_password: 'np', password_confirm: 'np', Password: 'cased' },
    });
    expect(JSON.parse(redactJsonText(text))).toEqual({
      name: 'n',
      password: '«redacted»',
      nested: [{ private_key: '«redacted»', privateKey: '«redacted»', token: '«redacted»', ok: 1 }],
      user: { new_password: '«redacted»', password_confirm: '«redacted»', Password: '«redacted»' },
    });
  });

  test('text without sensitive keys keeps its exact form', () => {
    const text = '{ "id" : 12,\n  "name": "x" }';
    expect(redactJsonText(text)).toBe(text);
  });

  test('non-JSON text: only registered secrets go', () => {
    expect(redactJsonText(`password=${encodeURIComponent(PASSWORD)}&password2=plain`)).toBe('password=«redacted:password»&password2=plain');
  });
});

describe('redactExchange', () => {
  test('no planted secret survives in any form', () => {
    const ex: Exchange = {
      request: {
        method: 'POST',
        url: `http://h/index.php/api/v6/passwords/search/${encodeURIComponent(PASSWORD)}.json?t=${TOKEN}`,
        headers: {
          Authorization: basicAuthorization('admin', PASSWORD),
          ...hmacHeaders({ publicKey: 'pk0123456789', privateKey: PRIVATE_KEY, uri: 'u', timestamp: 1, body: '' }),
        },
        body: JSON.stringify({ name: 'x', password: PASSWORD, notes: `key is ${PRIVATE_KEY}` }),
      },
      response: {
        status: 200,
        headers: { 'content-type': 'application/json', 'x-echo': Buffer.from(`admin:${PASSWORD}`).toString('base64') },
        body: JSON.stringify({ private_key: PRIVATE_KEY, echo: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` }),
      },
      json: { private_key: PRIVATE_KEY, deep: [{ note: TOKEN }] },
      error: `failed with ${TOKEN}`,
      durationMs: 3,
    };
    const text = JSON.stringify(redactExchange(ex));
    for (const secret of [PASSWORD, PRIVATE_KEY, TOKEN]) {
      for (const form of forms(secret)) expect(text).not.toContain(form);
    }
    expect(text).not.toContain(Buffer.from(`admin:${PASSWORD}`).toString('base64'));
    expect(text).not.toContain(ex.request.headers['X-Request-Hash']);
    expect(text).toContain('«redacted:control token»');
    expect(ex.request.headers['Authorization']).toMatch(/^Basic [A-Za-z0-9+/=]+$/);
  });
});
