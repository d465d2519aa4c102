import type { Exchange } from './exchange.ts';

const secrets = new Map<string, string>();
let pattern: RegExp | null = null;

/**
 * Decision: values shorter than 4 characters are not scrubbed from free text (a one-letter secret
 * would garble every message); headers and sensitive JSON keys still hide them.
 */
const MIN_SECRET_LENGTH = 4;

const SENSITIVE_KEYS = new Set(
  ['password', 'private_key', 'privateKey', 'token', 'new_password', 'password_confirm'].map((k) => k.toLowerCase()),
);

function variants(value: string): string[] {
  const uri = encodeURIComponent(value);
  const form = uri.replace(/%20/g, '+');
  const lowerHex = (s: string) => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
  const json = JSON.stringify(value).slice(1, -1);
  const b64 = Buffer.from(value, 'utf8').toString('base64');
  const b64url = Buffer.from(value, 'utf8').toString('base64url');
  return [value, uri, form, lowerHex(uri), lowerHex(form), json, b64, b64url, encodeURI(value)];
}

function addVariant(variant: string, label: string): void {
  if (variant.length < MIN_SECRET_LENGTH) return;
  if (!secrets.has(variant)) secrets.set(variant, label);
  pattern = null;
}

export function registerSecret(value: string, label: string): void {
  if (!value) return;
  for (const v of variants(value)) addVariant(v, label);
}

/** A password plus the base64 of `user:password`, as carried by a Basic header. */
export function registerCredentials(user: string, password: string, label: string): void {
  registerSecret(password, label);
  const pair = Buffer.from(`${user}:${password}`, 'utf8');
  addVariant(pair.toString('base64'), label);
  addVariant(pair.toString('base64').replace(/=+$/, ''), label);
  addVariant(pair.toString('base64url'), label);
}

/** For tests of the harness itself. */
export function clearSecrets(): void {
  secrets.clear();
  pattern = null;
}

function secretPattern(): RegExp | null {
  if (secrets.size === 0) return null;
  if (!pattern) {
    const alternatives = [...secrets.keys()]
      .sort((a, b) => b.length - a.length)
      .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    pattern = new RegExp(alternatives.join('|'), 'g');
  }
  return pattern;
}

export function scrub(text: string): string {
  const re = secretPattern();
  const out = re ? text.replace(re, (m) => `«redacted:${secrets.get(m) ?? 'secret'}»`) : text;
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
    return Object.entries(value).some(
      ([k, v]) => (SENSITIVE_KEYS.has(k.toLowerCase()) && v !== null && v !== '') || hasSensitiveKey(v),
    );
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
