import type { Exchange } from './exchange.ts';

/**
 * Decision: redaction decodes, then scans. The text is decoded, layer by layer, with every decoder a
 * server may have applied (JSON string escapes, percent-encoding (a `+` for a space is left to
 * the needles), HTML entities, base64 and base64url runs at each of their 4 starting offsets), up to MAX_DEPTH layers;
 * every decoded view keeps, for each of its bytes, the span of the original text it came from. A
 * secret found in any view (as UTF-8 or Latin-1 bytes, also with a colon inserted, as when it is split
 * across the user and password halves of a Basic credential) hides the span of the original text
 * that encodes it. Precomputing encoded forms instead would need every combination of encodings and
 * base64 alignments up to a depth; decoding handles any order and covers each base64 alignment by
 * decoding the run from each offset.
 */
const MAX_DEPTH = 8;

/**
 * Decision: values shorter than 4 characters are not scrubbed from free text (a one-letter secret
 * would garble every message); headers and sensitive JSON keys still hide them.
 */
const MIN_SECRET_LENGTH = 4;
/** Bytes: a fragment shorter than this is not a secret's half (it could be any word). */
const MIN_FRAGMENT = 10;

const SENSITIVE_KEYS = new Set(['password', 'private_key', 'privateKey', 'token', 'new_password', 'password_confirm'].map((k) => k.toLowerCase()));

/** secret → its label, and whether its fragments are hidden too */
const secrets = new Map<string, { label: string; fragments: boolean }>();
let matcher: Matcher | null = null;

export function registerSecret(value: string, label: string): void {
  if (!value || [...value].length < MIN_SECRET_LENGTH || secrets.has(value)) return;
  secrets.set(value, { label, fragments: true });
  if (matcher) addNeedles(matcher, value, label, true);
}

/** A password, and `user:password` (what a Basic header carries) for passwords too short to scrub alone. */
export function registerCredentials(user: string, password: string, label: string): void {
  registerSecret(password, label);
  // Decision: no fragments of the pair: its first half is the username, which must stay readable.
  const pair = `${user}:${password}`;
  if (password && !secrets.has(pair)) {
    secrets.set(pair, { label, fragments: false });
    if (matcher) addNeedles(matcher, pair, label, false);
  }
}

/** For tests of the harness itself. */
export function clearSecrets(): void {
  secrets.clear();
  matcher = null;
}

// ---------------------------------------------------------------------------------------------
// Views: a byte string (one char per byte, 0-255) and, per byte, the original text's span.

interface View {
  text: string;
  start: Int32Array;
  end: Int32Array;
  /** decoded from base64 (here or in a view it came from): the padding after a hit goes with it */
  base64?: boolean;
}

function rootView(text: string): View {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) {
    const start = new Int32Array(text.length);
    const end = new Int32Array(text.length);
    for (let i = 0; i < text.length; i++) {
      start[i] = i;
      end[i] = i + 1;
    }
    return { text, start, end };
  }
  const bytes: number[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  for (let i = 0; i < text.length; ) {
    const cp = text.codePointAt(i)!;
    const units = cp > 0xffff ? 2 : 1;
    for (const b of utf8Bytes(cp)) {
      bytes.push(b);
      starts.push(i);
      ends.push(i + units);
    }
    i += units;
  }
  return { text: bytesToString(bytes), start: Int32Array.from(starts), end: Int32Array.from(ends) };
}

function utf8Bytes(cp: number): number[] {
  if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
  if (cp < 0x80) return [cp];
  if (cp < 0x800) return [0xc0 | (cp >> 6), 0x80 | (cp & 63)];
  if (cp < 0x10000) return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
  return [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
}

function bytesToString(bytes: ArrayLike<number>): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode(...Array.prototype.slice.call(bytes, i, i + 8192));
  return out;
}

/** Rewrites the tokens `re` matches with `decode(match)` (a byte string, or null to keep the token). */
function rewrite(view: View, re: RegExp, decode: (m: RegExpExecArray) => string | null): View | null {
  const { text } = view;
  const parts: string[] = [];
  const start = new Int32Array(text.length);
  const end = new Int32Array(text.length);
  let n = 0;
  let last = 0;
  let changed = false;
  const copy = (from: number, to: number) => {
    if (to <= from) return;
    parts.push(text.slice(from, to));
    for (let i = from; i < to; i++, n++) {
      start[n] = view.start[i]!;
      end[n] = view.end[i]!;
    }
  };
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const decoded = decode(m);
    if (decoded === null) {
      if (m[0].length === 0) re.lastIndex++;
      continue;
    }
    copy(last, m.index);
    const s = view.start[m.index]!;
    const e = view.end[m.index + m[0].length - 1]!;
    for (let i = 0; i < decoded.length; i++) {
      start[n + i] = s;
      end[n + i] = e;
    }
    parts.push(decoded);
    n += decoded.length;
    last = m.index + m[0].length;
    changed = true;
  }
  if (!changed) return null;
  copy(last, text.length);
  return { text: parts.join(''), start: start.subarray(0, n), end: end.subarray(0, n), ...(view.base64 ? { base64: true } : {}) };
}

const JSON_SIMPLE: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const JSON_ESCAPE = /\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})|\\(["\\/bfnrt])/g;

function jsonUnescape(view: View): View | null {
  if (!view.text.includes('\\')) return null;
  return rewrite(view, JSON_ESCAPE, (m) => {
    if (m[1] !== undefined) {
      const cp = 0x10000 + ((parseInt(m[1], 16) - 0xd800) << 10) + (parseInt(m[2]!, 16) - 0xdc00);
      return bytesToString(utf8Bytes(cp));
    }
    if (m[3] !== undefined) return bytesToString(utf8Bytes(parseInt(m[3], 16)));
    return JSON_SIMPLE[m[4]!]!;
  });
}

/** %XX only: a `+` for a space is matched by the needles (see buildMatcher), which saves a view per layer. */
function percentDecode(view: View): View | null {
  if (!/%[0-9a-fA-F]{2}/.test(view.text)) return null;
  return rewrite(view, /%([0-9a-fA-F]{2})/g, (m) => String.fromCharCode(parseInt(m[1]!, 16)));
}

// HTML 4 / XHTML names of U+00A0 to U+00FF (what htmlentities writes), in code point order.
const LATIN1_ENTITIES =
  'nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest ' +
  'Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig ' +
  'agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml';
// HTML5 names of ASCII characters that encoders with an HTML5 table write.
const ASCII_ENTITIES: Record<string, number> = {
  quot: 34,
  amp: 38,
  apos: 39,
  lt: 60,
  gt: 62,
  Tab: 9,
  NewLine: 10,
  excl: 33,
  num: 35,
  dollar: 36,
  percnt: 37,
  lpar: 40,
  rpar: 41,
  ast: 42,
  plus: 43,
  comma: 44,
  period: 46,
  sol: 47,
  colon: 58,
  semi: 59,
  equals: 61,
  quest: 63,
  commat: 64,
  lsqb: 91,
  lbrack: 91,
  bsol: 92,
  rsqb: 93,
  rbrack: 93,
  Hat: 94,
  lowbar: 95,
  grave: 96,
  lcub: 123,
  lbrace: 123,
  verbar: 124,
  vert: 124,
  rcub: 125,
  rbrace: 125,
  euro: 8364,
};
const ENTITIES = new Map<string, number>([
  ...Object.entries(ASCII_ENTITIES),
  ...LATIN1_ENTITIES.split(' ').map((name, i) => [name, 0xa0 + i] as [string, number]),
]);
export const HTML_ENTITY_NAMES: ReadonlyMap<string, number> = ENTITIES;

function htmlUnescape(view: View): View | null {
  if (!view.text.includes('&')) return null;
  return rewrite(view, /&(?:#[xX]([0-9a-fA-F]{1,6})|#([0-9]{1,7})|([A-Za-z][A-Za-z0-9]{1,8}));/g, (m) => {
    const cp = m[1] !== undefined ? parseInt(m[1], 16) : m[2] !== undefined ? Number(m[2]) : ENTITIES.get(m[3]!);
    if (cp === undefined || cp > 0x10ffff) return null;
    return bytesToString(utf8Bytes(cp));
  });
}

const B64 = new Int16Array(256).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) B64[c.charCodeAt(0)] = i;
B64['-'.charCodeAt(0)] = 62;
B64['_'.charCodeAt(0)] = 63;

/** The run decoded from `offset`: 3 bytes per 4 characters; a byte's span covers the 2 characters that carry its bits. */
function base64View(view: View, runStart: number, runEnd: number, offset: number): View | null {
  const chars = runEnd - runStart - offset;
  const tail = chars % 4;
  const length = Math.floor(chars / 4) * 3 + (tail >= 2 ? tail - 1 : 0);
  if (length === 0) return null;
  const { text } = view;
  const sixBits = (c: number) => (c < runEnd ? B64[text.charCodeAt(c)]! : 0);
  const out = new Array<number>(length);
  const start = new Int32Array(length);
  const end = new Int32Array(length);
  for (let n = 0, c = runStart + offset; n < length; n++) {
    // byte k of a group takes the low bits of character k and the high bits of character k + 1
    const k = n % 3;
    const at = c + k;
    out[n] =
      k === 0
        ? (sixBits(at) << 2) | (sixBits(at + 1) >> 4)
        : k === 1
          ? ((sixBits(at) & 15) << 4) | (sixBits(at + 1) >> 2)
          : ((sixBits(at) & 3) << 6) | sixBits(at + 1);
    start[n] = view.start[at]!;
    end[n] = view.end[Math.min(at + 1, runEnd - 1)]!;
    if (k === 2) c += 4;
  }
  return { text: bytesToString(out), start, end, base64: true };
}

// ---------------------------------------------------------------------------------------------
// Needles: each secret as UTF-8 bytes (and Latin-1 where it fits), and every run of at least half of
// those bytes (at least MIN_FRAGMENT), searched in every view; and each secret with a colon inserted
// between any two of its characters (a Basic credential split across user and password).

interface Matcher {
  /** needles by the 32-bit number of their first 4 bytes, longest first */
  byPrefix: Map<number, string[]>;
  /** one bit per hashed 4-byte prefix: most positions of a text are rejected here */
  filter: Uint8Array;
  labels: Map<string, string>;
  /** the shortest needle: a view shorter than this holds none, a base64 run shorter than 4/3 of it neither */
  shortest: number;
}

const FILTER_BITS = 20;
const prefixHash = (p: number) => Math.imul(p, 0x9e3779b1) >>> (32 - FILTER_BITS);

function buildMatcher(): Matcher | null {
  if (secrets.size === 0) return null;
  const m: Matcher = { byPrefix: new Map(), filter: new Uint8Array(1 << (FILTER_BITS - 3)), labels: new Map(), shortest: Number.POSITIVE_INFINITY };
  for (const [secret, { label, fragments }] of secrets) addNeedles(m, secret, label, fragments);
  return m;
}

/**
 * The needles of one secret, added to the matcher. Decision: a run registers a secret for every
 * user it makes, so the matcher grows with each one instead of being built again from all of them.
 */
function addNeedles(m: Matcher, secret: string, label: string, fragments: boolean): void {
  const add = (needle: string) => {
    if (m.labels.has(needle)) return;
    m.labels.set(needle, label);
    const p = prefixOf(needle, 0);
    const bucket = m.byPrefix.get(p) ?? [];
    // Longest first; among needles of one length, the first added first.
    const at = bucket.findIndex((n) => n.length < needle.length);
    bucket.splice(at < 0 ? bucket.length : at, 0, needle);
    m.byPrefix.set(p, bucket);
    const h = prefixHash(p);
    m.filter[h >> 3]! |= 1 << (h & 7);
    m.shortest = Math.min(m.shortest, needle.length);
  };
  // The form encoding writes a space as `+`: the percent decoder keeps `+`, the needles have both.
  for (const value of secret.includes(' ') ? [secret, secret.replaceAll(' ', '+')] : [secret]) {
    const utf8 = Buffer.from(value, 'utf8').toString('latin1');
    const forms = [utf8];
    if (/^[\x00-\xff]*$/.test(value) && value !== utf8) forms.push(value);
    for (const f of forms) {
      add(f);
      // A fragment of half the secret or more is hidden too: a server that cuts or splits what it
      // echoes (a base64 run broken in two) must not leave half a password readable.
      const k = Math.max(MIN_FRAGMENT, Math.ceil(f.length / 2));
      for (let i = 0; fragments && f.length > k && i + k <= f.length; i++) add(f.slice(i, i + k));
    }
    const chars = [...value];
    for (let k = 1; k < chars.length; k++) add(Buffer.from(`${chars.slice(0, k).join('')}:${chars.slice(k).join('')}`, 'utf8').toString('latin1'));
  }
}

function prefixOf(text: string, i: number): number {
  return ((text.charCodeAt(i) << 24) | (text.charCodeAt(i + 1) << 16) | (text.charCodeAt(i + 2) << 8) | text.charCodeAt(i + 3)) >>> 0;
}

type Span = [start: number, end: number, label: string, base64: boolean];

function search(view: View, m: Matcher, spans: Span[]): void {
  const { text } = view;
  if (text.length < m.shortest) return;
  let p = prefixOf(text, 0);
  for (let i = 0; i + 4 <= text.length; i++) {
    if (i > 0) p = ((p << 8) | text.charCodeAt(i + 3)) >>> 0;
    const h = prefixHash(p);
    if ((m.filter[h >> 3]! & (1 << (h & 7))) === 0) continue;
    for (const needle of m.byPrefix.get(p) ?? []) {
      if (!text.startsWith(needle, i)) continue;
      spans.push([view.start[i]!, view.end[i + needle.length - 1]!, m.labels.get(needle) ?? 'secret', view.base64 === true]);
      break;
    }
  }
}

/** A cheap identity of a view: where it comes from, its length and a hash of its bytes. */
function viewKey(v: View): string {
  let h = 0x811c9dc5;
  const { text } = v;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return `${v.start[0]}:${v.end[v.end.length - 1]}:${text.length}:${h >>> 0}`;
}

interface Scan {
  m: Matcher;
  spans: Span[];
  /**
   * The depth a view or a base64 run was explored at: one explored deeper had fewer layers left, so
   * it is explored again when it recurs higher up.
   */
  seen: Map<string, number>;
  cleanRuns: Map<string, number>;
  /** bytes of views still to explore */
  budget: number;
}

/**
 * Decision: the bytes explored are bounded (BUDGET_PER_BYTE per byte of the text, plus
 * BUDGET_BASE; ordinary reports use 8 to 10 per byte, reports full of a hostile echo about 60, a
 * text nesting JSON, percent and HTML escapes 8 deep 85), so a body built to nest every encoding many times cannot stall the CLI. A view
 * beyond the budget is not scanned but hidden whole: redaction fails closed.
 */
const BUDGET_PER_BYTE = 128;
const BUDGET_BASE = 8 << 20;

function explore(view: View, depth: number, scan: Scan): void {
  const { m, spans, seen, cleanRuns } = scan;
  search(view, m, spans);
  if (depth >= MAX_DEPTH) return;
  /** Explores a view not seen before; false when it was seen (its findings are in `spans` already). */
  const next = (v: View | null): boolean => {
    if (!v || v.text.length === 0) return true;
    if (v.text.length < m.shortest) return true;
    const key = viewKey(v);
    if ((seen.get(key) ?? Infinity) <= depth + 1) return false;
    seen.set(key, depth + 1);
    scan.budget -= v.text.length;
    if (scan.budget < 0) spans.push([v.start[0]!, v.end[v.end.length - 1]!, 'not scanned: too deeply encoded', false]);
    else explore(v, depth + 1, scan);
    return true;
  };
  next(jsonUnescape(view));
  next(percentDecode(view));
  next(htmlUnescape(view));
  const minRun = Math.floor((m.shortest * 4) / 3);
  const { text } = view;
  for (let i = 0; i < text.length; ) {
    if (B64[text.charCodeAt(i)] === -1 || text.charCodeAt(i) > 255) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < text.length && text.charCodeAt(j) < 256 && B64[text.charCodeAt(j)] !== -1) j++;
    if (j - i >= minRun) {
      const run = text.slice(i, j);
      if ((cleanRuns.get(run) ?? Infinity) > depth) {
        const before = spans.length;
        let explored = true;
        for (let offset = 0; offset < 4; offset++) explored = next(base64View(view, i, j, offset)) && explored;
        // A run's findings depend only on its characters: a run that held nothing is skipped wherever it recurs.
        if (explored && spans.length === before) cleanRuns.set(run, depth);
      }
    }
    i = j;
  }
}

/** Bytes of decoded views the last scrub explored (for the redaction benchmark and tests). */
export let lastScanBytes = 0;

/** Registered secrets, hidden in every encoding `explore` decodes; then any Basic or Bearer credential. */
export function scrub(text: string): string {
  return scrubWithin(text, BUDGET_BASE + BUDGET_PER_BYTE * text.length);
}

/**
 * At most `limit` characters of `text`, with `ellipsis` after a cut, redacted before the cut: a
 * cut made first could leave part of an encoded secret that no scan can decode any more. Every
 * excerpt of what a server sent goes through here.
 */
export function clip(text: string, limit: number, ellipsis?: string): string;
export function clip(text: string | undefined, limit: number, ellipsis?: string): string | undefined;
export function clip(text: string | undefined, limit: number, ellipsis = ''): string | undefined {
  if (text === undefined) return undefined;
  const clean = scrub(text);
  return clean.length > limit ? `${clean.slice(0, limit)}${ellipsis}` : clean;
}

/** scrub with a given budget of view bytes (tests show the fail-closed path with a small one). */
export function scrubWithin(text: string, budget: number): string {
  if (matcher === null) matcher = buildMatcher();
  let out = text;
  if (matcher && text.length > 0) {
    const spans: Span[] = [];
    const scan: Scan = { m: matcher, spans, seen: new Map(), cleanRuns: new Map(), budget };
    explore(rootView(text), 0, scan);
    lastScanBytes = budget - scan.budget;
    if (spans.length > 0) {
      spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
      const parts: string[] = [];
      let at = 0;
      for (let i = 0; i < spans.length; ) {
        const [s, , label] = spans[i]!;
        let e = spans[i]![1];
        let base64 = spans[i]![3];
        for (i++; i < spans.length && spans[i]![0] < e; i++) {
          e = Math.max(e, spans[i]![1]);
          base64 ||= spans[i]![3];
        }
        if (base64) e += /^(?:=|%3[dD]){0,2}/.exec(text.slice(e, e + 6))![0].length;
        parts.push(text.slice(at, s), `«redacted:${label}»`);
        at = e;
      }
      parts.push(text.slice(at));
      out = parts.join('');
    }
  }
  return out.replace(/\b(Basic|Bearer)(\s+)([A-Za-z0-9+/=._~-]{4,})/gi, (m, scheme: string, space: string, token: string) =>
    looksLikeCredential(scheme, token) ? `${scheme}${space}«redacted»` : m,
  );
}

/** Prose such as "HTTP Basic authentication" must survive; a credential after Basic decodes to `user:password`. */
function looksLikeCredential(scheme: string, token: string): boolean {
  if (scheme.toLowerCase() === 'bearer') return token.length >= 20 || /\d/.test(token);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(token)) return false;
  const decoded = Buffer.from(token, 'base64');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(decoded).includes(':');
  } catch {
    return false;
  }
}

function redactHeaderValue(name: string, value: string): string {
  switch (name.toLowerCase()) {
    case 'authorization':
    case 'proxy-authorization': {
      const m = /^(\S+)\s/.exec(value);
      return m ? `${m[1]} «redacted»` : '«redacted»';
    }
    case 'x-request-hash':
    case 'cookie':
    case 'set-cookie':
      return '«redacted»';
    case 'x-public-key':
      return `${value.slice(0, 6)}«…»`;
    default:
      return scrub(value);
  }
}

export function redactHeaders<T extends string | string[]>(headers: Record<string, T>): Record<string, T> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = Array.isArray(value) ? value.map((v) => redactHeaderValue(name, v)) : redactHeaderValue(name, value);
  }
  return out as Record<string, T>;
}

export function redactValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactValue);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = SENSITIVE_KEYS.has(k.toLowerCase()) && v !== null && v !== '' ? '«redacted»' : redactValue(v);
    }
    return out;
  }
  return typeof value === 'string' ? scrub(value) : value;
}

function hasSensitiveKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasSensitiveKey);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).some(([k, v]) => (SENSITIVE_KEYS.has(k.toLowerCase()) && v !== null && v !== '') || hasSensitiveKey(v));
  }
  return false;
}

/**
 * Decision: JSON text is re-serialised only when a sensitive key must be hidden (indented when the
 * original had line breaks); otherwise the text keeps its exact form and only registered secrets go.
 */
export function redactJsonText(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return scrub(text);
  }
  if (!hasSensitiveKey(parsed)) return scrub(text);
  return scrub(JSON.stringify(redactValue(parsed), null, text.includes('\n') ? 2 : undefined));
}

export function redactExchange(ex: Exchange): Exchange {
  const out: Exchange = {
    request: {
      method: ex.request.method,
      url: scrub(ex.request.url),
      headers: redactHeaders(ex.request.headers),
    },
    durationMs: ex.durationMs,
  };
  if (ex.request.body !== undefined) out.request.body = redactJsonText(ex.request.body);
  if (ex.response) {
    out.response = {
      ...ex.response,
      headers: redactHeaders(ex.response.headers),
      body: redactJsonText(ex.response.body),
    };
  }
  if (ex.json !== undefined) out.json = redactValue(ex.json);
  if (ex.error !== undefined) out.error = scrub(ex.error);
  return out;
}
