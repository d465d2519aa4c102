/**
 * RFC 8288 §3: Link = #link-value
 *   link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param )
 *   link-param = token BWS [ "=" BWS ( token / quoted-string ) ]
 */
export interface LinkEntry {
  url: string;
  rels: string[];
  /** parameter names lower-cased; the first occurrence wins (RFC 8288 §3.3 for rel) */
  params: Record<string, string>;
}

export interface ParsedLinks {
  entries: LinkEntry[];
  errors: string[];
}

const TCHAR = /[!#$%&'*+.^_`|~0-9A-Za-z-]/;
const OWS = /[ \t]/;

class Scanner {
  pos = 0;
  constructor(readonly text: string) {}
  get done(): boolean {
    return this.pos >= this.text.length;
  }
  peek(): string {
    return this.text[this.pos] ?? '';
  }
  skipOws(): void {
    while (!this.done && OWS.test(this.peek())) this.pos++;
  }
  token(): string {
    const start = this.pos;
    while (!this.done && TCHAR.test(this.peek())) this.pos++;
    return this.text.slice(start, this.pos);
  }
  /** At the opening quote. Returns null when unterminated (the scanner then sits at the end). */
  quoted(): string | null {
    this.pos++;
    let out = '';
    while (!this.done) {
      const c = this.peek();
      this.pos++;
      if (c === '"') return out;
      if (c === '\\') {
        if (this.done) break;
        out += this.peek();
        this.pos++;
      } else {
        out += c;
      }
    }
    return null;
  }
  /** Skips to just after the next comma that is outside quotes and angle brackets. */
  recover(): void {
    let inAngle = false;
    while (!this.done) {
      const c = this.peek();
      if (c === '"' && !inAngle) {
        if (this.quoted() === null) return;
        continue;
      }
      this.pos++;
      if (c === '<') inAngle = true;
      else if (c === '>') inAngle = false;
      else if (c === ',' && !inAngle) return;
    }
  }
}

/** How much of a URL a message shows, and how many errors a header reports. */
const URL_SHOWN = 200;
const ERRORS_SHOWN = 10;

function parseLine(line: string, where: string, entries: LinkEntry[], errors: string[]): void {
  const s = new Scanner(line);
  let index = 0;
  if (line.trim() === '') {
    errors.push(`${where}empty Link header value`);
    return;
  }
  while (!s.done) {
    index++;
    const at = `${where}link-value ${index}`;
    s.skipOws();
    if (s.done || s.peek() === ',') {
      errors.push(`${at}: empty entry`);
      if (!s.done) s.pos++;
      continue;
    }
    if (s.peek() !== '<') {
      errors.push(`${at}: expected "<" at offset ${s.pos}, found ${JSON.stringify(s.peek())}`);
      s.recover();
      continue;
    }
    const close = line.indexOf('>', s.pos + 1);
    if (close < 0) {
      errors.push(`${at}: missing ">" after "<" at offset ${s.pos}`);
      return;
    }
    const url = line.slice(s.pos + 1, close);
    // Messages name the URL, cut: a header may repeat a long one many times.
    const named = url.length > URL_SHOWN ? `${url.slice(0, URL_SHOWN)}…` : url;
    s.pos = close + 1;
    const params: Record<string, string> = {};
    let relSeen = false;
    let broken = false;
    for (;;) {
      s.skipOws();
      if (s.done) break;
      if (s.peek() === ',') {
        s.pos++;
        break;
      }
      if (s.peek() !== ';') {
        errors.push(`${at} <${named}>: expected ";" or "," at offset ${s.pos}, found ${JSON.stringify(s.peek())}`);
        broken = true;
        s.recover();
        break;
      }
      s.pos++;
      s.skipOws();
      const name = s.token().toLowerCase();
      if (name === '') {
        if (s.done || s.peek() === ',') {
          errors.push(`${at} <${named}>: empty parameter after ";"`);
          continue;
        }
        errors.push(`${at} <${named}>: invalid parameter name at offset ${s.pos}`);
        broken = true;
        s.recover();
        break;
      }
      s.skipOws();
      let value = '';
      if (s.peek() === '=') {
        s.pos++;
        s.skipOws();
        if (s.peek() === '"') {
          const q = s.quoted();
          if (q === null) {
            errors.push(`${at} <${named}>: unterminated quoted string in parameter "${name}"`);
            broken = true;
            break;
          }
          value = q;
        } else {
          value = s.token();
          if (value === '') {
            errors.push(`${at} <${named}>: parameter "${name}" has no value`);
          }
        }
      }
      if (name === 'rel') {
        if (relSeen) continue;
        relSeen = true;
      }
      if (!(name in params)) params[name] = value;
    }
    if (broken) continue;
    const rels = (params['rel'] ?? '')
      .split(/[ \t]+/)
      .filter(Boolean)
      .map((r) => r.toLowerCase());
    if (!relSeen) errors.push(`${at} <${named}>: missing rel parameter`);
    else if (rels.length === 0) errors.push(`${at} <${named}>: empty rel parameter`);
    entries.push({ url, rels, params });
  }
}

export function parseLinkHeader(value: string | string[] | undefined): ParsedLinks {
  const entries: LinkEntry[] = [];
  const errors: string[] = [];
  if (value === undefined) return { entries, errors };
  const lines = Array.isArray(value) ? value : [value];
  for (const [i, line] of lines.entries()) parseLine(line, lines.length > 1 ? `line ${i + 1}, ` : '', entries, errors);
  if (errors.length > ERRORS_SHOWN) errors.splice(ERRORS_SHOWN, errors.length, `… and ${errors.length - ERRORS_SHOWN} more errors`);
  return { entries, errors };
}

/** rel → urls, in header order. */
export function relMap(entries: LinkEntry[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const entry of entries) {
    for (const rel of entry.rels) {
      const urls = map.get(rel) ?? [];
      urls.push(entry.url);
      map.set(rel, urls);
    }
  }
  return map;
}
