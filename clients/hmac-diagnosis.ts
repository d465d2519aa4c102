/**
 * Why an HMAC request does not verify. The product's recipe (product facts §2.2, and the
 * reference server's fixtures/reference-server/src/auth/hmac.ts, which this reuses) is
 * HMAC-SHA256(key = the private key string's UTF-8 bytes, msg = uri + timestamp + body), lowercase
 * hex, where uri is the raw path after `index.php/` with its query and body the exact bytes sent,
 * and the timestamp is Unix seconds within the window. A request that does not verify is re-hashed
 * with each known mistake (and pairs of them) until one matches.
 */
import { createHmac } from 'node:crypto';
import { computeRequestHash, signedUri } from '../fixtures/reference-server/src/auth/hmac.ts';

export const HMAC_MISTAKES = {
  'decoded-path': 'hashed the percent-decoded path instead of the path as sent',
  'no-query': 'hashed the path without its ?query',
  'leading-slash': 'hashed the path with a leading slash',
  'index-php-included': 'hashed the path with index.php/ in it (the signed part starts after index.php/)',
  'reserialised-body': 'hashed a re-serialised JSON body instead of the exact bytes sent',
  'reordered-body': 'hashed the JSON body with its members in another order than sent (sorted keys, or a map re-serialised)',
  'escaped-non-ascii':
    'hashed the JSON body with its non-ASCII characters written another way than sent (\\uXXXX escapes against UTF-8 bytes, as Python json.dumps does by default)',
  'body-left-out': 'left the body out of the hash',
  'hex-decoded-key': "used the hex-decoded private key instead of the key string's UTF-8 bytes",
  'uppercase-hex': 'sent the hash in uppercase hex (the product compares lowercase hex)',
  milliseconds: 'sent the timestamp in milliseconds instead of Unix seconds',
  'clock-skew': "sent a timestamp beyond the accepted window from the server's clock",
} as const;

export type HmacMistake = keyof typeof HMAC_MISTAKES;

export type HmacDiagnosis =
  | { verdict: 'verified' }
  | { verdict: 'mistakes'; mistakes: HmacMistake[]; skewSeconds?: number }
  | { verdict: 'missing-headers'; missing: string[] }
  | { verdict: 'not-a-timestamp' }
  | { verdict: 'unknown-key' }
  /** No recipe the kit knows matched: another private key, or more than two mistakes at once. */
  | { verdict: 'no-recipe' };

export interface HmacInput {
  rawUrl: string;
  publicKey: string | undefined;
  hash: string | undefined;
  timestamp: string | undefined;
  body: Buffer;
  /** The private key of `publicKey`, undefined when the kit does not know the key. */
  privateKey: string | undefined;
  nowMs: number;
  windowSeconds: number;
}

function uriVariants(uri: string): Array<[HmacMistake | undefined, string]> {
  const out: Array<[HmacMistake | undefined, string]> = [[undefined, uri]];
  let decoded: string | undefined;
  try {
    decoded = decodeURIComponent(uri.replace(/\+/g, ' '));
  } catch {
    decoded = undefined;
  }
  if (decoded !== undefined && decoded !== uri) out.push(['decoded-path', decoded]);
  try {
    const plain = decodeURIComponent(uri);
    if (plain !== uri && plain !== decoded) out.push(['decoded-path', plain]);
  } catch {
    // not decodable: no decoded variant
  }
  const q = uri.indexOf('?');
  if (q >= 0) out.push(['no-query', uri.slice(0, q)]);
  out.push(['leading-slash', `/${uri}`]);
  out.push(['index-php-included', `index.php/${uri}`]);
  out.push(['index-php-included', `/index.php/${uri}`]);
  return out;
}

/** The value with every object's members in sorted order (Python's sort_keys, Go's maps). */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, sortedKeys(o[k])]),
  );
}

/** Non-ASCII characters as \uXXXX escapes (inside JSON strings they are the only place they occur). */
const asciiEscaped = (text: string) => text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
/** \uXXXX escapes of non-ASCII characters written as the characters. */
const unescaped = (text: string) =>
  text.replace(
    /(?<!\\)((?:\\\\)*)\\u(00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3})/g,
    (_m, lead: string, hex: string) => `${lead}${String.fromCharCode(Number.parseInt(hex, 16))}`,
  );
/** Python json.dumps' default separators ", " and ": ". */
const pythonSeparators = (text: string) =>
  text.replace(/("(?:[^"\\]|\\.)*")|([,:])/g, (_m, str: string | undefined, sep: string | undefined) => str ?? `${sep} `);

function bodyVariants(body: Buffer): Array<[HmacMistake[], Buffer | string]> {
  const out: Array<[HmacMistake[], Buffer | string]> = [[[], body]];
  if (body.length === 0) return out;
  out.push([['body-left-out'], '']);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return out;
  }
  const sent = body.toString('utf8');
  // Each form a client's serialiser may have hashed, with the mistakes it stands for; a form equal
  // to one with fewer mistakes (or to the bytes sent) is left out.
  const forms = new Map<string, HmacMistake[]>([[sent, []]]);
  const add = (text: string, mistakes: HmacMistake[]) => {
    const known = forms.get(text);
    if (known === undefined || known.length > mistakes.length) forms.set(text, mistakes);
  };
  // First the bytes sent with only their escapes changed (no re-serialisation at all): where a
  // re-serialised form is the same text, the narrower name stands.
  add(asciiEscaped(sent), ['escaped-non-ascii']);
  add(unescaped(sent), ['escaped-non-ascii']);
  const orders: Array<[HmacMistake[], unknown]> = [
    [[], parsed],
    [['reordered-body'], sortedKeys(parsed)],
  ];
  for (const [order, value] of orders) {
    const layouts = [JSON.stringify(value), JSON.stringify(value, null, 2), JSON.stringify(value, null, 4), pythonSeparators(JSON.stringify(value))];
    for (const text of layouts) {
      const reserialised: HmacMistake[] = text === sent ? [] : ['reserialised-body'];
      // Re-ordering implies re-serialising: named once, as the re-ordering.
      const base: HmacMistake[] = order.length > 0 ? order : reserialised;
      add(text, base);
      add(asciiEscaped(text), [...base, 'escaped-non-ascii']);
      add(unescaped(text), [...base, 'escaped-non-ascii']);
    }
  }
  forms.delete(sent);
  for (const [text, mistakes] of forms) out.push([mistakes, text]);
  return out;
}

function keyVariants(privateKey: string): Array<[HmacMistake | undefined, string | Buffer]> {
  const out: Array<[HmacMistake | undefined, string | Buffer]> = [[undefined, privateKey]];
  if (/^(?:[0-9a-fA-F]{2})+$/.test(privateKey)) out.push(['hex-decoded-key', Buffer.from(privateKey, 'hex')]);
  return out;
}

function hmacWith(key: string | Buffer, uri: string, timestamp: string, body: Buffer | string): string {
  return typeof key === 'string' ? computeRequestHash(key, uri, timestamp, body) : computeWithBytes(key, uri, timestamp, body);
}

function computeWithBytes(key: Buffer, uri: string, timestamp: string, body: Buffer | string): string {
  return createHmac('sha256', key).update(uri, 'utf8').update(timestamp, 'utf8').update(body).digest('hex');
}

/** True when the request's HMAC headers verify with the product's recipe (the fast path). */
export function verifiesAsProduct(input: HmacInput): boolean {
  const { privateKey, hash, timestamp } = input;
  if (privateKey === undefined || hash === undefined || timestamp === undefined) return false;
  if (!/^[0-9]{1,12}$/.test(timestamp) || Math.abs(input.nowMs / 1000 - Number(timestamp)) > input.windowSeconds) return false;
  return computeRequestHash(privateKey, signedUri(input.rawUrl) ?? input.rawUrl.replace(/^\//, ''), timestamp, input.body) === hash;
}

export function diagnoseHmac(input: HmacInput): HmacDiagnosis {
  const missing = (
    [
      ['X-Public-Key', input.publicKey],
      ['X-Request-Hash', input.hash],
      ['X-Request-Timestamp', input.timestamp],
    ] as const
  )
    .filter(([, v]) => v === undefined)
    .map(([n]) => n);
  if (missing.length > 0) return { verdict: 'missing-headers', missing };
  const hash = input.hash!;
  const timestamp = input.timestamp!;
  if (!/^[0-9]{1,16}$/.test(timestamp)) return { verdict: 'not-a-timestamp' };
  if (input.privateKey === undefined) return { verdict: 'unknown-key' };

  const timeMistakes: HmacMistake[] = [];
  let skewSeconds: number | undefined;
  const nowSeconds = input.nowMs / 1000;
  const ts = Number(timestamp);
  if (Math.abs(nowSeconds - ts) > input.windowSeconds) {
    if (Math.abs(nowSeconds - ts / 1000) <= input.windowSeconds) timeMistakes.push('milliseconds');
    else {
      timeMistakes.push('clock-skew');
      skewSeconds = Math.round(ts - nowSeconds);
    }
  }
  const caseMistakes: HmacMistake[] = hash !== hash.toLowerCase() ? ['uppercase-hex'] : [];
  const wanted = hash.toLowerCase();

  const uri = signedUri(input.rawUrl) ?? input.rawUrl.replace(/^\//, '');
  const uris = uriVariants(uri);
  const bodies = bodyVariants(input.body);
  const keys = keyVariants(input.privateKey);
  let best: HmacMistake[] | undefined;
  for (const [km, key] of keys) {
    for (const [um, u] of uris) {
      for (const [bm, b] of bodies) {
        const recipe = [km, um, ...bm].filter((m): m is HmacMistake => m !== undefined);
        if (recipe.length > 2 || (best !== undefined && recipe.length >= best.length)) continue;
        if (hmacWith(key, u, timestamp, b) === wanted) best = recipe;
      }
    }
  }
  if (best === undefined) return { verdict: 'no-recipe' };
  const mistakes = [...best, ...caseMistakes, ...timeMistakes];
  if (mistakes.length === 0) return { verdict: 'verified' };
  return { verdict: 'mistakes', mistakes, ...(skewSeconds !== undefined ? { skewSeconds } : {}) };
}

export function describeDiagnosis(d: HmacDiagnosis, windowSeconds: number): string {
  switch (d.verdict) {
    case 'verified':
      return "the signature verifies with the product's recipe";
    case 'missing-headers':
      return `HMAC header(s) missing: ${d.missing.join(', ')}`;
    case 'not-a-timestamp':
      return 'X-Request-Timestamp is not a decimal Unix time';
    case 'unknown-key':
      return "the public key is no current user's (never issued by the kit, or its user was deleted or given new keys), so the recipe cannot be checked";
    case 'no-recipe':
      return 'no known recipe matches: a different private key, or more than two mistakes at once';
    case 'mistakes':
      return d.mistakes
        .map((m) =>
          m === 'clock-skew' && d.skewSeconds !== undefined ? `${HMAC_MISTAKES[m]} (${d.skewSeconds} s; window ±${windowSeconds} s)` : HMAC_MISTAKES[m],
        )
        .join('; ');
  }
}
