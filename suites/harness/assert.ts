import { cut, type Exchange, headerValue, KEPT_CHARS, keptExchange, MAX_JSON_DEPTH } from '../../core/exchange.ts';
import { clip, redactExchange, scrub } from '../../core/redact.ts';
import { toCurl } from './curl.ts';
import { type SchemaName, validate } from './schemas.ts';

const BODY_LIMIT = 2048;

function bodyLines(prefix: string, body: string | undefined): string[] {
  if (body === undefined || body === '') return [];
  return [
    `${prefix}`,
    ...cut(body, BODY_LIMIT)
      .split('\n')
      .map((l) => `${prefix} ${l}`),
  ];
}

/**
 * The exchange as a result, a finding or a message keeps it: redacted whole (a secret split by a
 * cut would otherwise show its first half), then cut (core/exchange.ts `keptExchange`).
 */
export function keep(ex: Exchange): Exchange {
  try {
    return keptExchange(redactExchange(ex));
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    // JSON too deep for redaction's walk of parsed bodies: the bodies redacted as text.
    const bare = redactExchange({
      ...ex,
      request: { method: ex.request.method, url: ex.request.url, headers: ex.request.headers },
      ...(ex.response ? { response: { ...ex.response, body: '' } } : {}),
      json: undefined,
    });
    if (ex.request.body !== undefined) bare.request.body = scrub(ex.request.body);
    if (bare.response && ex.response) bare.response.body = scrub(ex.response.body);
    return keptExchange(bare);
  }
}

/** The redacted transcript: `>` request lines, `<` response lines, bodies cut at ~2 KB, header values at ~4 KB. */
export function formatExchange(exchange: Exchange): string {
  const ex = keep(exchange);
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
    const expected = cut(opts.expected, KEPT_CHARS);
    const actual = cut(opts.actual, KEPT_CHARS);
    // Redacted here too: a test framework may serialise an error's own properties into its output.
    const kept = opts.exchange ? keep(opts.exchange) : undefined;
    const parts = [`expected: ${expected}`, `actual:   ${actual}`];
    if (kept) parts.push('', formatExchange(kept), '', `reproduce: ${scrub(toCurl(kept))}`);
    super(scrub(parts.join('\n')));
    this.expected = expected;
    this.actual = actual;
    if (kept) this.exchange = kept;
    if (opts.clauses) this.clauses = opts.clauses;
  }
}

/** A fixture step failed: the test's outcome is setup-failed, not a violation. */
export class SetupError extends Error {
  override name = 'SetupError';
  readonly exchange?: Exchange;

  constructor(message: string, opts: { exchange?: Exchange; cause?: unknown } = {}) {
    const kept = opts.exchange ? keep(opts.exchange) : undefined;
    super(scrub(kept ? `${cut(message, KEPT_CHARS)}\n\n${formatExchange(kept)}` : cut(message, KEPT_CHARS)), { cause: opts.cause });
    if (kept) this.exchange = kept;
  }
}

/**
 * A request got no response: never the server's violation of the clause under test. Either the
 * harness ended it itself (`exchange.cancelled`: its client closed, a test's deadline passed) or
 * the transport failed on a connection the target gave (refused, reset, timed out; an idle
 * connection the server had closed is retried once first). The test is a harness error (the
 * outcome that never blames the server) whose message names the cause.
 */
export class NoResponseError extends Error {
  override name = 'NoResponseError';
  readonly exchange: Exchange;

  constructor(exchange: Exchange, expected: string) {
    const kept = keep(exchange);
    const cause = kept.error ?? 'unknown transport error';
    super(
      scrub(
        exchange.cancelled
          ? `harness: the request was cancelled by pmv6 (${cause}); nothing was judged (expected ${cut(expected, 200)})`
          : `the target gave no response: ${cause}; not judged under any clause (expected ${cut(expected, 200)})\n\n${formatExchange(kept)}`,
      ),
    );
    this.exchange = kept;
  }
}

/**
 * The check cannot be made on this target for a reason the server's reply shows elsewhere (a
 * Link to follow points outside the target): the test is skipped-unverifiable with this reason,
 * and the clause that the reply breaks is reported where it is judged (the oracle).
 */
export class UnverifiableError extends Error {
  override name = 'UnverifiableError';
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

/**
 * The run could not read the target's settings at its start, so it changes none (nothing could
 * be put back): a check that needs a change is skipped-unverifiable with this reason.
 */
export class SettingsLockedError extends SetupError {
  override name = 'SettingsLockedError';
  constructor(readonly reason: string) {
    super(`settings left as they are: ${reason}`);
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
  if (ex && !ex.response) throw new NoResponseError(ex, expected);
  throw new ViolationError({ expected, actual, ...(ex ? { exchange: ex } : {}), ...(clauses ? { clauses } : {}) });
}

export type Responded = Exchange & { response: NonNullable<Exchange['response']> };

/** A request without a response is no violation (NoResponseError): only the server's reply can break a clause. */
export function expectResponse(ex: Exchange, expected = 'a response'): asserts ex is Responded {
  if (!ex.response) throw new NoResponseError(ex, expected);
}

/** What a body that did not parse as JSON was: empty, nested too deep to read (the server's), or not JSON. */
export function notJson(ex: Responded): string {
  if (ex.response.body.trim() === '') return 'an empty body';
  if (ex.jsonTooDeep) return `JSON nested more than ${MAX_JSON_DEPTH} levels deep, which pmv6 does not read (RFC 8259 §9: a parser may limit nesting)`;
  return `a body that is not JSON: ${quote(ex.response.body)}`;
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
    violation(ex, expected, notJson(ex));
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
