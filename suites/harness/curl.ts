import type { Exchange } from '../../core/exchange.ts';
import { redactJsonText, redactUrl, scrub } from '../../core/redact.ts';
import { signedUri } from '../../core/signed-uri.js';

/** «redacted:admin password» → PMV6_ADMIN_PASSWORD */
export function secretVariable(label: string): string {
  return `PMV6_${label
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_|_$/g, '')}`;
}

/** Single-quoted shell word; text with control characters uses $'…' so the line stays one line. */
export function shellQuote(text: string): string {
  const ansi = /[\x00-\x1f\x7f]/.test(text);
  const quoted = ansi
    ? `$'${text.replace(/[\\']/g, '\\$&').replace(/[\x00-\x1f\x7f]/g, (c) => {
        const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
        return named[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
      })}'`
    : `'${text.replace(/'/g, `'\\''`)}'`;
  // A registered secret leaves the quotes and comes back from the environment.
  return quoted.replace(/«redacted:([^»]+)»/g, (_m, label: string) => `'"$${secretVariable(label)}"${ansi ? "$'" : "'"}`);
}

const HMAC_VARIABLES: Record<string, string> = {
  'x-public-key': '$PMV6_HMAC_PUBLIC',
  'x-request-hash': '$PMV6_HMAC_HASH',
  'x-request-timestamp': '$PMV6_HMAC_TIMESTAMP',
};

/** One shell line that replays the request; secrets come from PMV6_* variables. */
export function toCurl(ex: Exchange): string {
  const { method, url, headers, body } = ex.request;
  const words = ['curl', '-sS', '-i', '-X', shellQuote(method), shellQuote(redactUrl(url))];
  let hmac = false;
  let hasContentType = false;
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === 'content-type') hasContentType = true;
    if (lower === 'authorization' && /^basic\s/i.test(value)) {
      words.push('-u', '"$PMV6_USER:$PMV6_PASSWORD"');
    } else if (lower === 'authorization' && /^bearer\s/i.test(value)) {
      words.push('-H', `"${name}: Bearer $PMV6_CONTROL_TOKEN"`);
    } else if (lower in HMAC_VARIABLES) {
      hmac = true;
      words.push('-H', `"${name}: ${HMAC_VARIABLES[lower]}"`);
    } else {
      words.push('-H', shellQuote(`${name}: ${lower === 'authorization' ? value.replace(/\s.*$/s, ' «redacted»') : scrub(value)}`));
    }
  }
  if (body !== undefined && body !== '') {
    // curl would add Content-Type: application/x-www-form-urlencoded; "Content-Type:" removes it.
    if (!hasContentType) words.push('-H', "'Content-Type:'");
    words.push('--data-raw', shellQuote(redactJsonText(body)));
  }
  let line = words.join(' ');
  if (hmac) {
    line += ` # HMAC: recompute PMV6_HMAC_HASH = hex(hmac_sha256(key=$PMV6_HMAC_PRIVATE, msg=${JSON.stringify(scrub(signedUri(url)))} + $PMV6_HMAC_TIMESTAMP + body)) with a fresh PMV6_HMAC_TIMESTAMP (Unix seconds)`;
  }
  return line;
}
