export interface Exchange {
  request: {
    method: string;
    url: string;
    headers: Record<string, string>;
    body?: string;
  };
  response?: {
    status: number;
    headers: Record<string, string | string[]>;
    body: string;
    /** false when the response bytes were not valid UTF-8 (body then holds U+FFFD replacements) */
    validUtf8?: boolean;
    /** true when the bytes began with a UTF-8 byte order mark (EF BB BF), which decoding strips */
    bom?: boolean;
  };
  /** parsed body when it parses */
  json?: unknown;
  /** transport error: no response was received */
  error?: string;
  /**
   * With `error`: the harness ended the request itself (its client closed, a test's deadline),
   * so the missing response says nothing about the target.
   */
  cancelled?: true;
  /**
   * The request was sent a second time, and why: its first attempt went out on a kept-alive
   * connection the target closed before any byte of an answer (suites/harness/connections.ts).
   */
  retried?: string;
  /** The body nests deeper than MAX_JSON_DEPTH: not parsed, `json` stays undefined. */
  jsonTooDeep?: true;
  /**
   * The body's length in bytes when it was slimmed (`slim`) after every listener judged the
   * whole reply: `response.body` and long strings of `json` are then cut.
   */
  slimmed?: number;
  durationMs: number;
}

export function headerValue(headers: Record<string, string | string[]> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted) return Array.isArray(value) ? value.join(', ') : value;
  }
  return undefined;
}

/**
 * How much of a body, a header value, a URL or an error a kept exchange holds: results, findings
 * and messages keep this much of each, whatever the server sent. Checks judge the whole reply
 * before anything is kept.
 */
export const KEPT_CHARS = 4096;

/** `text` cut to `limit` characters, with a visible marker giving the bytes left out. */
export function cut(text: string, limit = KEPT_CHARS): string {
  if (text.length <= limit) return text;
  // Cut again, the count adds up: the marker of an earlier cut is replaced.
  const earlier = CUT_MARK.exec(text.slice(-40));
  const whole = earlier ? text.slice(0, text.length - earlier[0].length) : text;
  const before = earlier ? Number(earlier[1]) : 0;
  let end = Math.min(limit, whole.length);
  // Never half a surrogate pair.
  const last = whole.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  // A copy, not a slice: V8 keeps the whole string alive behind a slice of it, so a cut 1 MB body
  // would still hold its megabyte.
  const head = whole.slice(0, end).split('').join('');
  return `${head}…[cut: ${Buffer.byteLength(whole, 'utf8') - Buffer.byteLength(head, 'utf8') + before} bytes]`;
}

const CUT_MARK = /…\[cut: (\d+) bytes\]$/;

/** A body longer than this is slimmed once judged (`slim`). */
export const LARGE_BODY = 4 * KEPT_CHARS;
/** Strings of a slimmed body's parsed JSON longer than this are cut. */
const LONG_STRING = 16 * 1024;
/** Strings of slimmed bodies up to this long are shared (`share`); at most SHARED of them are held. */
const SHARED_STRING = 1024;
const SHARED = 16 * 1024;

/**
 * Decision: the strings of slimmed replies are shared: replies repeat the same values (the same
 * list read again, every object's name on every page, a server echoing the same text in every
 * reply), and each parse makes copies of its own. One table of at most SHARED strings of at most
 * SHARED_STRING characters (16 MB at worst), emptied when full.
 */
const shared = new Map<string, string>();
function share(text: string): string {
  if (text.length > SHARED_STRING) return text;
  const known = shared.get(text);
  if (known !== undefined) return known;
  if (shared.size >= SHARED) shared.clear();
  shared.set(text, text);
  return text;
}

/** True when the JSON holds an integer a double cannot hold exactly (an id above 2^53). */
function holdsUnsafeInteger(value: unknown): boolean {
  if (typeof value === 'number') return Number.isInteger(value) && !Number.isSafeInteger(value);
  if (Array.isArray(value)) return value.some(holdsUnsafeInteger);
  if (value !== null && typeof value === 'object') return Object.values(value).some(holdsUnsafeInteger);
  return false;
}

function cutStrings(value: unknown): unknown {
  if (typeof value === 'string') return value.length > LONG_STRING ? cut(value) : share(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = cutStrings(value[i]);
    return value;
  }
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = cutStrings(o[k]);
  }
  return value;
}

/**
 * Slims a large reply in place once the oracle and every listener have judged it whole: the body
 * text is cut to KEPT_CHARS and the parsed JSON keeps its structure, numbers and short strings
 * (ids, names, counts) but long strings are cut, and the others shared (`share`). Decision: a
 * check holds a reply past its request (a list's first page, every page read ahead, every
 * endpoint's refusal for every role), and a server sending 1 MB on every GET, or echoing every
 * secret in every reply, would otherwise make a run's memory grow with its replies (issue 24: a
 * run stays under 300 MB). What the suites read after a request (status, headers, ids, counts,
 * fields they sent) is kept; the raw text's judgement (JSON, UTF-8, byte order mark) is done
 * before. A body whose JSON holds an integer above 2^53 keeps its text: ids are read from it
 * exactly (suites/harness/ownership.ts). Parsed JSON nests at most MAX_JSON_DEPTH levels, so the
 * walks cannot overflow the stack.
 */
export function slim(ex: Exchange): void {
  const body = ex.response?.body;
  if (body === undefined || body.length <= LARGE_BODY) return;
  if (ex.json !== undefined && holdsUnsafeInteger(ex.json)) return;
  ex.slimmed = Buffer.byteLength(body, 'utf8');
  ex.response!.body = cut(body);
  if (ex.json !== undefined) ex.json = cutStrings(ex.json);
}

/** At most this many values of one repeated header are kept. */
const KEPT_REPEATS = 16;

function cutHeaders<T extends string | string[]>(headers: Record<string, T>, limit: number): Record<string, T> {
  const out: Record<string, string | string[]> = {};
  let n = 0;
  for (const [name, value] of Object.entries(headers)) {
    if (n++ >= KEPT_REPEATS * 8) break;
    out[cut(name, 200)] = Array.isArray(value)
      ? [
          ...value.slice(0, KEPT_REPEATS).map((v) => cut(v, limit)),
          ...(value.length > KEPT_REPEATS ? [`…[cut: ${value.length - KEPT_REPEATS} more values]`] : []),
        ]
      : cut(value, limit);
  }
  return out as Record<string, T>;
}

/**
 * The exchange as results, findings and messages keep it: every body, header value, URL and
 * error cut to `limit` characters (`cut`), the parsed body only when the body was kept whole.
 * Decision: a report shows what broke a clause; a 1 MB body or a 14 KB Link header repeated in
 * every finding would make memory grow with the server's replies.
 */
export function keptExchange(ex: Exchange, limit = KEPT_CHARS): Exchange {
  const out: Exchange = {
    request: { method: cut(ex.request.method, 100), url: cut(ex.request.url, limit), headers: cutHeaders(ex.request.headers, limit) },
    durationMs: ex.durationMs,
  };
  if (ex.request.body !== undefined) out.request.body = cut(ex.request.body, limit);
  if (ex.response) {
    const body = cut(ex.response.body, limit);
    out.response = { status: ex.response.status, headers: cutHeaders(ex.response.headers, limit), body };
    if (ex.response.validUtf8 !== undefined) out.response.validUtf8 = ex.response.validUtf8;
    if (ex.json !== undefined && body === ex.response.body && ex.slimmed === undefined) out.json = ex.json;
    if (ex.slimmed !== undefined) out.slimmed = ex.slimmed;
  }
  if (ex.error !== undefined) out.error = cut(ex.error, limit);
  return out;
}

/**
 * JSON nested deeper than this is not parsed: RFC 8259 §9 lets a parser limit nesting, and no
 * object of the API nests more than a few levels. A deeper body is the server's (`jsonTooDeep`),
 * judged as a body that is not JSON a client can read, never a crash of the harness.
 */
export const MAX_JSON_DEPTH = 256;

/** True when the JSON text nests arrays or objects deeper than `max` (strings skipped; not a validator). */
export function nestsDeeperThan(text: string, max = MAX_JSON_DEPTH): boolean {
  // Decision (issue 38): a text with at most `max` brackets that open cannot nest deeper; counted
  // by indexOf (native), that settles nearly every reply without the scan below, which was 2% of a
  // run's main thread.
  if (opening(text, '[', opening(text, '{', 0, max), max) <= max) return false;
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // a string: to its closing quote, escapes skipped
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
    } else if (c === 91 || c === 123) {
      if (++depth > max) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

/** `count` plus the occurrences of `c` in `text`, counted up to `max` + 1 at most. */
function opening(text: string, c: string, count: number, max: number): number {
  for (let i = text.indexOf(c); i >= 0 && count <= max; i = text.indexOf(c, i + 1)) count++;
  return count;
}

/** The body parsed as JSON: `json` when it parses within MAX_JSON_DEPTH, `tooDeep` when it nests deeper. */
export function parseJsonBody(text: string): { json?: unknown; tooDeep?: true } {
  if (text.trim() === '') return {};
  if (nestsDeeperThan(text)) return { tooDeep: true };
  try {
    return { json: JSON.parse(text) };
  } catch {
    return {};
  }
}
