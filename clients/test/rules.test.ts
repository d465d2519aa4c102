import { describe, expect, test } from 'vitest';
import { computeRequestHash } from '../../fixtures/reference-server/src/auth/hmac.ts';
import type { ReceivedRequest } from '../request.ts';
import { type CheckContext, checkRequest, isSpecContentType } from '../rules.ts';

const KEY = 'a'.repeat(64);
const NOW = 1_780_000_000_000;
const ctx: CheckContext = { basePath: '', privateKeyOf: (pk) => (pk === 'pub' ? KEY : undefined), nowMs: NOW, windowSeconds: 300 };
const BASIC = `Basic ${Buffer.from('alice:secret-pw').toString('base64')}`;

function req(over: Partial<ReceivedRequest> & { headers?: Record<string, string | string[]> } = {}): ReceivedRequest {
  return {
    seq: 1,
    at: NOW,
    method: 'GET',
    rawUrl: '/index.php/api/v6/passwords.json',
    origin: 'http://127.0.0.1:1',
    body: undefined,
    ...over,
    headers: { 'content-type': 'application/json; charset=utf-8', authorization: BASIC, ...(over.headers ?? {}) },
  };
}

const clauses = (r: ReceivedRequest, c = ctx) => checkRequest(r, c).findings.map((f) => f.clause);

describe('Content-Type (CLI-01)', () => {
  test.each([
    ['application/json; charset=utf-8', true],
    ['application/json;charset=UTF-8', true],
    ['Application/JSON; charset="utf-8"', true],
    ['application/json', false],
    ['application/json; charset=iso-8859-1', false],
    ['text/plain; charset=utf-8', false],
    ['application/json; charset=utf-8; version=6', false],
    ['', false],
  ])("%j is the spec's header: %s", (value, ok) => {
    expect(isSpecContentType(value)).toBe(ok);
  });

  test('a request without Content-Type is a finding of CLI-01 only', () => {
    const r = req();
    delete r.headers['content-type'];
    expect(clauses(r)).toEqual(['CLI-01']);
  });
});

describe('a conforming request', () => {
  test('raises no finding and is checked against the clauses that apply', () => {
    const result = checkRequest(req(), ctx);
    expect(result.findings).toEqual([]);
    expect(result.checked).toEqual(['CLI-01', 'CLI-02', 'CLI-03', 'CLI-04', 'CLI-08']);
  });

  test('under a base path the API root moves with it', () => {
    expect(clauses(req({ rawUrl: '/tpm/index.php/api/v6/passwords.json' }), { ...ctx, basePath: '/tpm' })).toEqual([]);
    expect(clauses(req({ rawUrl: '/index.php/api/v6/passwords.json' }), { ...ctx, basePath: '/tpm' })).toEqual(['CLI-04']);
  });
});

describe('authentication (CLI-02)', () => {
  test.each([
    ['no credentials at all', { authorization: undefined }],
    ['a Bearer token', { authorization: 'Bearer abcdef' }],
    ['Basic without a colon', { authorization: `Basic ${Buffer.from('nocolon').toString('base64')}` }],
    ['two of the three HMAC headers', { authorization: undefined, 'x-public-key': 'pub', 'x-request-hash': 'ab' }],
  ])('%s is a finding', (_what, headers) => {
    const r = req({ headers: headers as Record<string, string> });
    for (const [k, v] of Object.entries(headers)) if (v === undefined) delete r.headers[k];
    expect(clauses(r)).toContain('CLI-02');
  });
});

describe('address (CLI-03, CLI-04)', () => {
  test.each([
    ['/index.php/api/v6/passwords', ['CLI-03']],
    ['/index.php/api/v6/passwords.json?x=1', []],
    ['/index.php/api/v6/passwords?x=.json', ['CLI-03']],
    ['/index.php/api/v5/passwords.json', ['CLI-04']],
    ['/api/v6/passwords.json', ['CLI-04']],
    ['/index.php/api/V6/passwords.json', ['CLI-04']],
  ])('%s → %j', (rawUrl, expected) => {
    expect(clauses(req({ rawUrl }))).toEqual(expected);
  });
});

describe('X-Page-Size (CLI-05)', () => {
  test.each([
    ['4', false],
    ['5', true],
    ['1000', true],
    ['1001', false],
    ['2000', false],
    ['abc', false],
    ['', false],
    ['-5', false],
    ['5.0', false],
    [' 5', false],
    ['0005', true],
  ])('X-Page-Size %j conforms: %s', (value, ok) => {
    expect(clauses(req({ headers: { 'x-page-size': value } }))).toEqual(ok ? [] : ['CLI-05']);
  });

  test('the header sent twice is a finding', () => {
    expect(clauses(req({ headers: { 'x-page-size': ['5', '10'] } }))).toEqual(['CLI-05']);
  });
});

describe('HMAC (CLI-07)', () => {
  const signed = (uri: string, ts: string, body = '') => ({
    'x-public-key': 'pub',
    'x-request-timestamp': ts,
    'x-request-hash': computeRequestHash(KEY, uri, ts, body),
  });
  const hmacReq = (headers: Record<string, string>, over: Omit<Partial<ReceivedRequest>, 'headers'> = {}) => {
    const r = req({ ...over, headers });
    delete r.headers.authorization;
    return r;
  };
  const ts = String(Math.floor(NOW / 1000));

  test('a request signed as the product computes it raises no finding', () => {
    expect(clauses(hmacReq(signed('api/v6/passwords.json', ts)))).toEqual([]);
    const body = '{"name": "x",\n "project_id": 1}';
    expect(clauses(hmacReq(signed('api/v6/passwords.json', ts, body), { method: 'POST', body: Buffer.from(body) }))).toEqual([]);
  });

  test('a wrong signature is a finding of CLI-07 with a diagnosis', () => {
    const [f] = checkRequest(hmacReq(signed('/api/v6/passwords.json', ts)), ctx).findings;
    expect(f).toMatchObject({ clause: 'CLI-07', hmac: { verdict: 'mistakes', mistakes: ['leading-slash'] } });
  });

  test('a body the kit did not read is not judged', () => {
    const r = hmacReq({ ...signed('api/v6/passwords.json', ts), 'content-length': '10' }, { method: 'POST' });
    expect(checkRequest(r, ctx).checked).not.toContain('CLI-07');
  });
});

describe('methods (CLI-08) and bodies (CLI-09)', () => {
  test.each(['PATCH', 'HEAD', 'OPTIONS'])('%s is a finding', (method) => {
    expect(clauses(req({ method }))).toEqual(['CLI-08']);
  });

  test.each([
    ['{"name":"x"}', []],
    ['[1,2]', []],
    ['name=x&project_id=1', ['CLI-09']],
    ['{"name":', ['CLI-09']],
  ])('body %j → %j', (body, expected) => {
    expect(clauses(req({ method: 'POST', body: Buffer.from(body) }))).toEqual(expected);
  });

  test('a body that is not UTF-8 is a finding', () => {
    expect(clauses(req({ method: 'POST', body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]) }))).toEqual(['CLI-09']);
  });
});
