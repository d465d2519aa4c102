import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from '../../core/errors.ts';

/**
 * Strict parsing: an unknown flag, a missing value or an argument the command does not take is a
 * usage error (exit 2) in one line of ours, never ignored. Decision: a command takes positional
 * arguments only when it says so (`positionals: true`); elsewhere one is refused, because an
 * ignored `pmv6 run http://host` would test the embedded server and turn a gate green.
 */
export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, opts: { positionals?: boolean } = {}) {
  const strictly = () =>
    parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' }, ...options }, strict: true, allowPositionals: true, tokens: true });
  let parsed: ReturnType<typeof strictly>;
  try {
    parsed = strictly();
  } catch (e) {
    throw new UsageError(usageLine(e as Error & { code?: string }));
  }
  // Decision (issue 36): a flag that takes one value given twice is refused, never the last one
  // taken: `--target A ... --target B` in a CI script would test B without a word.
  const seen = new Set<string>();
  for (const t of parsed.tokens ?? []) {
    if (t.kind !== 'option' || options[t.name]?.multiple) continue;
    if (seen.has(t.name)) throw new UsageError(`--${t.name} is given more than once; give it once`);
    seen.add(t.name);
  }
  const first = parsed.positionals[0];
  if (!opts.positionals && first !== undefined) refuse(first, options);
  return parsed;
}

function refuse(first: string, options: NonNullable<ParseArgsConfig['options']>): never {
  const hint = /^[a-z][a-z0-9+.-]*:\/\//i.test(first) && 'target' in options ? `; did you mean --target ${first}?` : '; options start with --';
  throw new UsageError(`unexpected argument "${first}"${hint}`);
}

/** One line for each of parseArgs' errors, naming the option and what to do. */
function usageLine(e: Error & { code?: string }): string {
  const option = /'(-{1,2}[^' <]+)/.exec(e.message)?.[1];
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${option ?? ''} (--help lists the options)`.replace('  ', ' ');
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/ambiguous/.test(e.message)) return `${option} needs a value; a value starting with "-" is written ${option}=-…`;
      if (/does not take an argument/.test(e.message)) return `${option} takes no value`;
      if (/argument missing/.test(e.message)) return `${option} needs a value`;
      break;
  }
  return (e.message.split('\n')[0] ?? e.message).trim();
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

/** The target and its credentials, as `pmv6 run` and `pmv6 cleanup` both take them. */
export const TARGET_OPTIONS = {
  target: { type: 'string' },
  user: { type: 'string' },
  password: { type: 'string' },
  'hmac-public': { type: 'string' },
  'hmac-private': { type: 'string' },
  control: { type: 'string' },
  'control-token': { type: 'string' },
} as const;
