import type { Exchange } from './exchange.ts';

/**
 * Decision: redaction decodes, then scans. The text is decoded, layer by layer, with every decoder a
 * server may have applied (JSON string escapes, percent-encoding (a `+` for a space is left to the
 * needles), HTML entities, hex (either case, contiguous at both digit offsets, or bytes separated
 * by spaces, colons, dashes, commas or written `0x70`/`\x70`), base64 and base64url runs at each of
 * their 4 starting offsets), up to MAX_DEPTH layers; every decoded view keeps, for each of its
 * bytes, the span of the original text it came from. A secret found in any view (as UTF-8 or
 * Latin-1 bytes, also with a colon inserted, as when it is split across the user and password
 * halves of a Basic credential) hides the span of the original text that encodes it. Precomputing
 * encoded forms instead would need every combination of encodings and base64 alignments up to a
 * depth; decoding handles any order and covers each base64 alignment by decoding the run from each
 * offset.
 *
 * Decision: the work is linear in the bytes scanned. Every view is searched in one pass by an
 * Aho–Corasick automaton over all needles of the registered secrets (several while secrets
 * are being added to a short text's scan: see `levels`), each decoder is one pass over its view, and the bytes
 * of all views together are bounded by a budget proportional to the text (see BUDGET_PER_BYTE).
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
type Entry = [secret: string, meta: { label: string; fragments: boolean }];
const secrets = new Map<string, Entry[1]>();

/**
 * Decision (issue 38): redaction grows with the secrets instead of rebuilding one automaton over
 * all of them after each registration (a run registers hundreds, one at a time, between scrubs:
 * the rebuilds were 18% of a run's CPU). Secrets wait in `pending` until the next scrub; then
 * they become an automaton of their own, merged with the automata of no more secrets than they
 * (a binary counter: each secret is built into an automaton about log2(N) times, so the cost per
 * registered secret stays nearly flat). A short text is searched by each automaton (a handful);
 * a text of MERGE_ALL_AT characters or more first merges them into one, so the work on large
 * texts stays one automaton step or two per byte.
 */
let levels: Array<{ entries: Entry[]; m: Automaton }> = [];
let pending: Entry[] = [];
const MERGE_ALL_AT = 16 * 1024;
/** `rebuild`: the way before issue 38 (one automaton over all, rebuilt after each registration), for bench:redact's side-by-side figures. */
let strategy: 'grow' | 'rebuild' = 'grow';

function added(entry: Entry): void {
  secrets.set(entry[0], entry[1]);
  pending.push(entry);
}

export function registerSecret(value: string, label: string): void {
  if (!value || [...value].length < MIN_SECRET_LENGTH || secrets.has(value)) return;
  added([value, { label, fragments: true }]);
}

/** A password, and `user:password` (what a Basic header carries) for passwords too short to scrub alone. */
export function registerCredentials(user: string, password: string, label: string): void {
  registerSecret(password, label);
  // Decision: no fragments of the pair: its first half is the username, which must stay readable.
  const pair = `${user}:${password}`;
  if (password && !secrets.has(pair)) added([pair, { label, fragments: false }]);
}

/** For tests of the harness itself. */
export function clearSecrets(): void {
  secrets.clear();
  levels = [];
  pending = [];
}

/** For bench:redact only: the old way (`rebuild`) or the growing one, measured side by side. */
export function setRedactionStrategy(s: 'grow' | 'rebuild'): void {
  strategy = s;
  levels = [];
  pending = [...secrets.entries()];
}

/** The automata that hold every registered secret, ready for a text of `length` characters. */
function matchers(length: number): Automaton[] {
  if (strategy === 'rebuild') {
    if (pending.length > 0 || levels.length === 0) {
      const all = [...secrets.entries()];
      levels = all.length > 0 ? [{ entries: all, m: buildMatcher(all) }] : [];
      pending = [];
    }
    return levels.map((l) => l.m);
  }
  if (pending.length > 0) {
    let batch = pending;
    pending = [];
    while (levels.length > 0 && levels[levels.length - 1]!.entries.length <= batch.length) batch = levels.pop()!.entries.concat(batch);
    levels.push({ entries: batch, m: buildMatcher(batch) });
  }
  if (levels.length > 1 && length >= MERGE_ALL_AT) {
    const all = levels.flatMap((l) => l.entries);
    levels = [{ entries: all, m: buildMatcher(all) }];
  }
  return levels.map((l) => l.m);
}

// ---------------------------------------------------------------------------------------------
// Views: bytes and, per byte, the original text's span.

interface View {
  bytes: Uint8Array;
  start: Int32Array;
  end: Int32Array;
  /** decoded from base64 (here or in a view it came from): the padding after a hit goes with it */
  base64?: boolean;
}

function rootView(text: string): View {
  const n = text.length;
  if (Buffer.byteLength(text, 'utf8') === n) {
    const out = new Builder(n);
    Buffer.from(out.bytes.buffer, out.bytes.byteOffset, n).write(text, 'latin1');
    const { start, end } = out;
    for (let i = 0; i < n; i++) {
      start[i] = i;
      end[i] = i + 1;
    }
    out.n = n;
    return out.view(false);
  }
  const out = new Builder(n * 3);
  for (let i = 0; i < n; ) {
    let cp = text.codePointAt(i)!;
    const units = cp > 0xffff ? 2 : 1;
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    out.codePoint(cp, i, i + units);
    i += units;
  }
  return out.view(false);
}

/**
 * Decision: the views of a scan live in last-in first-out order (a view is explored, with every
 * view decoded from it, before the next one is made), so they are cut from one stack of scratch
 * arrays that every scan reuses (`arena`) and given back once explored (`mark`, `release`). A
 * scan then allocates no arrays per view: short-lived arrays of every size (9 bytes per byte of
 * each view, 60 to 100 views' bytes per byte of a hostile echo) fragmented the allocator's heap,
 * and a run's memory grew by hundreds of MB (issue 24).
 */
class Arena {
  bytes = new Uint8Array(0);
  start = new Int32Array(0);
  end = new Int32Array(0);
  top = 0;
  /**
   * `capacity` entries on top of the stack. When they do not fit, the stack moves to larger
   * arrays; the views below keep the arrays they were cut from.
   */
  take(capacity: number): number {
    if (this.top + capacity > this.bytes.length) {
      const size = Math.max(this.bytes.length * 2, this.top + capacity, ARENA_MIN);
      this.bytes = new Uint8Array(size);
      this.start = new Int32Array(size);
      this.end = new Int32Array(size);
    }
    const at = this.top;
    this.top += capacity;
    return at;
  }
}
/** Entries (9 bytes each) of the smallest arena, and of the largest one kept from one scan to the next. */
const ARENA_MIN = 64 * 1024;
const ARENA_KEPT = 2 * 1024 * 1024;
let arena = new Arena();
const mark = (): number => arena.top;
function release(at: number): void {
  arena.top = at;
}

/** A view under construction: never longer than the view it decodes (no decoder grows its input). */
class Builder {
  bytes: Uint8Array;
  start: Int32Array;
  end: Int32Array;
  n = 0;
  /** Where in the arena, or -1 for arrays of its own. */
  private readonly at: number;
  constructor(capacity: number, own = false) {
    if (own) {
      this.at = -1;
      this.bytes = new Uint8Array(capacity);
      this.start = new Int32Array(capacity);
      this.end = new Int32Array(capacity);
    } else {
      this.at = arena.take(capacity);
      this.bytes = arena.bytes.subarray(this.at, this.at + capacity);
      this.start = arena.start.subarray(this.at, this.at + capacity);
      this.end = arena.end.subarray(this.at, this.at + capacity);
    }
  }
  push(b: number, s: number, e: number): void {
    this.bytes[this.n] = b;
    this.start[this.n] = s;
    this.end[this.n] = e;
    this.n++;
  }
  codePoint(cp: number, s: number, e: number): void {
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    if (cp < 0x80) this.push(cp, s, e);
    else if (cp < 0x800) {
      this.push(0xc0 | (cp >> 6), s, e);
      this.push(0x80 | (cp & 63), s, e);
    } else if (cp < 0x10000) {
      this.push(0xe0 | (cp >> 12), s, e);
      this.push(0x80 | ((cp >> 6) & 63), s, e);
      this.push(0x80 | (cp & 63), s, e);
    } else {
      this.push(0xf0 | (cp >> 18), s, e);
      this.push(0x80 | ((cp >> 12) & 63), s, e);
      this.push(0x80 | ((cp >> 6) & 63), s, e);
      this.push(0x80 | (cp & 63), s, e);
    }
  }
  copy(v: View, from: number, to: number): void {
    if (to <= from) return;
    if (to - from < 64) {
      for (let i = from; i < to; i++) this.push(v.bytes[i]!, v.start[i]!, v.end[i]!);
      return;
    }
    this.bytes.set(v.bytes.subarray(from, to), this.n);
    this.start.set(v.start.subarray(from, to), this.n);
    this.end.set(v.end.subarray(from, to), this.n);
    this.n += to - from;
  }
  /**
   * The view built. In the arena, the capacity it did not use is given back: a builder is on top
   * of the stack while it builds (no other view is made meanwhile).
   */
  view(base64: boolean | undefined): View {
    if (this.at >= 0 && arena.top === this.at + this.bytes.length) arena.top = this.at + this.n;
    const v: View = { bytes: this.bytes.subarray(0, this.n), start: this.start.subarray(0, this.n), end: this.end.subarray(0, this.n) };
    if (base64) v.base64 = true;
    return v;
  }
}

/** One decoded token: arrays of its own, reused (rewrite is not reentrant). */
const TOKEN = new Builder(4, true);

/**
 * One pass over the view: `token(i)` returns the index after a token starting at i that it
 * decoded into `out` (spanning the token's characters), or -1 to keep the byte. Null when nothing
 * was decoded.
 */
function rewrite(view: View, trigger: number, token: (i: number, out: Builder) => number): View | null {
  const { bytes } = view;
  let i = bytes.indexOf(trigger);
  if (i < 0) return null;
  let out: Builder | null = null;
  const token1 = TOKEN;
  let last = 0;
  for (; i >= 0 && i < bytes.length; i = bytes.indexOf(trigger, i)) {
    token1.n = 0;
    const next = token(i, token1);
    if (next < 0) {
      i++;
      continue;
    }
    out ??= new Builder(bytes.length);
    out.copy(view, last, i);
    out.copy(token1.view(false), 0, token1.n);
    last = next;
    i = next;
  }
  if (out === null) return null;
  out.copy(view, last, bytes.length);
  return out.view(view.base64);
}

const HEX = new Int8Array(256).fill(-1);
for (let c = 0; c < 10; c++) HEX[48 + c] = c;
for (let c = 0; c < 6; c++) {
  HEX[65 + c] = 10 + c;
  HEX[97 + c] = 10 + c;
}
function hexAt(b: Uint8Array, i: number, digits: number): number {
  if (i + digits > b.length) return -1;
  let v = 0;
  for (let k = 0; k < digits; k++) {
    const d = HEX[b[i + k]!]!;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

const JSON_SIMPLE = new Int16Array(256).fill(-1);
for (const [c, v] of [
  ['"', 34],
  ['\\', 92],
  ['/', 47],
  ['b', 8],
  ['f', 12],
  ['n', 10],
  ['r', 13],
  ['t', 9],
] as const)
  JSON_SIMPLE[c.charCodeAt(0)] = v;

function jsonUnescape(view: View): View | null {
  const b = view.bytes;
  const { start, end } = view;
  return rewrite(view, 92, (i, out) => {
    const c = b[i + 1];
    if (c === undefined) return -1;
    if (c !== 117) {
      const v = JSON_SIMPLE[c]!;
      if (v < 0) return -1;
      out.push(v, start[i]!, end[i + 1]!);
      return i + 2;
    }
    const u = hexAt(b, i + 2, 4);
    if (u < 0) return -1;
    if (u >= 0xd800 && u <= 0xdbff && b[i + 6] === 92 && b[i + 7] === 117) {
      const low = hexAt(b, i + 8, 4);
      if (low >= 0xdc00 && low <= 0xdfff) {
        out.codePoint(0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00), start[i]!, end[i + 11]!);
        return i + 12;
      }
    }
    out.codePoint(u, start[i]!, end[i + 5]!);
    return i + 6;
  });
}

/** %XX only: a `+` for a space is matched by the needles (see addNeedles), which saves a view per layer. */
function percentDecode(view: View): View | null {
  const b = view.bytes;
  return rewrite(view, 37, (i, out) => {
    const v = hexAt(b, i + 1, 2);
    if (v < 0) return -1;
    out.push(v, view.start[i]!, view.end[i + 2]!);
    return i + 3;
  });
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

const isAlpha = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isDigit = (c: number) => c >= 48 && c <= 57;

/** `&#xH…;` (1 to 6 digits), `&#D…;` (1 to 7), `&name;` (a name of 2 to 9 characters in ENTITIES). */
function htmlUnescape(view: View): View | null {
  const b = view.bytes;
  return rewrite(view, 38, (i, out) => {
    let j = i + 1;
    let cp: number | undefined;
    if (b[j] === 35) {
      j++;
      const hex = b[j] === 120 || b[j] === 88;
      if (hex) j++;
      const from = j;
      let v = 0;
      while (j < b.length && j - from < (hex ? 6 : 7) && (hex ? HEX[b[j]!]! >= 0 : isDigit(b[j]!)))
        v = v * (hex ? 16 : 10) + (hex ? HEX[b[j++]!]! : b[j++]! - 48);
      if (j === from) return -1;
      cp = v;
    } else {
      const from = j;
      if (j >= b.length || !isAlpha(b[j]!)) return -1;
      while (j < b.length && j - from < 9 && (isAlpha(b[j]!) || isDigit(b[j]!))) j++;
      if (j - from < 2) return -1;
      cp = ENTITIES.get(String.fromCharCode(...b.subarray(from, j)));
    }
    if (b[j] !== 59 || cp === undefined || cp > 0x10ffff) return -1;
    out.codePoint(cp, view.start[i]!, view.end[j]!);
    return j + 1;
  });
}

/**
 * Hex bytes written apart: `70 61 73 73`, `70:61:73`, `70-61`, `70,61`, `0x70 0x61`, `\x70\x61`,
 * `7061 7373` (groups of digit pairs, as dumps write them): a run of at least two groups, each of
 * an even number of digits, or of an odd number where a digit of context leads (the first group
  loses its first digit) or trails (the last its last; one in the middle is decoded both ways),
 * parted by one or two of ` \t\r\n,:;-._|+` (a `+`: a space form-encoded) or by a `0x`/`\x` prefix. Contiguous hex is decoded as a
 * run (hexRunView), so a run here holds at least one separator or prefix.
 */
const HEX_SEPARATOR = new Uint8Array(256);
for (const c of ' \t\r\n,:;-._|+') HEX_SEPARATOR[c.charCodeAt(0)] = 1;

function hexPrefixAt(b: Uint8Array, i: number): number {
  const c = b[i];
  const x = b[i + 1];
  return (c === 48 || c === 92) && (x === 120 || x === 88) && HEX[b[i + 2] ?? 0]! >= 0 ? 2 : 0;
}

/** Set by separatedHexDecode: a run it decoded had an odd group in the middle (decode again the other way). */
let middleOddSeen = false;
/** [first digit, after the last digit, where the group starts (its prefix)] per group, flat; reused. */
const groups: number[] = [];

function separatedHexDecode(view: View, minBytes: number, middleOddDropsLast: boolean): View | null {
  const b = view.bytes;
  const n = b.length;
  let out: Builder | null = null;
  let odd = false;
  let last = 0;
  middleOddSeen = false;
  for (let i = 0; i < n; ) {
    // a run starts at a prefix or a hex digit
    if (HEX[b[i]!]! < 0 && hexPrefixAt(b, i) === 0) {
      i++;
      continue;
    }
    const runStart = i;
    groups.length = 0;
    let j = i;
    let parted = false;
    for (;;) {
      const p = hexPrefixAt(b, j);
      let k = j + p;
      const from = k;
      while (k < n && HEX[b[k]!]! >= 0) k++;
      if (k === from) break;
      if (p > 0) parted = true;
      groups.push(from, k, j);
      j = k;
      let s = j;
      while (s < n && s - j < 2 && HEX_SEPARATOR[b[s]!]) s++;
      if (s > j && (HEX[b[s] ?? 0]! >= 0 || hexPrefixAt(b, s) > 0)) {
        parted = true;
        j = s;
        continue;
      }
      if (hexPrefixAt(b, j) > 0) continue;
      break;
    }
    const count = groups.length / 3;
    if (count < 2 || !parted) {
      i = Math.max(j, i + 1);
      continue;
    }
    let bytes = 0;
    for (let g = 0; g < groups.length; g += 3) bytes += (groups[g + 1]! - groups[g]!) >> 1;
    if (bytes >= minBytes) {
      out ??= new Builder(n);
      out.copy(view, last, runStart);
      for (let g = 0; g < count; g++) {
        const from = groups[3 * g]!;
        const to = groups[3 * g + 1]!;
        const prefix = groups[3 * g + 2]!;
        let s = from;
        let e = to;
        if ((e - s) % 2 === 1) {
          const middle = g > 0 && g < count - 1;
          if (middle) odd = true;
          if (g === count - 1 || (middle && middleOddDropsLast)) e--;
          else s++;
        }
        for (let k = s; k + 1 < e; k += 2) out.push((HEX[b[k]!]! << 4) | HEX[b[k + 1]!]!, view.start[k === from ? prefix : k]!, view.end[k + 1]!);
      }
      last = j;
    }
    i = j;
  }
  middleOddSeen = odd;
  if (out === null || (middleOddDropsLast && !odd)) return null;
  out.copy(view, last, n);
  return out.view(view.base64);
}

/** A run of contiguous hex digits decoded from `offset` (0 or 1): a byte's span is its 2 digits. */
function hexRunView(view: View, runStart: number, runEnd: number, offset: number): View | null {
  const length = (runEnd - runStart - offset) >> 1;
  if (length === 0) return null;
  const out = new Builder(length);
  const b = view.bytes;
  for (let k = runStart + offset; k + 1 < runEnd; k += 2) out.push((HEX[b[k]!]! << 4) | HEX[b[k + 1]!]!, view.start[k]!, view.end[k + 1]!);
  return out.view(view.base64);
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
  const b = view.bytes;
  const out = new Builder(length);
  const six = (c: number) => (c < runEnd ? B64[b[c]!]! : 0);
  for (let n = 0, c = runStart + offset; n < length; n++) {
    // byte k of a group takes the low bits of character k and the high bits of character k + 1
    const k = n % 3;
    const at = c + k;
    const hi = six(at);
    const lo = six(at + 1);
    out.push(
      k === 0 ? ((hi << 2) | (lo >> 4)) & 255 : k === 1 ? (((hi & 15) << 4) | (lo >> 2)) & 255 : (((hi & 3) << 6) | lo) & 255,
      view.start[at]!,
      view.end[Math.min(at + 1, runEnd - 1)]!,
    );
    if (k === 2) c += 4;
  }
  return out.view(true);
}

// ---------------------------------------------------------------------------------------------
// Needles: each secret as UTF-8 bytes (and Latin-1 where it fits), and every run of at least half of
// those bytes (at least MIN_FRAGMENT), searched in every view; and each secret with a colon inserted
// between any two of its characters (a Basic credential split across user and password).

/**
 * Aho–Corasick over bytes: a trie of all needles (children as sibling lists, the root's as a
 * table), failure links, and per node the longest needle ending there. One pass over a view finds,
 * at each position, the longest needle ending there: every occurrence of every needle lies within
 * one of those.
 */
class Automaton {
  size = 1;
  child = new Int32Array(1024).fill(-1);
  sibling = new Int32Array(1024).fill(-1);
  byte = new Uint8Array(1024);
  fail = new Int32Array(1024);
  /** length of the longest needle that is a suffix of this node's path (0: none) */
  out = new Int32Array(1024);
  label = new Int32Array(1024);
  /** the root's children by byte (0: none, the search stays at the root) */
  root = new Int32Array(256);
  labels: string[] = [];
  shortest = Number.POSITIVE_INFINITY;
  /** node steps taken by searches since the automaton was built (for tests of the linear bound) */
  steps = 0;
  /** a node with many children has a row of 256 transitions here (-1: none); `rowOf` its row or -1 */
  rowOf = new Int32Array(0);
  rows = new Int32Array(0);

  private grow(): void {
    const cap = this.child.length * 2;
    const widen = <T extends Int32Array | Uint8Array>(a: T, fill: number): T => {
      const b = new (a.constructor as new (n: number) => T)(cap);
      b.fill(fill);
      b.set(a);
      return b;
    };
    this.child = widen(this.child, -1);
    this.sibling = widen(this.sibling, -1);
    this.byte = widen(this.byte, 0);
    this.fail = widen(this.fail, 0);
    this.out = widen(this.out, 0);
    this.label = widen(this.label, 0);
  }

  /**
   * Decision (issue 38): once every needle is in, the arrays shrink to the nodes made. They grow by
   * doubling, so up to half of them was room; a run's last automaton over all its secrets (half a
   * million nodes) held 11 MB of room at the run's peak of memory.
   */
  compact(): void {
    if (this.size === this.child.length) return;
    this.child = this.child.slice(0, this.size);
    this.sibling = this.sibling.slice(0, this.size);
    this.byte = this.byte.slice(0, this.size);
    this.fail = this.fail.slice(0, this.size);
    this.out = this.out.slice(0, this.size);
    this.label = this.label.slice(0, this.size);
  }

  next(node: number, b: number): number {
    if (node === 0) return this.root[b]!;
    const r = node < this.rowOf.length ? this.rowOf[node]! : -1;
    if (r >= 0) return this.rows[r * 256 + b]!;
    for (let c = this.child[node]!; c >= 0; c = this.sibling[c]!) if (this.byte[c] === b) return c;
    return -1;
  }

  add(needle: Uint8Array, label: string): void {
    let node = 0;
    for (const b of needle) {
      let c = this.next(node, b);
      if (c <= 0) {
        if (this.size === this.child.length) this.grow();
        c = this.size++;
        this.byte[c] = b;
        if (node === 0) this.root[b] = c;
        else {
          this.sibling[c] = this.child[node]!;
          this.child[node] = c;
        }
      }
      node = c;
    }
    if (this.out[node] === 0) {
      this.out[node] = needle.length;
      let l = this.labels.indexOf(label);
      if (l < 0) l = this.labels.push(label) - 1;
      this.label[node] = l;
    }
    this.shortest = Math.min(this.shortest, needle.length);
  }

  /**
   * Failure links in breadth-first order; a node's `out` becomes the longest needle ending there.
   * Decision: nodes of MANY_CHILDREN children or more (near the root of hex keys) get a row of
   * transitions, at most MAX_ROWS of them (4 MiB).
   */
  link(): void {
    const MANY_CHILDREN = 4;
    const MAX_ROWS = 4096;
    const rowOf = new Int32Array(this.size).fill(-1);
    const wide: number[] = [];
    for (let u = 1; u < this.size && wide.length < MAX_ROWS; u++) {
      let children = 0;
      for (let c = this.child[u]!; c >= 0 && children < MANY_CHILDREN; c = this.sibling[c]!) children++;
      if (children >= MANY_CHILDREN) wide.push(u);
    }
    const rows = new Int32Array(wide.length * 256).fill(-1);
    for (const [r, u] of wide.entries()) {
      rowOf[u] = r;
      for (let c = this.child[u]!; c >= 0; c = this.sibling[c]!) rows[r * 256 + this.byte[c]!] = c;
    }
    this.rowOf = rowOf;
    this.rows = rows;
    const queue = new Int32Array(this.size);
    let head = 0;
    let tail = 0;
    for (let b = 0; b < 256; b++) {
      const c = this.root[b]!;
      if (c > 0) {
        this.fail[c] = 0;
        queue[tail++] = c;
      }
    }
    while (head < tail) {
      const u = queue[head++]!;
      for (let c = this.child[u]!; c >= 0; c = this.sibling[c]!) {
        const b = this.byte[c]!;
        let f = this.fail[u]!;
        let g = this.next(f, b);
        while (g < 0 && f !== 0) {
          f = this.fail[f]!;
          g = this.next(f, b);
        }
        const fc = g < 0 || g === c ? 0 : g;
        this.fail[c] = fc;
        if (this.out[c] === 0 && this.out[fc]! > 0) {
          this.out[c] = this.out[fc]!;
          this.label[c] = this.label[fc]!;
        }
        queue[tail++] = c;
      }
    }
  }

  /**
   * Decision: overlapping hits of one view are pushed as one span (the union keeps the label of
   * the hit that starts first, the longer one on a tie, as the merge in scrubWithin would): a
   * secret's fragments end at each of its bytes, and a span per byte made millions of short-lived
   * arrays per hostile body (issue 24).
   */
  search(view: View, spans: Span[]): void {
    const { bytes, start, end } = view;
    const base64 = view.base64 === true;
    let s = 0;
    let steps = 0;
    let from = -1;
    let to = -1;
    let label = -1;
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!;
      for (;;) {
        steps++;
        if (s === 0) {
          s = this.root[b]!;
          break;
        }
        const g = this.next(s, b);
        if (g >= 0) {
          s = g;
          break;
        }
        s = this.fail[s]!;
      }
      const len = this.out[s]!;
      if (len === 0) continue;
      const hitFrom = start[i - len + 1]!;
      const hitTo = end[i]!;
      if (from >= 0 && hitFrom < to && from < hitTo) {
        if (hitFrom < from || (hitFrom === from && hitTo > to)) label = this.label[s]!;
        from = Math.min(from, hitFrom);
        to = Math.max(to, hitTo);
        continue;
      }
      if (from >= 0) spans.push([from, to, this.labels[label]!, base64]);
      from = hitFrom;
      to = hitTo;
      label = this.label[s]!;
    }
    if (from >= 0) spans.push([from, to, this.labels[label]!, base64]);
    this.steps += steps;
  }
}

function buildMatcher(entries: readonly Entry[]): Automaton {
  const m = new Automaton();
  for (const [secret, { label, fragments }] of entries) addNeedles(m, secret, label, fragments);
  m.compact();
  m.link();
  return m;
}

/** Several automata searched as one: each view goes through every one of them. */
class Matchers {
  readonly shortest: number;
  constructor(readonly all: readonly Automaton[]) {
    this.shortest = Math.min(...all.map((m) => m.shortest));
  }
  get steps(): number {
    let n = 0;
    for (const m of this.all) n += m.steps;
    return n;
  }
  search(view: View, spans: Span[]): void {
    for (const m of this.all) m.search(view, spans);
  }
}

function addNeedles(m: Automaton, secret: string, label: string, fragments: boolean): void {
  const add = (needle: string) => m.add(Buffer.from(needle, 'latin1'), label);
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

type Span = [start: number, end: number, label: string, base64: boolean];

/** A cheap identity of a byte range: where it comes from, its length and a hash of its bytes. */
function rangeKey(v: View, from = 0, to = v.bytes.length): string {
  let h = 0x811c9dc5;
  const b = v.bytes;
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return `${v.start[from]}:${v.end[to - 1]}:${to - from}:${h >>> 0}`;
}

interface Scan {
  m: Automaton | Matchers;
  spans: Span[];
  /**
   * The depth a view or a run was explored at: one explored deeper had fewer layers left, so it is
   * explored again when it recurs higher up.
   */
  seen: Map<string, number>;
  cleanRuns: Map<string, number>;
  /** bytes of views still to explore */
  budget: number;
}

/**
 * Decision: the bytes explored are bounded (BUDGET_PER_BYTE per byte of the text, plus
 * BUDGET_BASE; ordinary reports use under 10 per byte, reports full of a hostile echo about 60, a
 * text nesting JSON, percent and HTML escapes 8 deep 85), so a body built to nest every encoding
 * many times cannot stall the CLI. A view beyond the budget is not scanned but hidden whole:
 * redaction fails closed.
 */
const BUDGET_PER_BYTE = 128;
const BUDGET_BASE = 8 << 20;

function runKey(b: Uint8Array, from: number, to: number): string {
  let h = 0x811c9dc5;
  let g = 0x12345;
  for (let i = from; i < to; i++) {
    h = Math.imul(h ^ b[i]!, 0x01000193);
    g = Math.imul(g + b[i]!, 0x9e3779b1) ^ (g >>> 15);
  }
  return `${to - from}:${h >>> 0}:${g >>> 0}`;
}

function explore(view: View, depth: number, scan: Scan): void {
  const { m, spans, seen, cleanRuns } = scan;
  m.search(view, spans);
  if (depth >= MAX_DEPTH) return;
  /** Explores a view not seen before; false when it was seen (its findings are in `spans` already). */
  const next = (v: View | null): boolean => {
    if (!v || v.bytes.length === 0) return true;
    if (v.bytes.length < m.shortest) return true;
    const key = rangeKey(v);
    if ((seen.get(key) ?? Infinity) <= depth + 1) return false;
    seen.set(key, depth + 1);
    scan.budget -= v.bytes.length;
    if (scan.budget < 0) spans.push([v.start[0]!, v.end[v.end.length - 1]!, 'not scanned: too deeply encoded', false]);
    else explore(v, depth + 1, scan);
    return true;
  };
  // Each view decoded from this one goes back to the arena once explored.
  const at = mark();
  next(jsonUnescape(view));
  release(at);
  next(percentDecode(view));
  release(at);
  next(htmlUnescape(view));
  release(at);
  const separated = separatedHexDecode(view, m.shortest, false);
  const again = middleOddSeen;
  next(separated);
  release(at);
  if (again) next(separatedHexDecode(view, m.shortest, true));
  release(at);
  const b = view.bytes;
  /** Runs of characters of `alphabet`, at least `min` long, decoded at each offset below `offsets`. */
  const runs = (alphabet: Int8Array | Int16Array, min: number, offsets: number, decode: typeof base64View, kind: string) => {
    for (let i = 0; i < b.length; ) {
      if (alphabet[b[i]!]! < 0) {
        i++;
        continue;
      }
      let j = i + 1;
      while (j < b.length && alphabet[b[j]!]! >= 0) j++;
      if (j - i >= min) {
        const key = `${kind}${runKey(b, i, j)}`;
        if ((cleanRuns.get(key) ?? Infinity) > depth) {
          const before = spans.length;
          let explored = true;
          for (let offset = 0; offset < offsets; offset++) {
            explored = next(decode(view, i, j, offset)) && explored;
            release(at);
          }
          // A run's findings depend only on its characters: a run that held nothing is skipped wherever it recurs.
          if (explored && spans.length === before) cleanRuns.set(key, depth);
        }
      }
      i = j;
    }
  };
  runs(HEX, m.shortest * 2, 2, hexRunView, 'h');
  runs(B64, Math.floor((m.shortest * 4) / 3), 4, base64View, 'b');
}

/** Bytes of decoded views the last scrub explored (for the redaction benchmark and tests). */
export let lastScanBytes = 0;
/** Automaton steps of the last scrub: at most twice the bytes it searched (for tests of the linear bound). */
export let lastSearchSteps = 0;

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
  // A copy, not a slice: V8 keeps the whole text alive behind a slice of it.
  return clean.length > limit ? `${clean.slice(0, limit).split('').join('')}${ellipsis}` : clean;
}

/**
 * Decision: a text is scanned in windows of WINDOW characters, each overlapping the next by
 * OVERLAP, so the memory of a scan is bounded whatever the text's size (its decoded views and
 * their spans are several times a window). An encoded secret is found whole when it spans at most
 * OVERLAP characters: a 64-character key under 8 layers of base64 spans under 700, under 3
 * layers of HTML numeric references about 14,000.
 */
const WINDOW = 256 * 1024;
const OVERLAP = 32 * 1024;

/** scrub with a given budget of view bytes (tests show the fail-closed path with a small one). */
export function scrubWithin(text: string, budget: number): string {
  let out = text;
  const automata = text.length > 0 ? matchers(text.length) : [];
  if (automata.length > 0) {
    const matcher = automata.length === 1 ? automata[0]! : new Matchers(automata);
    const spans: Span[] = [];
    const steps = matcher.steps;
    lastScanBytes = 0;
    for (let from = 0; from < text.length; from += WINDOW) {
      const to = Math.min(text.length, from + WINDOW + OVERLAP);
      const share = text.length <= WINDOW + OVERLAP ? budget : Math.floor((budget * (to - from)) / text.length);
      const found: Span[] = [];
      const scan: Scan = { m: matcher, spans: found, seen: new Map(), cleanRuns: new Map(), budget: share };
      try {
        explore(rootView(from === 0 && to === text.length ? text : text.slice(from, to)), 0, scan);
      } finally {
        release(0);
        // An arena grown for a very large text is not kept.
        if (arena.bytes.length > ARENA_KEPT) arena = new Arena();
      }
      lastScanBytes += share - scan.budget;
      for (const span of found) {
        span[0] += from;
        span[1] += from;
        spans.push(span);
      }
      if (to === text.length) break;
    }
    lastSearchSteps = matcher.steps - steps;
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

/**
 * Query parameters whose values are credentials whatever they hold (`?password=`, `?api_key=`,
 * `?token=`, …). Decision: the name decides, not the value: a password nobody registered (a
 * client's own) is hidden too.
 */
export const CREDENTIAL_PARAMETER = /pass|pwd|secret|token|credential|auth|private.?key|api.?key|access.?key|^key$|signature|^sig$|session/i;

/** The query's parameters whose names are credential names, decoded: `[name, value]`. */
export function queryCredentials(url: string): Array<[string, string]> {
  const q = url.indexOf('?');
  if (q < 0) return [];
  const out: Array<[string, string]> = [];
  for (const part of url
    .slice(q + 1)
    .split('#')[0]!
    .split(/[&;]/)) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = formDecode(part.slice(0, eq));
    if (CREDENTIAL_PARAMETER.test(name)) out.push([name, formDecode(part.slice(eq + 1))]);
  }
  return out;
}

function formDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/**
 * The value of every credential-named parameter of a query string in `text` hidden (a URL, or a
 * message that quotes one): `?password=x&page=2` → `?password=«redacted»&page=2`.
 */
export function hideQueryCredentials(text: string): string {
  if (!text.includes('=')) return text;
  return text.replace(/([?&;])([^&;=\s"'<>?#]+)=(«redacted[^»]*»|[^&;\s"'<>#]*)/g, (m, sep: string, name: string, value: string) =>
    value !== '' && !value.startsWith('«redacted') && CREDENTIAL_PARAMETER.test(formDecode(name)) ? `${sep}${name}=«redacted»` : m,
  );
}

/** A URL scrubbed, and the value of every credential-named query parameter hidden. */
export function redactUrl(url: string): string {
  return hideQueryCredentials(scrub(url));
}

export function redactExchange(ex: Exchange): Exchange {
  const out: Exchange = {
    request: {
      method: ex.request.method,
      url: redactUrl(ex.request.url),
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
  if (ex.retried !== undefined) out.retried = ex.retried;
  return out;
}
