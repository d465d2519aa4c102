import { beforeEach, describe, expect, test } from 'vitest';
import type { Exchange } from '../exchange.ts';
import {
  clearSecrets,
  hideQueryCredentials,
  lastScanBytes,
  lastSearchSteps,
  redactExchange,
  redactHeaders,
  redactJsonText,
  redactUrl,
  registerCredentials,
  registerSecret,
  scrub,
} from '../redact.ts';
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

const hexBytes = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => b.toString(16).padStart(2, '0'));

describe('scrub: hex', () => {
  const hex = Buffer.from(PASSWORD, 'utf8').toString('hex');
  test.each([
    ['lower case', hex],
    ['upper case', hex.toUpperCase()],
    ['mixed case', hex.replace(/../g, (h, i: number) => (i % 4 ? h.toUpperCase() : h))],
    ['space-separated', hexBytes(PASSWORD).join(' ')],
    ['colon-separated, upper case', hexBytes(PASSWORD).join(':').toUpperCase()],
    ['dash-separated', hexBytes(PASSWORD).join('-')],
    ['comma-separated', hexBytes(PASSWORD).join(',')],
    [
      '0x-prefixed',
      hexBytes(PASSWORD)
        .map((h) => `0x${h}`)
        .join(', '),
    ],
    [
      '\\x-escaped',
      hexBytes(PASSWORD)
        .map((h) => `\\x${h}`)
        .join(''),
    ],
    ['in 2-byte groups', (hex.match(/.{1,4}/g) ?? []).join(' ')],
    ['newline-separated', hexBytes(PASSWORD).join('\n')],
    ['form-encoded spaces', hexBytes(PASSWORD).join('+')],
  ])('hides the password written as hex, %s', (_, form) => {
    expect(scrub(`before ${form} after`)).toBe('before «redacted:password» after');
  });

  test('at an odd digit offset inside a longer hex run, and with hex digits of context around separated bytes', () => {
    expect(scrub(`id=a${hex}b`)).toBe('id=a«redacted:password»b');
    expect(scrub(`a${hexBytes(PASSWORD).join(':')}a`)).toBe('a«redacted:password»a');
    expect(scrub(`ab:c${hexBytes(PASSWORD).join(':')}`)).toBe('ab:c«redacted:password»');
  });

  test('combinations: hex of JSON-escaped, percent-encoded hex, base64 of spaced hex, hex of base64', () => {
    const forms = [
      Buffer.from(JSON.stringify(PASSWORD)).toString('hex'),
      encodeURIComponent(hexBytes(PASSWORD).join(' ')),
      [...hex].map((c) => `%${c.charCodeAt(0).toString(16)}`).join(''),
      Buffer.from(hexBytes(PASSWORD).join(' ')).toString('base64'),
      Buffer.from(Buffer.from(PASSWORD).toString('base64')).toString('hex').toUpperCase(),
      JSON.stringify(hexBytes(PASSWORD).join(':')),
    ];
    for (const form of forms) {
      const out = scrub(`x ${form} y`);
      expect(out, form).toContain('«redacted:password»');
      expect(out, form).not.toContain(hex.slice(4, 30));
    }
  });

  test('hex that is not a secret stays: ids, digests, UUIDs, dates', () => {
    const text = 'id 550e8400-e29b-41d4-a716-446655440000, sha 2c26b46b68ffc68ff99b453c1d304134, on 2026-11-26 at 12:30:01, ab cd ef';
    expect(scrub(text)).toBe(text);
  });
});

describe('scrub: work linear in the bytes scanned', () => {
  // Work counts, not time: the benchmark (npm run bench:redact) measures time.
  const body = (n: number) => {
    const unit = `{"id":12,"name":"pmv6-r1-user-1","notes":"${Buffer.from('x'.repeat(40)).toString('base64')} 61 62 63 %41 &amp; \\u0041 ${'ab12'.repeat(8)}"},`;
    return `[${unit.repeat(Math.ceil(n / unit.length))}]`;
  };
  test('the bytes decoded and the automaton steps grow tenfold for a tenfold text', () => {
    const work = (text: string) => {
      scrub(text);
      return { scanned: lastScanBytes, steps: lastSearchSteps, searched: text.length + lastScanBytes };
    };
    const small = work(body(50_000));
    const large = work(body(500_000));
    expect(large.scanned / small.scanned).toBeLessThan(11);
    expect(large.steps / small.steps).toBeLessThan(11);
    // Aho–Corasick: at most two steps per byte searched (one forward, at most one back on average).
    expect(large.steps).toBeLessThanOrEqual(2 * large.searched);
  });

  test('a large text is scanned in overlapping windows: a secret across any window boundary is hidden', () => {
    const forms = [PRIVATE_KEY, Buffer.from(PASSWORD).toString('base64'), Buffer.from(PASSWORD).toString('hex').toUpperCase(), JSON.stringify(PASSWORD)];
    const window = 256 * 1024;
    for (const form of forms) {
      for (const at of [window - 7, window + 32 * 1024 - form.length + 3, 2 * window - 1]) {
        const text = `${'x y '.repeat(at / 4 + 1).slice(0, at)}${form}${' z'.repeat(100_000)}`;
        const out = scrub(text);
        expect(out.includes(form.slice(2, -2)), `${form} at ${at}`).toBe(false);
        expect(out).toContain('«redacted:');
      }
    }
  });

  test('many secrets sharing a long prefix (one user name per run) do not multiply the steps per byte', () => {
    const text = body(50_000);
    scrub(text);
    const few = lastSearchSteps;
    for (let u = 0; u < 300; u++) registerCredentials(`pmv6-r1-user-${u}`, `password-of-user-${u}-xyz`, `password of pmv6-r1-user-${u}`);
    scrub(text);
    expect(lastSearchSteps).toBeLessThanOrEqual(2 * (text.length + lastScanBytes));
    expect(lastSearchSteps / few).toBeLessThan(3);
  });
});

describe('query-string credentials', () => {
  test('the value of a credential-named parameter is hidden, registered or not; other parameters stay', () => {
    expect(redactUrl('http://h/a.json?password=unregistered-1&page=2&api_key=k1&sort=name')).toBe(
      'http://h/a.json?password=«redacted»&page=2&api_key=«redacted»&sort=name',
    );
    expect(redactUrl('/x?Pass%77ord=a+b&access_token=t#frag')).toBe('/x?Pass%77ord=«redacted»&access_token=«redacted»#frag');
    expect(redactUrl(`/x?token=${TOKEN}`)).toBe('/x?token=«redacted:control token»');
    expect(redactUrl('/x?monkey=banana&q=1')).toBe('/x?monkey=banana&q=1');
    expect(hideQueryCredentials('"/v6/version.json?pwd=abc&x=1" was sent')).toBe('"/v6/version.json?pwd=«redacted»&x=1" was sent');
  });

  test('redactExchange hides them in the request URL', () => {
    const ex: Exchange = { request: { method: 'GET', url: 'http://h/v.json?secret=s3&n=1', headers: {} }, durationMs: 1 };
    expect(redactExchange(ex).request.url).toBe('http://h/v.json?secret=«redacted»&n=1');
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
