import fc from 'fast-check';

/**
 * The encodings a hostile or careless server wraps what it echoes in, for the redaction property
 * (redact-encodings.prop.test.ts) and the hostile echo server of bin/test/hostile-servers.test.ts.
 */
export const ENCODERS: Record<
  | 'json'
  | 'jsonPhp'
  | 'percent'
  | 'percentLower'
  | 'form'
  | 'percentAll'
  | 'base64'
  | 'base64url'
  | 'base64NoPad'
  | 'html'
  | 'htmlDecimal'
  | 'htmlHex'
  | 'htmlNamed'
  | 'hex'
  | 'hexUpper'
  | 'hexMixed'
  | 'hexSpaced'
  | 'hexColon'
  | 'hexDash'
  | 'hexEscaped'
  | 'hex0x'
  | 'hexGroups',
  (s: string) => string
> = {
  json: (s: string) => JSON.stringify(s).slice(1, -1),
  /** PHP json_encode's defaults: `\/` and \uXXXX for every non-ASCII UTF-16 unit */
  jsonPhp: (s: string) =>
    JSON.stringify(s)
      .slice(1, -1)
      .replace(/\//g, '\\/')
      .replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
  percent: (s: string) => encodeURIComponent(s),
  percentLower: (s: string) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
  form: (s: string) => encodeURIComponent(s).replace(/%20/g, '+'),
  percentAll: (s: string) => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  base64: (s: string) => Buffer.from(s, 'utf8').toString('base64'),
  base64url: (s: string) => Buffer.from(s, 'utf8').toString('base64url'),
  base64NoPad: (s: string) => Buffer.from(s, 'utf8').toString('base64').replace(/=+$/, ''),
  html: (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#039;'),
  htmlDecimal: (s: string) => [...s].map((c) => (/[A-Za-z0-9 ]/.test(c) ? c : `&#${c.codePointAt(0)};`)).join(''),
  htmlHex: (s: string) => [...s].map((c) => (/[A-Za-z0-9 ]/.test(c) ? c : `&#x${c.codePointAt(0)!.toString(16).toUpperCase()};`)).join(''),
  htmlNamed: (s: string): string => ENCODERS.html(s).replace(/[\u00a0-\u00ff]/g, (c: string) => `&${LATIN1_NAMES[c.charCodeAt(0) - 0xa0]};`),
  hex: (s: string) => Buffer.from(s, 'utf8').toString('hex'),
  hexUpper: (s: string) => Buffer.from(s, 'utf8').toString('hex').toUpperCase(),
  /** each byte's high digit upper case, its low digit lower case */
  hexMixed: (s: string) => hexBytes(s, (h) => `${h[0]!.toUpperCase()}${h[1]}`, ''),
  hexSpaced: (s: string) => hexBytes(s, (h) => h, ' '),
  hexColon: (s: string) => hexBytes(s, (h) => h.toUpperCase(), ':'),
  hexDash: (s: string) => hexBytes(s, (h) => h, '-'),
  hexEscaped: (s: string) => hexBytes(s, (h) => `\\x${h}`, ''),
  hex0x: (s: string) => hexBytes(s, (h) => `0x${h}`, ', '),
  /** a dump's groups of 2 bytes (xxd): `7061 7373` */
  hexGroups: (s: string) =>
    (
      Buffer.from(s, 'utf8')
        .toString('hex')
        .match(/.{1,4}/g) ?? []
    ).join(' '),
};

function hexBytes(s: string, byte: (hex: string) => string, separator: string): string {
  return [...Buffer.from(s, 'utf8')].map((b) => byte(b.toString(16).padStart(2, '0'))).join(separator);
}

/** What an encoder puts between the encodings of two bytes: the form of a secret after text starts past it. */
const SEPARATOR: Partial<Record<EncoderName, string>> = { hexSpaced: ' ', hexColon: ':', hexDash: '-', hex0x: ', ' };

export type EncoderName = keyof typeof ENCODERS;
export const ENCODER_NAMES = Object.keys(ENCODERS) as EncoderName[];

const LATIN1_NAMES = (
  'nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest ' +
  'Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig ' +
  'agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml'
).split(' ');

const isBase64 = (name: EncoderName) => name.startsWith('base64');

export interface Layer {
  encoder: EncoderName;
  /** text the server puts around what it encodes at this layer */
  before: string;
  after: string;
}

export interface Nesting {
  /** first split the secret into `user:password` at this index, base64 it as a Basic credential */
  basicSplitAt?: number;
  layers: Layer[];
}

export interface Encoded {
  /** what the server sends */
  text: string;
  /**
   * The secret as it stands after each layer: the raw secret first, then each layer's encoding of
   * it (for base64 layers, the characters whose bits come from the secret's bytes alone).
   */
  forms: string[];
}

/** Stop nesting once the text is this long (HTML numeric entities grow it sixfold a layer). */
const MAX_TEXT = 20_000;

export function encodeNested(secret: string, nesting: Nesting): Encoded {
  let text = secret;
  let at = 0;
  let form = secret;
  const forms = [secret];
  if (nesting.basicSplitAt !== undefined) {
    const cut = [...secret];
    const k = Math.max(1, Math.min(cut.length - 1, nesting.basicSplitAt));
    text = `${cut.slice(0, k).join('')}:${cut.slice(k).join('')}`;
    form = text;
    forms.push(form);
  }
  for (const layer of nesting.layers) {
    if (text.length > MAX_TEXT) break;
    const whole = `${layer.before}${text}${layer.after}`;
    const formAt = layer.before.length + at;
    const encode = ENCODERS[layer.encoder];
    const next = encode(whole);
    let nextForm: string;
    let nextAt: number;
    if (isBase64(layer.encoder)) {
      const o = Buffer.byteLength(whole.slice(0, formAt), 'utf8');
      const len = Buffer.byteLength(form, 'utf8');
      const from = Math.ceil(o / 3) * 4;
      const to = Math.floor((o + len) / 3) * 4;
      nextForm = next.slice(from, to);
      nextAt = from;
    } else if (layer.encoder === 'hexGroups') {
      // groups of 2 bytes: the secret's bytes from the first whole group on, without the spaces
      const o = Buffer.byteLength(whole.slice(0, formAt), 'utf8');
      const len = Buffer.byteLength(form, 'utf8');
      const from = Math.ceil(o / 2) * 5;
      const to = Math.floor((o + len) / 2) * 5 - 1;
      nextForm = next.slice(from, Math.max(from, to));
      nextAt = from;
    } else {
      nextForm = encode(form);
      const before = encode(whole.slice(0, formAt));
      nextAt = before.length + (before.length > 0 ? (SEPARATOR[layer.encoder]?.length ?? 0) : 0);
    }
    text = next;
    form = nextForm;
    at = nextAt;
    forms.push(form);
  }
  return { text, forms };
}

const context = fc.string({ unit: fc.constantFrom(...'abcXYZ0189 .-_'), maxLength: 7 });

export const layerArb: fc.Arbitrary<Layer> = fc.record({ encoder: fc.constantFrom(...ENCODER_NAMES), before: context, after: context });

export const nestingArb: fc.Arbitrary<Nesting> = fc.record(
  { basicSplitAt: fc.integer({ min: 1, max: 30 }), layers: fc.array(layerArb, { minLength: 0, maxLength: 5 }) },
  { requiredKeys: ['layers'] },
);

/** Any characters, with those that encodings treat specially made likely. */
export const secretArb: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom(...'"\\%+/=:&<>\'; ~?#\u00e9\u00ff\u20ac\u{1F511}\n\t'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
      fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
    ),
    { minLength: 4, maxLength: 24 },
  )
  .map((chars) => chars.join(''));

/**
 * The secret is gone from `output` when none of its forms is there, nor the first or second half of
 * the raw secret when it is at least 12 characters long (a redaction that stops halfway leaves one).
 * Decision: halves of encoded forms are not checked: percent-encoding and base64 repeat short
 * patterns, so the encoded context would match them by chance.
 */
export function leakedForm(output: string, forms: string[]): string | undefined {
  for (const form of forms) if (form.length >= 4 && output.includes(form)) return form;
  const raw = forms[0]!;
  if (raw.length >= 12) {
    const half = Math.ceil(raw.length / 2);
    for (const piece of [raw.slice(0, half), raw.slice(raw.length - half)]) if (output.includes(piece)) return piece;
  }
  return undefined;
}
