import { createHmac } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { basicAuthorization, hmacHeaders, hmacSign } from '../signers.ts';

describe('basicAuthorization', () => {
  test('encodes user:password as UTF-8 base64', () => {
    expect(basicAuthorization('admin', 'secret')).toBe('Basic YWRtaW46c2VjcmV0');
    expect(basicAuthorization('jürgen', 'pässwörd:€')).toBe(`Basic ${Buffer.from('jürgen:pässwörd:€', 'utf8').toString('base64')}`);
  });
});

describe('hmacSign', () => {
  const privateKey = 'a3f1c2d4e5b6978812345678901234567890abcdef1234567890abcdef123456';

  test('matches an independent node:crypto computation', () => {
    const body = '{"name":"x","project_id":1}';
    const expected = createHmac('sha256', privateKey).update(`api/v6/passwords.json1732560000${body}`).digest('hex');
    expect(hmacSign({ privateKey, uri: 'api/v6/passwords.json', timestamp: 1732560000, body })).toBe(expected);
  });

  test('a long text body (hashed in pieces) gives the digest of its whole UTF-8, pairs and lone surrogates included', () => {
    for (const body of [`${'é😀x'.repeat(40_000)}\ud800`, `${'a'.repeat(65_535)}😀${'b'.repeat(70_000)}`]) {
      const expected = createHmac('sha256', privateKey)
        .update(Buffer.concat([Buffer.from('api/v6/passwords.json1'), Buffer.from(body, 'utf8')]))
        .digest('hex');
      expect(hmacSign({ privateKey, uri: 'api/v6/passwords.json', timestamp: 1, body })).toBe(expected);
    }
  });

  test('product-facts §2.2 formula, digests computed with python3 hmac/hashlib', () => {
    // hmac.new(b"key", b"api/v6/passwords.json1732560000", hashlib.sha256).hexdigest()
    expect(hmacSign({ privateKey: 'key', uri: 'api/v6/passwords.json', timestamp: '1732560000', body: '' })).toBe(
      'cf85d9bb6d1985a679c880744f69943ae13cd8b33406504b46b8c804d6357f93',
    );
    // hmac.new(private_key.encode(), b"api/v6/passwords.json1732560000" + body.encode(), hashlib.sha256).hexdigest()
    expect(hmacSign({ privateKey, uri: 'api/v6/passwords.json', timestamp: 1732560000, body: '{"name":"pmv6","project_id":3}' })).toBe(
      'b19495bee81e3e06f9fc6218dce81a4209a5454d68212556d7edc8c05b5e345a',
    );
  });

  test('uses the key string bytes, not hex-decoded', () => {
    const asHex = createHmac('sha256', Buffer.from(privateKey, 'hex')).update('u1').digest('hex');
    const result = hmacSign({ privateKey, uri: 'u', timestamp: 1, body: '' });
    expect(result).not.toBe(asHex);
    expect(result).toMatch(/^[0-9a-f]{64}$/);
  });

  test('string and Buffer bodies with the same bytes sign the same; UTF-8 bodies are hashed as bytes', () => {
    const body = '{"name":"ünïcödé ✓"}';
    const a = hmacSign({ privateKey, uri: 'api/v6/projects.json', timestamp: 5, body });
    const b = hmacSign({ privateKey, uri: 'api/v6/projects.json', timestamp: 5, body: Buffer.from(body, 'utf8') });
    expect(a).toBe(b);
    expect(a).toBe(
      createHmac('sha256', privateKey)
        .update(Buffer.from(`api/v6/projects.json5${body}`, 'utf8'))
        .digest('hex'),
    );
  });
});

describe('hmacHeaders', () => {
  test('returns the three headers', () => {
    const h = hmacHeaders({ publicKey: 'pub', privateKey: 'priv', uri: 'api/v6/version.json', timestamp: 42, body: '' });
    expect(Object.keys(h).sort()).toEqual(['X-Public-Key', 'X-Request-Hash', 'X-Request-Timestamp']);
    expect(h['X-Public-Key']).toBe('pub');
    expect(h['X-Request-Timestamp']).toBe('42');
    expect(h['X-Request-Hash']).toBe(createHmac('sha256', 'priv').update('api/v6/version.json42').digest('hex'));
  });
});
