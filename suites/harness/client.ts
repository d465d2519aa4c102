import { Readable } from 'node:stream';
import { type Dispatcher, errors as undiciErrors } from 'undici';
import { cut, type Exchange, parseJsonBody, slim } from '../../core/exchange.ts';
import { signedUri } from '../../core/signed-uri.js';
import { basicAuthorization, hmacSign } from '../../core/signers.ts';
import { PIECE_CHARS, utf8Pieces } from '../../core/utf8-pieces.ts';
import { PreconditionError, ReadOnlyError, SetupError } from './assert.ts';
import { DEFAULT_MAX_RESPONSE_BYTES, type RunConfig } from './config.ts';
import { Connections, creationName, landed, runPool, StaleConnection } from './connections.ts';
import { activeGate } from './gate.ts';
import { activeLedger, foreignText, guardRequest } from './ownership.ts';
import { announceSending, type Channel, emitExchange, requestStarting, writeMark } from './traffic.ts';

export type HmacParts = { uri: string; timestamp: string; body: string; hash: string };

export type Auth =
  | { kind: 'basic'; user: string; password: string }
  | {
      kind: 'hmac';
      publicKey: string;
      privateKey: string;
      /** Unix seconds; default now */
      timestamp?: number;
      /**
       * Decision: `uri` and `body` returned here change only what is hashed (the wire keeps the real
       * request); `timestamp` changes the hash input and the X-Request-Timestamp header; `hash`
       * replaces the X-Request-Hash header. Without `hash`, it is recomputed from the returned parts.
       */
      mutate?: (parts: HmacParts) => Partial<HmacParts>;
    }
  | { kind: 'none' }
  | { kind: 'raw'; headers: Record<string, string> };

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | (string & {});
  /** relative to {target}/index.php/api/v6, e.g. '/passwords.json' */
  path: string;
  /** absolute URL override, e.g. from a Link header */
  url?: string;
  headers?: Record<string, string>;
  json?: unknown;
  rawBody?: string | Buffer;
  /** default 'application/json; charset=utf-8'; null = omit the header */
  contentType?: string | null;
  auth?: Auth;
  /** deadline of the whole request: connect, headers and the entire body */
  timeoutMs?: number;
  /** The response oracle's own look-ups: counted, not judged again. */
  quiet?: boolean;
  /** Marks a request that breaks a client rule on purpose in a way the client cannot see (an unknown key). */
  probe?: boolean;
}

type RequestOptions = Omit<ApiRequest, 'method' | 'path' | 'json'>;

/** Extra trust for https targets: a CA certificate (PEM), or no verification at all. */
export interface TlsTrust {
  ca?: string;
  insecure?: boolean;
}

export const DEFAULT_CONTENT_TYPE = 'application/json; charset=utf-8';
/** The installation's API, every version; v6's is API_PREFIX. */
export const API_ROOT = '/index.php/api';
export const API_PREFIX = `${API_ROOT}/v6`;

const utf8 = new TextDecoder('utf-8', { fatal: true });

function setHeader(headers: Record<string, string>, name: string, value: string): void {
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() === name.toLowerCase()) delete headers[key];
  }
  headers[name] = value;
}

function splitUrl(url: string): { origin: string; pathAndQuery: string } {
  const m = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]*)([^#]*)/i.exec(url);
  if (!m) throw new TypeError(`not an absolute URL: ${url}`);
  const rest = m[2] ?? '';
  return { origin: m[1] ?? '', pathAndQuery: rest === '' ? '/' : rest.startsWith('/') ? rest : `/${rest}` };
}

/**
 * A request to a URL outside the target: never sent. Decision: the harness client is the one
 * place every request passes, so credentials go to `{target}/index.php/api/…` (the control
 * client: its control URL) and nowhere else, whatever a test, a fixture or a server's Link header
 * asks; a Link elsewhere is the server's finding (suites/harness/pages.ts, the oracle), and a
 * request that reaches this refusal is a harness error.
 */
export class OffTargetError extends Error {
  override name = 'OffTargetError';
}

/** `url` under `base` (a URL without a trailing slash): same scheme, host and port, its path below base's path, no dot segments that leave it. */
export function isUnder(url: string, base: string): boolean {
  let u: URL;
  const b = parsedBase(base);
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (b === undefined || u.origin !== b.origin || u.username !== '' || u.password !== '') return false;
  const root = b.root;
  // The URL parser has removed "." and ".." segments (also %2e forms); the text sent must not
  // hold any either (a server may resolve them where the parser did not, as with backslashes).
  const raw = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/i.exec(url)?.[1] ?? '';
  if (/(^|\/)(\.|%2e){1,2}(\/|$)/i.test(raw) || raw.includes('\\')) return false;
  return u.pathname === root || u.pathname.startsWith(`${root}/`);
}

/** The bases every request is held to (a client's target and API root: a handful per run), parsed once. */
const bases = new Map<string, { origin: string; root: string } | undefined>();

function parsedBase(base: string): { origin: string; root: string } | undefined {
  if (bases.has(base)) return bases.get(base);
  let parsed: { origin: string; root: string } | undefined;
  try {
    const b = new URL(base);
    parsed = { origin: b.origin, root: b.pathname.replace(/\/+$/, '') };
  } catch {
    parsed = undefined;
  }
  if (bases.size >= 64) bases.clear();
  bases.set(base, parsed);
  return parsed;
}

/** The response was longer than the cap; the rest was not read. */
class ResponseTooLarge extends Error {}
/** The whole request did not end in time. */
class DeadlinePassed extends Error {}

/** Transport errors as one line naming the request; the deadline and the cap name their flags. */
function describeError(e: unknown, method: string, url: string, timeoutMs: number, maxBytes: number): string {
  if (e instanceof ResponseTooLarge) {
    return `the response to ${method} ${url} exceeded the cap of ${maxBytes} bytes (--max-response-bytes); the rest was not read`;
  }
  if (
    e instanceof DeadlinePassed ||
    e instanceof undiciErrors.HeadersTimeoutError ||
    e instanceof undiciErrors.BodyTimeoutError ||
    e instanceof undiciErrors.ConnectTimeoutError
  ) {
    return `request timed out after ${timeoutMs} ms: no complete response (headers and body) to ${method} ${url} (--timeout)`;
  }
  const err = e as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.code ?? err.cause?.code;
  const message = err.message || err.cause?.message || String(e);
  return cut(code ? `${code}: ${message}` : message, 1024);
}

function errorCode(e: unknown): string | undefined {
  const err = e as { code?: string; cause?: { code?: string } } | undefined;
  return err?.code ?? err?.cause?.code;
}

/** The target's origin (scheme, host, port); the target itself when it is no URL (its requests then fail, each with its error). */
function originOf(target: string): string {
  try {
    return new URL(target).origin;
  } catch {
    return target;
  }
}

/** Our own client ended the request (closed or destroyed): nothing about the target. */
const CANCELLED = new Set(['UND_ERR_CLOSED', 'UND_ERR_DESTROYED', 'UND_ERR_ABORTED']);
/**
 * Decision (issue 39): a request lost with a kept-alive connection the target closed (no byte of
 * its answer came) is sent once more on a new connection when it is idempotent (RFC 9110
 * §9.2.2); a create only once the lists show that its unique name did not land (connections.ts
 * `landed`). Either is recorded on the exchange (`retried`).
 */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** The header that marks a deliberate departure from the client rules (clients/ledger.ts reads it). */
export const PROBE_HEADER = 'X-Pmv6-Probe';

const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE']);

/** True when a request departs from §4/§5's client rules on purpose: a test's probe, not a slip. */
function deliberate(req: ApiRequest, url: string, contentType: string | null, auth: Auth, headers: Record<string, string>): boolean {
  if (req.probe || contentType !== DEFAULT_CONTENT_TYPE || req.rawBody !== undefined) return true;
  if (auth.kind === 'none' || auth.kind === 'raw' || (auth.kind === 'hmac' && (auth.mutate !== undefined || auth.timestamp !== undefined))) return true;
  if (!METHODS.has(req.method.toUpperCase())) return true;
  const path = url.split(/[?#]/)[0] ?? '';
  if (!path.endsWith('.json') || !path.includes(`${API_PREFIX}/`)) return true;
  const size = Object.entries(headers).find(([k]) => k.toLowerCase() === 'x-page-size')?.[1];
  return size !== undefined && !(/^\d{1,4}$/.test(size) && Number(size) >= 5 && Number(size) <= 1000);
}

/** A request's body: the text sent (`bytes` decoded, or the bytes are its UTF-8), and the bytes when the test gave them. */
interface RequestBody {
  text: string;
  bytes?: Buffer;
}

function requestBody(req: ApiRequest): RequestBody | undefined {
  if (Buffer.isBuffer(req.rawBody)) return { text: req.rawBody.toString('utf8'), bytes: req.rawBody };
  const text = req.rawBody ?? (req.json === undefined ? undefined : (JSON.stringify(req.json) as string | undefined));
  if (text === undefined) return undefined;
  // The text as the target gets it: a lone surrogate goes out as U+FFFD.
  return { text: text.isWellFormed() ? text : Buffer.from(text, 'utf8').toString('utf8') };
}

/**
 * Decision (issue 38, the embedded run's memory): a request body is held once, as its text (the
 * exchange's `request.body`, the JSON.stringify of `json` itself). A text longer than PIECE_CHARS
 * goes on the wire as pieces encoded as the socket drains (a fresh stream for a resend), with its
 * Content-Length: the whole of its UTF-8 is never copied, nor handed to TLS at once. Measured
 * (the model's upload of one byte over a maximum of 10 MiB, a 14 MB body over https, the server
 * in another process): the client process's peak rose by 75-83 MB, and by 52 MB so (3 runs each;
 * with the test's base64 made as text, suites/model/files.ts).
 */
function onTheWire(body: RequestBody, headers: Record<string, string>): Buffer | (() => Readable) {
  if (body.bytes) return body.bytes;
  const { text } = body;
  if (text.length <= PIECE_CHARS) return Buffer.from(text, 'utf8');
  if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-length')) headers['content-length'] = String(Buffer.byteLength(text, 'utf8'));
  return () => Readable.from(utf8Pieces(text), { objectMode: false });
}

/** The buffer a body without Content-Length starts in; it doubles as the body grows. */
const FIRST_BUFFER = 16 * 1024;

/** A response read whole: its status, headers (undici's parsing, as `request()` gives them) and body. */
interface Answer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
}

/**
 * One request's handler: the answer's body read into one buffer of at most `max` bytes; a longer
 * body (announced or sent) is abandoned with ResponseTooLarge. Decision: the body goes into one
 * buffer, of the announced length or grown by doubling, not a list of chunks joined at the end: a
 * run reads thousands of replies, and fewer short-lived buffers of odd sizes keep the allocator's
 * heap from fragmenting (issue 24). Decision (issue 38): a handler of our own instead of undici's
 * `request()`, which hands the body over as a stream (an AsyncResource, a Readable and its async
 * iterator for each request: 6% of a run's main thread), read here into the buffer all the same.
 */
class Capped implements Dispatcher.DispatchHandler {
  readonly answer: Promise<Answer>;
  /** Headers came: the request reached the target, and an error now is the body's. */
  answered = false;
  private resolve!: (a: Answer) => void;
  private reject!: (e: unknown) => void;
  private controller: Dispatcher.DispatchController | undefined;
  private reason: Error | undefined;
  private statusCode = 0;
  private headers: Record<string, string | string[] | undefined> = {};
  private into = Buffer.alloc(0);
  private total = 0;

  constructor(
    private readonly max: number,
    private readonly heard: (headers: Record<string, string | string[] | undefined>) => void,
  ) {
    this.answer = new Promise<Answer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** Ends the request with `reason` now, or as soon as it is given a connection (as undici's `signal`). */
  abort(reason: Error): void {
    this.reason ??= reason;
    this.controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.reason) controller.abort(this.reason);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    // 1xx interim answers are not the answer.
    if (statusCode < 200) return;
    this.answered = true;
    this.statusCode = statusCode;
    this.headers = headers;
    this.heard(headers);
    const length = headers['content-length'];
    const announced = Number(Array.isArray(length) ? length[0] : length);
    this.into = Buffer.allocUnsafe(Number.isSafeInteger(announced) && announced >= 0 ? Math.min(announced, this.max) : Math.min(FIRST_BUFFER, this.max));
    if (announced > this.max) controller.abort(new ResponseTooLarge());
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const total = this.total;
    if (total + chunk.length > this.max) {
      controller.abort(new ResponseTooLarge());
      return;
    }
    if (total + chunk.length > this.into.length) {
      const larger = Buffer.allocUnsafe(Math.min(this.max, Math.max(this.into.length * 2, total + chunk.length)));
      this.into.copy(larger, 0, 0, total);
      this.into = larger;
    }
    chunk.copy(this.into, total);
    this.total = total + chunk.length;
  }

  onResponseEnd(): void {
    this.resolve({ statusCode: this.statusCode, headers: this.headers, bytes: this.into.subarray(0, this.total) });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.reject(error);
  }
}

/** The run's Admin: over HTTP Basic, or over HMAC when the target allows HMAC only (RunConfig.signIn). */
export function adminAuth(config: Pick<RunConfig, 'user' | 'password' | 'hmac' | 'signIn'>): Auth {
  return config.signIn === 'hmac' && config.hmac
    ? { kind: 'hmac', publicKey: config.hmac.publicKey, privateKey: config.hmac.privateKey }
    : { kind: 'basic', user: config.user, password: config.password };
}

export class ApiClient {
  readonly target: string;
  readonly auth: Auth;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  /** Refuse (throw ReadOnlyError) every method but GET, HEAD and OPTIONS: --read-only runs. */
  readonly readOnly: boolean;
  /**
   * Set when the run signs in with HMAC only (RunConfig.signIn): a request over HTTP Basic is
   * never sent, and the check ends skipped-unverifiable with this reason.
   */
  readonly basicRefused: string | undefined;
  /** 'control' for the control protocol's client: the oracle reads it for settings, never judges it. */
  readonly channel: Channel;
  /** The pool of connections; derived clients share it. */
  readonly connections: Connections;
  private readonly ownsAgent: boolean;

  constructor(
    opts: {
      target: string;
      auth: Auth;
      timeoutMs?: number;
      maxResponseBytes?: number;
      tls?: TlsTrust;
      readOnly?: boolean;
      channel?: Channel;
      basicRefused?: string | undefined;
    },
    shared?: Connections,
  ) {
    this.basicRefused = opts.basicRefused;
    this.target = opts.target.replace(/\/+$/, '');
    this.auth = opts.auth;
    this.channel = opts.channel ?? 'api';
    this.readOnly = opts.readOnly ?? false;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.maxResponseBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const pool = {
      origin: originOf(this.target),
      timeoutMs: this.timeoutMs,
      ...(opts.tls?.ca ? { ca: opts.tls.ca } : {}),
      ...(opts.tls?.insecure ? { insecure: true } : {}),
    };
    const ofRun = shared ? undefined : runPool(pool);
    this.ownsAgent = !shared && !ofRun;
    this.connections = shared ?? ofRun ?? new Connections(pool);
  }

  /** Decision: derived clients share this client's connection pool; only the root client closes it. */
  withAuth(auth: Auth): ApiClient {
    return new ApiClient(
      {
        target: this.target,
        auth,
        timeoutMs: this.timeoutMs,
        maxResponseBytes: this.maxResponseBytes,
        readOnly: this.readOnly,
        channel: this.channel,
        basicRefused: this.basicRefused,
      },
      this.connections,
    );
  }

  apiUrl(path: string): string {
    return `${this.target}${API_PREFIX}${path.startsWith('/') ? path : `/${path}`}`;
  }

  async request(req: ApiRequest): Promise<Exchange> {
    if (this.basicRefused !== undefined && (req.auth ?? this.auth).kind === 'basic') throw new PreconditionError(this.basicRefused);
    if (this.readOnly && !['GET', 'HEAD', 'OPTIONS'].includes(req.method.toUpperCase())) {
      throw new ReadOnlyError(`the check would send ${req.method} ${req.url ?? this.apiUrl(req.path)}`);
    }
    // Ownership (suites/harness/ownership.ts): a write to an id the run did not verify is never
    // sent; the creations it names still pending are read back first.
    const guardBase = this.channel === 'control' ? this.target : `${this.target}${API_PREFIX}`;
    const refused = (await activeLedger()?.settleFor(req.method, req.url ?? this.apiUrl(req.path), guardBase, req.json ?? req.rawBody)) ?? [];
    // The test's object turned out not to be the run's: its setup failed, with the cause.
    for (const v of refused)
      if ('foreign' in v) throw new SetupError(`harness: ${req.method.toUpperCase()} ${cut(req.path, 200)} not sent: ${foreignText(v.foreign)}`);
    const url = guardRequest(req.method, req.url ?? this.apiUrl(req.path), guardBase, req.json ?? req.rawBody);
    const sent = requestBody(req);
    const bodyText = sent?.text ?? '';

    const headers: Record<string, string> = {};
    const contentType = req.contentType === undefined ? DEFAULT_CONTENT_TYPE : req.contentType;
    if (contentType !== null) headers['Content-Type'] = contentType;

    const auth = req.auth ?? this.auth;
    switch (auth.kind) {
      case 'basic':
        headers['Authorization'] = basicAuthorization(auth.user, auth.password);
        break;
      case 'hmac': {
        const parts = {
          uri: signedUri(url),
          timestamp: String(auth.timestamp ?? Math.floor(Date.now() / 1000)),
          body: bodyText,
        };
        let hash = hmacSign({ privateKey: auth.privateKey, uri: parts.uri, timestamp: parts.timestamp, body: sent?.bytes ?? bodyText });
        let timestamp = parts.timestamp;
        if (auth.mutate) {
          const changed = auth.mutate({ ...parts, hash });
          const next = { ...parts, ...changed };
          timestamp = next.timestamp;
          if (changed.hash !== undefined) hash = changed.hash;
          else if (changed.uri !== undefined || changed.timestamp !== undefined || changed.body !== undefined) {
            hash = hmacSign({ privateKey: auth.privateKey, uri: next.uri, timestamp: next.timestamp, body: next.body });
          }
        }
        headers['X-Public-Key'] = auth.publicKey;
        headers['X-Request-Hash'] = hash;
        headers['X-Request-Timestamp'] = timestamp;
        break;
      }
      case 'raw':
        for (const [k, v] of Object.entries(auth.headers)) setHeader(headers, k, v);
        break;
      case 'none':
        break;
    }
    for (const [k, v] of Object.entries(req.headers ?? {})) setHeader(headers, k, v);
    // A request that breaks a client rule of the spec on purpose says so, for a client-checking
    // server (pmv6 clients serve): it is then counted apart, never as the harness's own mistake.
    if (this.channel === 'api' && deliberate(req, url, contentType, auth, headers)) headers[PROBE_HEADER] = '1';

    const exchange: Exchange = { request: { method: req.method, url, headers: { ...headers } }, durationMs: 0 };
    if (sent !== undefined) exchange.request.body = bodyText;
    const body = sent === undefined ? undefined : onTheWire(sent, headers);

    // The gate (suites/harness/gate.ts) keeps --concurrency and the exclusive sections; the
    // slot is held until the listeners have judged the exchange. Oracle look-ups (quiet) ride on
    // the slot of the exchange they judge.
    const release = req.quiet ? undefined : await activeGate()?.admit();
    // A GET on its way is announced (traffic.ts onSending): a listener judging another answer may
    // wait for this one instead of asking the same again. Said to be heard once its own listeners have run.
    const heard = !req.quiet && req.method.toUpperCase() === 'GET' ? announceSending({ exchange, auth, channel: this.channel }) : undefined;
    try {
      return await this.send(req, url, exchange, body, headers, auth);
    } finally {
      heard?.();
      release?.();
    }
  }

  private async send(
    req: ApiRequest,
    url: string,
    exchange: Exchange,
    body: Buffer | (() => Readable) | undefined,
    headers: Record<string, string>,
    auth: Auth,
  ): Promise<Exchange> {
    // Decision: the installation's API of every version (VER-03 asks v1..v5 for version.json);
    // Link targets are held to v6's root before any request (suites/harness/pages.ts).
    const base = this.channel === 'control' ? this.target : `${this.target}${API_ROOT}`;
    if (!isUnder(url, base)) throw new OffTargetError(`harness: ${req.method} ${cut(url, 300)} not sent: it is outside the target (${base}/)`);
    const mark = writeMark();
    const writeEnded = requestStarting(req.method);
    const timeoutMs = req.timeoutMs ?? this.timeoutMs;
    const started = performance.now();
    // One deadline for the whole request: undici's own timeouts measure only the gaps between chunks.
    let timedOut: DeadlinePassed | undefined;
    let handler: Capped | undefined;
    const timer = setTimeout(() => {
      timedOut = new DeadlinePassed();
      handler?.abort(timedOut);
    }, timeoutMs);
    const answered = (h: Record<string, string | string[] | undefined>) => this.connections.answered(h);
    try {
      const { origin, pathAndQuery } = splitUrl(url);
      // Decision (issue 39): a request that is not idempotent goes on the careful pool, creations
      // of the run too: their resend waits for a reading of the lists, which a probe's
      // credentials (a 401 expected) cannot make, and a reading that fails sends nothing again.
      const careful = !IDEMPOTENT.has(req.method.toUpperCase());
      const options: Dispatcher.DispatchOptions = {
        origin,
        path: pathAndQuery,
        method: req.method,
        headers,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      };
      // Each attempt its own body: a stream is read once.
      const attempt = (): Dispatcher.DispatchOptions => (body === undefined ? options : { ...options, body: Buffer.isBuffer(body) ? body : body() });
      let res: Answer;
      const first = new Capped(this.maxResponseBytes, answered);
      handler = first;
      try {
        (careful ? this.connections.careful : this.connections.agent).dispatch(attempt(), first);
        res = await first.answer;
      } catch (e) {
        // Only a request that got no answer may be sent again (an error in its body is the body's).
        if (timedOut || first.answered || !(await this.mayResend(req, e, exchange))) throw e;
        const again = new Capped(this.maxResponseBytes, answered);
        handler = again;
        if (timedOut) again.abort(timedOut);
        this.connections.once(attempt(), again);
        res = await again.answer;
      }
      const bytes = res.bytes;
      let text: string;
      let validUtf8 = true;
      try {
        text = utf8.decode(bytes);
      } catch {
        validUtf8 = false;
        text = bytes.toString('utf8');
      }
      const responseHeaders: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) responseHeaders[k] = v;
      exchange.response = { status: res.statusCode, headers: responseHeaders, body: text, validUtf8 };
      if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) exchange.response.bom = true;
      const parsed = parseJsonBody(text);
      if (parsed.tooDeep) exchange.jsonTooDeep = true;
      else if ('json' in parsed) exchange.json = parsed.json;
    } catch (e) {
      exchange.error = describeError(timedOut ?? e, req.method, url, timeoutMs, this.maxResponseBytes);
      if (!timedOut && CANCELLED.has(errorCode(e) ?? '')) exchange.cancelled = true;
    } finally {
      clearTimeout(timer);
      writeEnded();
    }
    exchange.durationMs = Math.round(performance.now() - started);
    // Every answer the run gets may show a pending creation with the run's name (before slim: ids exactly as sent).
    const apiBase = `${this.target}${API_PREFIX}/`;
    if (this.channel === 'api' && exchange.response && url.startsWith(apiBase)) activeLedger()?.observe(url.slice(apiBase.length - 1), exchange);
    await emitExchange({ exchange, channel: this.channel, auth, client: this, quiet: req.quiet ?? false, mark });
    slim(exchange);
    return exchange;
  }

  /**
   * Whether a request whose first attempt failed is sent again (IDEMPOTENT's decision); when it
   * is, the exchange records why.
   */
  private async mayResend(req: ApiRequest, e: unknown, exchange: Exchange): Promise<boolean> {
    // Nothing of the request was written: it goes out once, on a new connection.
    if (e instanceof StaleConnection) {
      this.connections.stale++;
      return true;
    }
    if (!this.connections.lostOnReused(e)) return false;
    const method = req.method.toUpperCase();
    const cause = `${errorCode(e)}: the kept-alive connection closed before any byte of the answer`;
    if (IDEMPOTENT.has(method)) {
      exchange.retried = `sent again on a new connection (${cause})`;
    } else {
      if (method !== 'POST' || req.url !== undefined || !creationName(req.path, req.json)) return false;
      const read = (path: string, headers: Record<string, string>) => this.request({ method: 'GET', path, headers, quiet: true });
      const found = await landed(req.path, req.json, read).catch(() => undefined);
      if (found !== false) return false;
      exchange.retried = `sent again on a new connection (${cause}); the lists did not show its name, so the first did not land`;
    }
    this.connections.retried++;
    return true;
  }

  get(path: string, opts: RequestOptions = {}): Promise<Exchange> {
    return this.request({ ...opts, method: 'GET', path });
  }

  post(path: string, json?: unknown, opts: RequestOptions = {}): Promise<Exchange> {
    return this.request({ ...opts, method: 'POST', path, json });
  }

  put(path: string, json?: unknown, opts: RequestOptions = {}): Promise<Exchange> {
    return this.request({ ...opts, method: 'PUT', path, json });
  }

  delete(path: string, opts: RequestOptions = {}): Promise<Exchange> {
    return this.request({ ...opts, method: 'DELETE', path });
  }

  async close(): Promise<void> {
    if (this.ownsAgent) await this.connections.close();
  }
}
