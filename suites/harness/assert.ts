import { type Exchange, headerValue } from '../../core/exchange.ts';
import { clip, redactExchange, scrub } from '../../core/redact.ts';
import { toCurl } from './curl.ts';
import { type SchemaName, validate } from './schemas.ts';

const BODY_LIMIT = 2048;

function truncate(text: string): string {
  if (text.length <= BODY_LIMIT) return text;
  return `${clip(text, BODY_LIMIT)}… (truncated, ${Buffer.byteLength(text, 'utf8')} bytes in all)`;
}

function bodyLines(prefix: string, body: string | undefined): string[] {
  if (body === undefined || body === '') return [];
  return [
    `${prefix}`,
    ...truncate(body)
      .split('\n')
      .map((l) => `${prefix} ${l}`),
  ];
}

/** The redacted transcript: `>` request lines, `<` response lines, bodies cut at ~2 KB. */
export function formatExchange(exchange: Exchange): string {
  const ex = redactExchange(exchange);
  const lines = [`> ${ex.request.method} ${ex.request.url}`];
  for (const [k, v] of Object.entries(ex.request.headers)) lines.push(`> ${k}: ${v}`);
  lines.push(...bodyLines('>', ex.request.body));
  lines.push('');
  if (ex.response) {
    lines.push(`< HTTP ${ex.response.status}`);
    for (const [k, v] of Object.entries(ex.response.headers)) {
      for (const one of Array.isArray(v) ? v : [v]) lines.push(`< ${k}: ${one}`);
    }
    if (ex.response.validUtf8 === false) lines.push('< (body is not valid UTF-8; invalid bytes shown as U+FFFD)');
    lines.push(...bodyLines('<', ex.response.body));
  } else {
    lines.push(`< (no response: ${ex.error ?? 'unknown transport error'})`);
  }
  return lines.join('\n');
}

export class ViolationError extends Error {
  override name = 'ViolationError';
  readonly expected: string;
  readonly actual: string;
  readonly exchange?: Exchange;
  clauses?: string[];

  constructor(opts: { expected: string; actual: string; exchange?: Exchange; clauses?: string[] }) {
    const parts = [`expected: ${opts.expected}`, `actual:   ${opts.actual}`];
    if (opts.exchange) parts.push('', formatExchange(opts.exchange), '', `reproduce: ${scrub(toCurl(opts.exchange))}`);
    super(scrub(parts.join('\n')));
    this.expected = opts.expected;
    this.actual = opts.actual;
    // Redacted here too: a test framework may serialise an error's own properties into its output.
    if (opts.exchange) this.exchange = redactExchange(opts.exchange);
    if (opts.clauses) this.clauses = opts.clauses;
  }
}

/** A fixture step failed: the test's outcome is setup-failed, not a violation. */
export class SetupError extends Error {
  override name = 'SetupError';
  readonly exchange?: Exchange;

  constructor(message: string, opts: { exchange?: Exchange; cause?: unknown } = {}) {
    super(scrub(opts.exchange ? `${message}\n\n${formatExchange(opts.exchange)}` : message), { cause: opts.cause });
    if (opts.exchange) this.exchange = redactExchange(opts.exchange);
  }
}

/**
 * A check's precondition does not hold on this target (items it must tell apart carry no id, a
 * dependency the spec does not show is missing): the test is skipped-unverifiable with this
 * reason, never a violation of the clause under test (one cause, one headline).
 */
export class PreconditionError extends Error {
  override name = 'PreconditionError';
}

/** Ends the test as skipped-unverifiable: `reason` says which precondition did not hold. */
export function precondition(reason: string): never {
  throw new PreconditionError(scrub(reason));
}

export const READ_ONLY_MARK = 'read-only run:';
export const READ_ONLY_NOTE = 'read-only run (--read-only): this check creates, changes or deletes data';

/** A read-only run (--read-only) refused to create, change or delete something: the check is disabled. */
export class ReadOnlyError extends SetupError {
  override name = 'ReadOnlyError';
  constructor(what: string) {
    super(`${READ_ONLY_MARK} ${what}`);
  }
}

/** Also when wrapped (fast-check reports a property's error inside its own). */
export function isReadOnlyRefusal(e: unknown, depth = 0): boolean {
  if (e instanceof ReadOnlyError) return true;
  if (depth > 3 || e === null || typeof e !== 'object') return false;
  const err = e as { message?: unknown; cause?: unknown };
  return (typeof err.message === 'string' && err.message.includes(READ_ONLY_MARK)) || isReadOnlyRefusal(err.cause, depth + 1);
}

export function violation(ex: Exchange | undefined, expected: string, actual: string, clauses?: string[]): never {
  throw new ViolationError({ expected, actual, ...(ex ? { exchange: ex } : {}), ...(clauses ? { clauses } : {}) });
}

type Responded = Exchange & { response: NonNullable<Exchange['response']> };

/** A hung or refused request is a failed check, not a harness crash. */
export function expectResponse(ex: Exchange, expected = 'a response'): asserts ex is Responded {
  if (!ex.response) violation(ex, expected, `no response: ${ex.error ?? 'unknown transport error'}`);
}

function quote(text: string, limit = 200): string {
  return JSON.stringify(clip(text, limit, '…'));
}

export function expectStatus(ex: Exchange, status: number | number[]): void {
  const wanted = Array.isArray(status) ? status : [status];
  const expected = `status ${wanted.join(' or ')}`;
  expectResponse(ex, expected);
  if (!wanted.includes(ex.response.status)) violation(ex, expected, `status ${ex.response.status}`);
}

/** A refusal whose status the spec does not give: any 4XX, with the error object. */
export function expectClientError(ex: Exchange): { error: true; type: string; message: string } {
  expectResponse(ex, 'a 4XX status');
  const { status } = ex.response;
  if (status < 400 || status > 499) violation(ex, 'a 4XX status with the error object', `status ${status}`);
  return expectErrorObject(ex);
}

export function expectJsonContentType(ex: Exchange): void {
  const expected = 'Content-Type application/json (charset utf-8 if given)';
  expectResponse(ex, expected);
  const value = headerValue(ex.response.headers, 'content-type');
  if (value === undefined) violation(ex, expected, 'no Content-Type header');
  const [type = '', ...params] = value.split(';').map((p) => p.trim());
  const charset = params
    .find((p) => /^charset=/i.test(p))
    ?.slice('charset='.length)
    .replace(/^"|"$/g, '');
  if (type.toLowerCase() !== 'application/json' || (charset !== undefined && charset.toLowerCase() !== 'utf-8')) {
    violation(ex, expected, `Content-Type: ${value}`);
  }
}

/** Returns the parsed body, valid against the named schema. */
export function expectSchema(ex: Exchange, name: SchemaName): unknown {
  const expected = `a JSON body matching the ${name} schema`;
  expectResponse(ex, expected);
  if (ex.json === undefined) {
    violation(ex, expected, ex.response.body === '' ? 'an empty body' : `a body that is not JSON: ${quote(ex.response.body)}`);
  }
  const problems = validate(name, ex.json);
  if (problems.length > 0) violation(ex, expected, problems.join('; '));
  return ex.json;
}

export type TextMatch = string | RegExp | ((value: string) => boolean);

function matches(value: string, match: TextMatch): boolean {
  if (typeof match === 'string') return value === match;
  if (match instanceof RegExp) return match.test(value);
  return match(value);
}

function describeMatch(match: TextMatch): string {
  if (typeof match === 'string') return JSON.stringify(match);
  if (match instanceof RegExp) return `matching ${String(match)}`;
  return 'satisfying the check';
}

export function expectErrorObject(
  ex: Exchange,
  want: { status?: number | number[]; type?: TextMatch; message?: TextMatch } = {},
): { error: true; type: string; message: string } {
  if (want.status !== undefined) expectStatus(ex, want.status);
  const body = expectSchema(ex, 'error') as { error: true; type: string; message: string };
  if (want.type !== undefined && !matches(body.type, want.type)) {
    violation(ex, `error type ${describeMatch(want.type)}`, `type ${JSON.stringify(body.type)}`);
  }
  if (want.message !== undefined && !matches(body.message, want.message)) {
    violation(ex, `error message ${describeMatch(want.message)}`, `message ${JSON.stringify(body.message)}`);
  }
  return body;
}

/**
 * Without a check the header must be present. A function check receives undefined when the header
 * is absent; give `description` to say what it expects. Returns the value (lines joined by ", ").
 */
export function expectHeader(
  ex: Exchange,
  name: string,
  check?: string | RegExp | ((value: string | undefined) => boolean),
  description?: string,
): string | undefined {
  const expected =
    description ??
    (check === undefined ? `header ${name}` : typeof check === 'function' ? `header ${name} satisfying the check` : `header ${name}: ${describeMatch(check)}`);
  expectResponse(ex, expected);
  const value = headerValue(ex.response.headers, name);
  const ok = typeof check === 'function' ? check(value) : value !== undefined && (check === undefined || matches(value, check));
  if (!ok) violation(ex, expected, value === undefined ? `no ${name} header` : `${name}: ${value}`);
  return value;
}

export function expectNoBody(ex: Exchange): void {
  expectResponse(ex, 'no body');
  const { body } = ex.response;
  if (body !== '') violation(ex, 'no body', `a body of ${Buffer.byteLength(body, 'utf8')} bytes: ${quote(body)}`);
}
