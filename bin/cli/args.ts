import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from '../../core/errors.ts';

// Strict parsing: an unknown flag or a missing value is a usage error (exit 2), never ignored.
export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' }, ...options }, strict: true, allowPositionals: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

export function intOption(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got "${value}"`);
  }
  return Number(value);
}

/** The URL as it may be shown: whatever stands before an `@` in the authority is hidden. */
function shown(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1«redacted»@');
}

/**
 * Decision: credentials inside a URL (`http://user:pass@host`) are refused, not redacted and used:
 * they would travel in every log line and shell history, and the API takes them from --user and
 * --password (or the environment) anyway.
 */
export function urlOption(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--${name} must be an absolute http(s) URL, got "${shown(value)}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--${name} must be an http or https URL, got "${shown(value)}"`);
  }
  if (url.username !== '' || url.password !== '' || /^[^/]*\/\/[^/?#]*@/.test(value)) {
    throw new UsageError(`--${name} must not carry credentials ("${shown(value)}"): give them with --user and --password, or PMV6_USER and PMV6_PASSWORD`);
  }
  return value.replace(/\/+$/, '');
}
