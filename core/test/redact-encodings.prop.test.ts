import fc from 'fast-check';
import { beforeEach, describe, expect, test } from 'vitest';
import { clearSecrets, clip, HTML_ENTITY_NAMES, lastScanBytes, registerSecret, scrub, scrubWithin } from '../redact.ts';
import { ENCODER_NAMES, ENCODERS, encodeNested, leakedForm, type Nesting, nestingArb, secretArb } from './encodings.ts';

// Redaction against any secret under any nesting of the encodings servers use. Seeded and
// replayable: PMV6_REDACT_SEED=N (and fast-check's path from a failure report) replays a case.
const SEED = Number(process.env.PMV6_REDACT_SEED ?? 20261126);
const RUNS = 10_000;

/** Fails with the leaked form when `redact` leaves any form of the secret in the echoed text. */
function holds(redact: (text: string) => string) {
  return fc.property(secretArb, secretArb, nestingArb, fc.boolean(), (secret, other, nesting, twice) => {
    clearSecrets();
    registerSecret(secret, 'password');
    registerSecret(other, 'control token');
    const { text, forms } = encodeNested(secret, nesting);
    const echoed = twice ? `{"message":"${text}","again":"${text}"}` : text;
    const out = redact(echoed);
    const leak = leakedForm(out, forms);
    if (leak !== undefined) throw new Error(`leaked ${JSON.stringify(leak)} in ${JSON.stringify(out.slice(0, 400))}`);
  });
}

const KNOWN: Array<[string, Nesting]> = [
  // The admin password inside request headers echoed as JSON inside a JSON error message.
  [
    'p"w\\1\u00e9',
    {
      layers: [
        { encoder: 'json', before: 'Authorization-less ', after: '' },
        { encoder: 'json', before: '{"message":"', after: '"}' },
      ],
    },
  ],
  // The Basic header's base64, then JSON-escaped twice.
  [
    's3cr3t:with/colon',
    {
      basicSplitAt: 5,
      layers: [
        { encoder: 'base64', before: '', after: '' },
        { encoder: 'json', before: 'Basic ', after: '' },
        { encoder: 'json', before: '', after: '' },
      ],
    },
  ],
  // Form-encoded, then base64url of that, then HTML-escaped.
  [
    'a b+c%d/e',
    {
      layers: [
        { encoder: 'form', before: 'p=', after: '&x=1' },
        { encoder: 'base64url', before: 'xy', after: '' },
        { encoder: 'html', before: '<p>', after: '</p>' },
      ],
    },
  ],
  // A bearer token with a quote, PHP JSON, then percent-encoded.
  [
    'ctl_"Zm9v\u20ac',
    {
      layers: [
        { encoder: 'jsonPhp', before: 'Bearer ', after: '' },
        { encoder: 'percent', before: '', after: '' },
      ],
    },
  ],
];

beforeEach(() => clearSecrets());

describe('redaction under nested encodings', () => {
  test.each(KNOWN)('known case: %j', (secret, nesting) => {
    clearSecrets();
    registerSecret(secret, 'password');
    const { text, forms } = encodeNested(secret, nesting);
    expect(leakedForm(text, forms)).toBeDefined();
    expect(leakedForm(scrub(text), forms)).toBeUndefined();
  });

  test(`property: ${RUNS} random secrets × random nestings of ${ENCODER_NAMES.length} encodings (seed ${SEED})`, () => {
    fc.assert(holds(scrub), { seed: SEED, numRuns: RUNS });
  }, 120_000);

  test('an excerpt cut anywhere keeps no part of an encoded secret (clip redacts before it cuts)', () => {
    const cutAnywhere = fc.property(secretArb, nestingArb, fc.nat(), (secret, nesting, at) => {
      clearSecrets();
      registerSecret(secret, 'password');
      const { text, forms } = encodeNested(secret, nesting);
      const out = clip(`{"message":"${text}"}`, at % (text.length + 16));
      const leak = leakedForm(out, forms);
      if (leak !== undefined) throw new Error(`leaked ${JSON.stringify(leak)} in ${JSON.stringify(out.slice(0, 400))}`);
    });
    fc.assert(cutAnywhere, { seed: SEED, numRuns: 2_000 });
    // Cut first, redact after: part of an encoded secret survives a cut (what clip prevents).
    const cutFirst = fc.property(secretArb, nestingArb, fc.nat(), (secret, nesting, at) => {
      clearSecrets();
      registerSecret(secret, 'password');
      const { text, forms } = encodeNested(secret, nesting);
      return leakedForm(scrub(text.slice(0, at % (text.length + 1))), forms) === undefined;
    });
    expect(fc.check(cutFirst, { seed: SEED, numRuns: 2_000 }).failed).toBe(true);
  }, 120_000);

  test('the property fails when redaction is switched off', () => {
    const out = fc.check(
      holds((text) => text),
      { seed: SEED, numRuns: 200 },
    );
    expect(out.failed).toBe(true);
  });

  test('a text nesting JSON, percent and HTML escapes 8 deep is scanned in bounded work; past the budget it is hidden whole', () => {
    registerSecret('hunter2-secret', 'password');
    const text = `%25252525252525&amp;amp;amp;amp;amp;amp;${'\\'.repeat(64)} `.repeat(300);
    expect(scrub(text)).toBe(text);
    expect(lastScanBytes).toBeLessThan(128 * text.length);
    expect(scrubWithin(text, 10 * text.length)).toBe('«redacted:not scanned: too deeply encoded»');
    const hidden = scrubWithin(`${'x'.repeat(50)} ${ENCODERS.base64(ENCODERS.base64('hunter2-secret'))}`, 200);
    expect(hidden).not.toContain(ENCODERS.base64(ENCODERS.base64('hunter2-secret')).slice(4, -4));
  });

  test('the Latin-1 entity table covers U+00A0 to U+00FF', () => {
    const latin1 = [...HTML_ENTITY_NAMES.values()].filter((cp) => cp >= 0xa0 && cp <= 0xff);
    expect(new Set(latin1).size).toBe(96);
    expect(HTML_ENTITY_NAMES.get('yuml')).toBe(0xff);
    expect(HTML_ENTITY_NAMES.get('eacute')).toBe(0xe9);
  });
});
