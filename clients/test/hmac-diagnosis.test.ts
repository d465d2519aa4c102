import { createHmac } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { computeRequestHash } from '../../fixtures/reference-server/src/auth/hmac.ts';
import { describeDiagnosis, diagnoseHmac, HMAC_MISTAKES, type HmacInput, type HmacMistake, verifiesAsProduct } from '../hmac-diagnosis.ts';

const KEY = '0123456789abcdef'.repeat(4);
const NOW = 1_780_000_000_000;
const SECONDS = String(NOW / 1000);
const URL_SENT = '/index.php/api/v6/passwords/search/pmv6%20client.json?_=17';
const URI = 'api/v6/passwords/search/pmv6%20client.json?_=17';
const BODY = JSON.stringify({ name: 'x', project_id: 1 }, null, 2);

function input(hash: string, timestamp = SECONDS, body = BODY): HmacInput {
  return { rawUrl: URL_SENT, publicKey: 'pub', hash, timestamp, body: Buffer.from(body), privateKey: KEY, nowMs: NOW, windowSeconds: 300 };
}

const mistakesOf = (i: HmacInput) => {
  const d = diagnoseHmac(i);
  return d.verdict === 'mistakes' ? d.mistakes : d.verdict;
};

describe('HMAC diagnosis', () => {
  test('the product recipe verifies, through the fast path and the diagnosis', () => {
    const i = input(computeRequestHash(KEY, URI, SECONDS, BODY));
    expect(verifiesAsProduct(i)).toBe(true);
    expect(diagnoseHmac(i)).toEqual({ verdict: 'verified' });
  });

  test.each<[HmacMistake, () => HmacInput]>([
    ['decoded-path', () => input(computeRequestHash(KEY, 'api/v6/passwords/search/pmv6 client.json?_=17', SECONDS, BODY))],
    ['no-query', () => input(computeRequestHash(KEY, 'api/v6/passwords/search/pmv6%20client.json', SECONDS, BODY))],
    ['leading-slash', () => input(computeRequestHash(KEY, `/${URI}`, SECONDS, BODY))],
    ['index-php-included', () => input(computeRequestHash(KEY, `index.php/${URI}`, SECONDS, BODY))],
    ['index-php-included', () => input(computeRequestHash(KEY, `/index.php/${URI}`, SECONDS, BODY))],
    ['reserialised-body', () => input(computeRequestHash(KEY, URI, SECONDS, JSON.stringify(JSON.parse(BODY))))],
    ['body-left-out', () => input(computeRequestHash(KEY, URI, SECONDS, ''))],
    [
      'hex-decoded-key',
      () =>
        input(
          createHmac('sha256', Buffer.from(KEY, 'hex'))
            .update(URI + SECONDS + BODY)
            .digest('hex'),
        ),
    ],
    ['uppercase-hex', () => input(computeRequestHash(KEY, URI, SECONDS, BODY).toUpperCase())],
    ['milliseconds', () => input(computeRequestHash(KEY, URI, String(NOW), BODY), String(NOW))],
    ['clock-skew', () => input(computeRequestHash(KEY, URI, String(NOW / 1000 - 3600), BODY), String(NOW / 1000 - 3600))],
  ])('names %s', (mistake, make) => {
    const i = make();
    expect(verifiesAsProduct(i)).toBe(false);
    expect(mistakesOf(i)).toEqual([mistake]);
    expect(describeDiagnosis(diagnoseHmac(i), 300)).toContain(HMAC_MISTAKES[mistake].slice(0, 20));
  });

  test.each<[string, string, HmacMistake[]]>([
    // Python: json.dumps(body, sort_keys=True) hashed, the dict sent in its own order.
    ['a body hashed with sorted keys', JSON.stringify({ project_id: 1, name: 'x' }), ['reordered-body']],
    // Python's json.dumps default: non-ASCII as \uXXXX and ", " separators, while UTF-8 bytes were sent.
    ['non-ASCII sent as UTF-8, hashed escaped', JSON.stringify({ name: 'Café ☕ 😀', project_id: 1 }), ['escaped-non-ascii']],
    ['non-ASCII sent escaped, hashed as UTF-8', JSON.stringify({ name: 'Café' }).replace('é', '\\u00e9'), ['escaped-non-ascii']],
    ['sorted and escaped at once', JSON.stringify({ project_id: 1, name: 'Zoë' }), ['reordered-body', 'escaped-non-ascii']],
  ])('names the body mistakes of %s', (_what, sent, mistakes) => {
    const parsed = JSON.parse(sent) as Record<string, unknown>;
    const sorted = Object.fromEntries(
      Object.keys(parsed)
        .sort()
        .map((k) => [k, parsed[k]]),
    );
    const reorder = mistakes.includes('reordered-body');
    const hashed0 = reorder ? JSON.stringify(sorted) : sent;
    const toEscapes = (t: string) => t.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    const hashed = !mistakes.includes('escaped-non-ascii') ? hashed0 : /\\u00e9/.test(sent) ? hashed0.replace('\\u00e9', 'é') : toEscapes(hashed0);
    const i = input(computeRequestHash(KEY, URI, SECONDS, hashed), SECONDS, sent);
    expect(verifiesAsProduct(i)).toBe(false);
    expect(mistakesOf(i)).toEqual(mistakes);
    for (const m of mistakes) expect(describeDiagnosis(diagnoseHmac(i), 300)).toContain(HMAC_MISTAKES[m].slice(0, 30));
  });

  test('a body sent in the order it was hashed, with only ASCII, is no body mistake', () => {
    const sent = JSON.stringify({ b: 1, a: 2 });
    expect(diagnoseHmac(input(computeRequestHash(KEY, URI, SECONDS, sent), SECONDS, sent))).toEqual({ verdict: 'verified' });
  });

  test('the edge of the window is inside it; one second past is clock skew with its size', () => {
    const edge = String(NOW / 1000 + 300);
    expect(diagnoseHmac(input(computeRequestHash(KEY, URI, edge, BODY), edge))).toEqual({ verdict: 'verified' });
    const past = String(NOW / 1000 + 301);
    expect(diagnoseHmac(input(computeRequestHash(KEY, URI, past, BODY), past))).toEqual({ verdict: 'mistakes', mistakes: ['clock-skew'], skewSeconds: 301 });
  });

  test('two mistakes at once are both named', () => {
    expect(mistakesOf(input(computeRequestHash(KEY, `/${URI}`, SECONDS, BODY).toUpperCase()))).toEqual(['leading-slash', 'uppercase-hex']);
    expect(mistakesOf(input(computeRequestHash(KEY, `/index.php/${URI.split('?')[0]}`, SECONDS, ''), SECONDS))).toEqual('no-recipe');
  });

  test('a signature with another key matches no recipe', () => {
    expect(mistakesOf(input(computeRequestHash('f'.repeat(64), URI, SECONDS, BODY)))).toBe('no-recipe');
  });

  test('missing headers, a timestamp that is not a number and an unknown key are told apart', () => {
    expect(diagnoseHmac({ ...input('ab'), hash: undefined, timestamp: undefined })).toEqual({
      verdict: 'missing-headers',
      missing: ['X-Request-Hash', 'X-Request-Timestamp'],
    });
    expect(diagnoseHmac(input('ab', '2026-11-26T06:00:00Z'))).toEqual({ verdict: 'not-a-timestamp' });
    expect(diagnoseHmac({ ...input('ab'), privateKey: undefined })).toEqual({ verdict: 'unknown-key' });
  });
});
