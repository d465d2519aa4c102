// The load engine's HTTP/1.1 client: keep-alive connections to one origin, one request at a time
// on each. Decision: not undici. Measured on loopback (load/bench), undici's dispatch cost about
// 22 µs of CPU per 20-item page and 190 µs per 1000-item page, mostly copying every body into its
// parser; this client reads plain-http responses into one reused buffer (net `onread`), parses
// only the head, and copies a body only when the iteration reads it.
import { connect as netConnect, type Socket } from 'node:net';
import { createSecureContext, type SecureContext, connect as tlsConnect } from 'node:tls';
import { IdleLimit } from '../../core/keep-alive.ts';

export interface Http1Options {
  /** base URL; requests go to this origin only */
  origin: string;
  connections: number;
  /** deadline of a whole request: queueing, connecting, sending, the head and the whole body */
  timeoutMs: number;
  /** the most bytes read for one response (head and body) */
  maxResponseBytes: number;
  ca?: string;
  insecure?: boolean;
}

export interface Http1Reply {
  status: number;
  /** every Link header, joined by ", " */
  link: string | undefined;
  body: string | undefined;
  /** bytes read for the response, head included */
  size: number;
}

export class ResponseTooLarge extends Error {
  override name = 'ResponseTooLarge';
}
export class RequestTimeout extends Error {
  override name = 'RequestTimeout';
}
export class ConnectionError extends Error {
  override name = 'ConnectionError';
}

const READ_BUFFER = 1 << 20;
const MAX_HEAD = 64 * 1024;
const CRLFCRLF = Buffer.from('\r\n\r\n');
/**
 * Decision: the head of a request without a body is encoded once and its Buffer written again for
 * the same method, URL and header lines (a walk asks for the same few pages over and over). At
 * most this many heads are kept; then the cache starts again, so one-off URLs cannot grow it.
 */
const HEAD_CACHE_SIZE = 1024;

export type Done = (error: Error | undefined, reply: Http1Reply | undefined) => void;

interface Pending {
  method: string;
  url: string;
  /** the request head, encoded (no body) or as text to send with the body */
  head: Buffer | string;
  body: string;
  readBody: boolean;
  deadline: number;
  done: Done;
  retried: boolean;
}

enum State {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailer,
  UntilClose,
}

class Connection {
  readonly socket: Socket;
  current: Pending | undefined;
  idleSince = 0;
  private state = State.Head;
  private head: Buffer | undefined;
  private status = 0;
  private link: string | undefined;
  private keepAlive = true;
  private remaining = 0;
  private size = 0;
  private received = 0;
  private readonly chunks: Buffer[] = [];
  /** a body to be read whose length the head announced: its bytes are copied here once, not collected in chunks */
  private body: Buffer | undefined;
  private line = '';
  private closed = false;
  /** a response was read on this connection before: a failure before any byte of the next may be a stale keep-alive */
  private usedBefore = false;

  constructor(
    private readonly pool: Http1Pool,
    readBuffer: Buffer | undefined,
  ) {
    const u = pool.url;
    const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (u.protocol === 'https:') {
      const o = pool.options;
      this.socket = tlsConnect({
        host,
        port,
        servername: /^[\d.:]+$/.test(host) ? undefined : host,
        ...(pool.secureContext ? { secureContext: pool.secureContext } : {}),
        rejectUnauthorized: !o.insecure,
      });
      this.socket.on('data', (chunk: Buffer) => this.onData(chunk, false));
    } else {
      this.socket = netConnect({
        host,
        port,
        onread: { buffer: readBuffer!, callback: (n: number, buf: Uint8Array) => this.onData(buf as Buffer, true, n) },
      });
    }
    this.socket.setNoDelay(true);
    this.socket.on('error', (e) => this.fail(new ConnectionError(e.message)));
    this.socket.on('close', () => this.fail(new ConnectionError('the server closed the connection')));
    this.socket.on('end', () => {
      if (this.current && this.state === State.UntilClose) this.finish();
      // The target closed a connection that sat idle: its idle timeout, learned (core/keep-alive.ts).
      else if (!this.current && this.usedBefore) pool.idleLimit.closedAfter(performance.now() - this.idleSince);
    });
  }

  send(p: Pending): void {
    this.current = p;
    this.state = State.Head;
    this.head = undefined;
    this.link = undefined;
    this.size = 0;
    this.received = 0;
    this.chunks.length = 0;
    this.body = undefined;
    this.socket.write(p.body === '' ? p.head : `${p.head}${p.body}`);
  }

  destroy(e: Error): void {
    this.fail(e);
    this.socket.destroy();
  }

  private fail(e: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.pool.dropConnection(this);
    const p = this.current;
    this.current = undefined;
    if (p) this.pool.failed(p, e, this.received === 0 && this.usedBefore);
    this.socket.destroy();
  }

  private onData(buf: Buffer, shared: boolean, n = buf.length): boolean {
    const p = this.current;
    if (!p) {
      this.destroy(new ConnectionError('bytes from the server with no request outstanding'));
      return false;
    }
    this.received += n;
    if (this.received > this.pool.options.maxResponseBytes) {
      this.destroy(new ResponseTooLarge(`the response to ${p.method} ${p.url} exceeded the cap of ${this.pool.options.maxResponseBytes} bytes`));
      return false;
    }
    let at = 0;
    while (at < n && this.current === p) {
      switch (this.state) {
        case State.Head: {
          // The head runs in `data` from `start` to `limit`: the head read so far followed by this
          // read from `at` (buf[at] is data[base]), or, with nothing read before, this read itself.
          const base = this.head ? this.head.length : 0;
          const data = this.head ? Buffer.concat([this.head, buf.subarray(at, n)]) : buf;
          const start = this.head ? 0 : at;
          const limit = this.head ? data.length : n;
          let end = data.indexOf(CRLFCRLF, this.head ? Math.max(0, base - 3) : at);
          if (end + 4 > limit) end = -1;
          if (end < 0) {
            if (limit - start > MAX_HEAD) {
              this.destroy(new ConnectionError(`a response head of more than ${MAX_HEAD} bytes from ${p.url}`));
              return false;
            }
            this.head = this.head ? data : shared ? Buffer.from(buf.subarray(at, n)) : buf.subarray(at, n);
            return true;
          }
          this.head = undefined;
          if (!this.parseHead(data, start, end, p)) return false;
          at += end + 4 - start - base;
          if ((this.state as State) === State.Length && this.remaining === 0) this.finish();
          break;
        }
        case State.Length: {
          const take = Math.min(this.remaining, n - at);
          this.keep(buf, at, take, shared);
          at += take;
          this.remaining -= take;
          if (this.remaining === 0) this.finish();
          break;
        }
        case State.UntilClose: {
          this.keep(buf, at, n - at, shared);
          at = n;
          break;
        }
        case State.ChunkSize:
        case State.Trailer: {
          const nl = buf.indexOf(10, at);
          const stop = nl < 0 || nl >= n ? n : nl;
          this.line += buf.toString('latin1', at, stop);
          if (this.line.length > 4096) {
            this.destroy(new ConnectionError(`a chunk-size or trailer line of more than 4096 bytes from ${p.url}`));
            return false;
          }
          if (stop === n) return true;
          at = stop + 1;
          const line = this.line.replace(/\r$/, '');
          this.line = '';
          if (this.state === State.Trailer) {
            if (line === '') this.finish();
            break;
          }
          const size = parseInt(line.split(';')[0]!.trim(), 16);
          if (!Number.isFinite(size) || size < 0) {
            this.destroy(new ConnectionError(`a bad chunk size "${line.slice(0, 40)}" from ${p.url}`));
            return false;
          }
          this.remaining = size;
          this.state = size === 0 ? State.Trailer : State.ChunkData;
          break;
        }
        case State.ChunkData: {
          const take = Math.min(this.remaining, n - at);
          this.keep(buf, at, take, shared);
          at += take;
          this.remaining -= take;
          if (this.remaining === 0) {
            this.state = State.ChunkDataEnd;
            this.remaining = 2;
          }
          break;
        }
        case State.ChunkDataEnd: {
          const take = Math.min(this.remaining, n - at);
          at += take;
          this.remaining -= take;
          if (this.remaining === 0) this.state = State.ChunkSize;
          break;
        }
      }
    }
    return true;
  }

  private keep(buf: Buffer, at: number, len: number, shared: boolean): void {
    if (len <= 0) return;
    if (this.body !== undefined) buf.copy(this.body, this.size, at, at + len);
    else if (this.current!.readBody) this.chunks.push(shared ? Buffer.from(buf.subarray(at, at + len)) : buf.subarray(at, at + len));
    this.size += len;
  }

  /**
   * Status line and the headers the engine needs, read from the bytes of the head (`data` from
   * `start` up to `end`, the blank line); false when the head is unusable (the connection is gone).
   */
  private parseHead(data: Buffer, start: number, end: number, p: Pending): boolean {
    const status = statusOf(data, start, end);
    if (status < 0) {
      this.destroy(new ConnectionError(`not an HTTP/1.x response from ${p.url}`));
      return false;
    }
    let length = -1;
    let chunked = false;
    let close = data[start + 7] === 48;
    let link: string | undefined;
    let from = data.indexOf(13, start);
    while (from >= 0 && from < end) {
      const lineStart = from + 2;
      let lineEnd = data.indexOf(13, lineStart);
      if (lineEnd < 0 || lineEnd > end) lineEnd = end;
      const header = headerNamed(data, lineStart, lineEnd);
      if (header !== Header.Other) {
        const value = headerValue(data, lineStart + HEADER_NAMES[header]!.length + 1, lineEnd);
        if (header === Header.ContentLength) length = Number(value);
        else if (header === Header.TransferEncoding) chunked = /(^|,)\s*chunked\s*$/i.test(value);
        else if (header === Header.KeepAlive) this.pool.idleLimit.header(value);
        else if (header === Header.Connection) {
          close = isKeepAlive(value) ? false : /\bclose\b/i.test(value) ? true : /\bkeep-alive\b/i.test(value) ? false : close;
        } else link = link === undefined ? value : `${link}, ${value}`;
      }
      from = lineEnd;
    }
    if (status < 200) return true;
    this.status = status;
    this.link = link;
    this.keepAlive = !close;
    if (status === 204 || status === 304 || p.method === 'HEAD') {
      this.state = State.Length;
      this.remaining = 0;
    } else if (chunked) this.state = State.ChunkSize;
    else if (length >= 0 && Number.isSafeInteger(length)) {
      this.state = State.Length;
      this.remaining = length;
      if (length > this.pool.options.maxResponseBytes) {
        this.destroy(
          new ResponseTooLarge(`the response to ${p.method} ${p.url} announced ${length} bytes, above the cap of ${this.pool.options.maxResponseBytes} bytes`),
        );
        return false;
      }
      if (p.readBody && length > 0) this.body = Buffer.allocUnsafe(length);
    } else {
      this.state = State.UntilClose;
      this.keepAlive = false;
    }
    return true;
  }

  private finish(): void {
    const p = this.current!;
    this.current = undefined;
    let body: string | undefined;
    if (p.readBody) body = this.body !== undefined ? this.body.toString('utf8', 0, this.size) : Buffer.concat(this.chunks, this.size).toString('utf8');
    this.chunks.length = 0;
    this.body = undefined;
    this.usedBefore = true;
    const reply: Http1Reply = { status: this.status, link: this.link, body, size: this.received };
    if (this.keepAlive && this.state !== State.UntilClose) this.pool.release(this);
    else {
      this.closed = true;
      this.pool.dropConnection(this);
      this.socket.destroy();
      this.pool.pump();
    }
    p.done(undefined, reply);
  }
}

const HTTP1 = 'HTTP/1.';

/** The status of `HTTP/1.x NNN …` in `head` from `start` (up to `end`), or -1. */
function statusOf(head: Buffer, start: number, end: number): number {
  if (end - start < 12 || head[start + 8] !== 32) return -1;
  for (let i = 0; i < 7; i++) if (head[start + i] !== HTTP1.charCodeAt(i)) return -1;
  const minor = head[start + 7];
  if (minor !== 48 && minor !== 49) return -1;
  let status = 0;
  for (let i = 9; i < 12; i++) {
    const d = head[start + i]! - 48;
    if (d < 0 || d > 9) return -1;
    status = status * 10 + d;
  }
  return end - start === 12 || head[start + 12] === 32 || head[start + 12] === 13 ? status : -1;
}

/** A header's value: the bytes from `from` to `to` without the optional whitespace (RFC 9110 §5.6.3: spaces and tabs) around it. */
function headerValue(head: Buffer, from: number, to: number): string {
  while (from < to && (head[from] === 32 || head[from] === 9)) from++;
  while (to > from && (head[to - 1] === 32 || head[to - 1] === 9)) to--;
  return head.toString('latin1', from, to);
}

/** The response headers the engine reads; every other header is skipped unread. */
enum Header {
  ContentLength,
  TransferEncoding,
  Connection,
  KeepAlive,
  Link,
  Other,
}
const HEADER_NAMES = ['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'link'];

/** Which of the engine's headers the line `head[start, end)` is, by its name before the colon (any case). */
function headerNamed(head: Buffer, start: number, end: number): Header {
  for (let h = Header.ContentLength; h < Header.Other; h++) {
    const name = HEADER_NAMES[h]!;
    const colon = start + name.length;
    if (colon >= end || head[colon] !== 58) continue;
    let i = 0;
    while (i < name.length && (head[start + i]! | 32) === name.charCodeAt(i)) i++;
    if (i === name.length) return h;
  }
  return Header.Other;
}

/** `keep-alive`, in any case: the value nearly every server sends, decided without a regular expression. */
function isKeepAlive(value: string): boolean {
  return value.length === 10 && (value === 'keep-alive' || value.toLowerCase() === 'keep-alive');
}

/** Keep-alive connections to one origin; at most `connections` at once, the rest queue. */
export class Http1Pool {
  readonly url: URL;
  private readonly hostHeader: string;
  private readonly idle: Connection[] = [];
  private readonly busy = new Set<Connection>();
  private readonly queue: Pending[] = [];
  private readonly readBuffer: Buffer | undefined;
  private readonly heads = new Map<string, { method: string; headers: string; head: Buffer }>();
  private readonly sweeper: NodeJS.Timeout;
  private closing = false;
  /** The trusted CA's TLS context, made once for every connection (issue 38). */
  readonly secureContext: SecureContext | undefined;
  /** How long a connection may sit idle before it is not reused (learned from the target). */
  readonly idleLimit = new IdleLimit();
  /** Requests sent again after a kept-alive connection closed under them (the summary's count). */
  retried = 0;

  constructor(readonly options: Http1Options) {
    this.url = new URL(options.origin);
    if (this.url.protocol !== 'http:' && this.url.protocol !== 'https:') throw new Error(`not an http(s) URL: ${options.origin}`);
    this.hostHeader = this.url.host;
    this.readBuffer = this.url.protocol === 'http:' ? Buffer.allocUnsafe(READ_BUFFER) : undefined;
    this.secureContext = this.url.protocol === 'https:' && options.ca !== undefined ? createSecureContext({ ca: options.ca }) : undefined;
    this.sweeper = setInterval(() => this.sweep(), Math.max(10, Math.min(250, options.timeoutMs / 4)));
    this.sweeper.unref();
  }

  /** One exchange; `done` is called once, with the reply or the error. `headers` are complete lines, each ending in CRLF; the deadline runs from `startedAt` (performance.now()). */
  send(method: string, url: string, headers: string, body: string, readBody: boolean, startedAt: number, done: Done): void {
    const origin = this.url.origin;
    if (!url.startsWith(origin) || (url.length > origin.length && url[origin.length] !== '/')) {
      done(new ConnectionError(`${url} is outside the target ${origin}`), undefined);
      return;
    }
    const head = body === '' ? this.encodedHead(method, url, headers) : this.headText(method, url, headers, body);
    this.start({ method, url, head, body, readBody, deadline: startedAt + this.options.timeoutMs, done, retried: false }, startedAt);
  }

  private headText(method: string, url: string, headers: string, body: string): string {
    const path = url.length === this.url.origin.length ? '/' : url.slice(this.url.origin.length);
    const length = body === '' ? (method === 'POST' || method === 'PUT' ? 'content-length: 0\r\n' : '') : `content-length: ${Buffer.byteLength(body)}\r\n`;
    return `${method} ${path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\n${headers}${length}\r\n`;
  }

  private encodedHead(method: string, url: string, headers: string): Buffer {
    const known = this.heads.get(url);
    if (known !== undefined && known.method === method && known.headers === headers) return known.head;
    const head = Buffer.from(this.headText(method, url, headers, ''));
    if (this.heads.size >= HEAD_CACHE_SIZE) this.heads.clear();
    this.heads.set(url, { method, headers, head });
    return head;
  }

  request(method: string, url: string, headers: string, body: string, readBody: boolean, startedAt = performance.now()): Promise<Http1Reply> {
    return new Promise((resolve, reject) => this.send(method, url, headers, body, readBody, startedAt, (e, r) => (e ? reject(e) : resolve(r!))));
  }

  private start(p: Pending, now = performance.now()): void {
    if (this.closing) {
      p.done(new ConnectionError('the client is closed'), undefined);
      return;
    }
    let c = this.idle.pop();
    while (c && now - c.idleSince > this.idleLimit.ms) {
      c.destroy(new ConnectionError('idle'));
      c = this.idle.pop();
    }
    if (!c) {
      if (this.busy.size >= this.options.connections) {
        this.queue.push(p);
        return;
      }
      c = new Connection(this, this.readBuffer);
    }
    this.busy.add(c);
    c.send(p);
  }

  release(c: Connection): void {
    this.busy.delete(c);
    c.idleSince = performance.now();
    this.idle.push(c);
    this.pump();
  }

  dropConnection(c: Connection): void {
    this.busy.delete(c);
    const i = this.idle.indexOf(c);
    if (i >= 0) this.idle.splice(i, 1);
  }

  pump(): void {
    const next = this.queue.shift();
    if (next) this.start(next);
  }

  /**
   * A request on a kept-alive connection that the server had already closed (no byte of its
   * answer) is sent once more on a new one, unless it is a POST: the transport's to absorb, and
   * counted (`retried`).
   */
  failed(p: Pending, e: Error, staleConnection: boolean): void {
    if (staleConnection && !p.retried && p.method !== 'POST' && e instanceof ConnectionError && !this.closing) {
      p.retried = true;
      this.retried++;
      this.start(p);
    } else p.done(e, undefined);
    this.pump();
  }

  private sweep(): void {
    const now = performance.now();
    for (const c of this.busy) {
      const p = c.current;
      if (p && now > p.deadline) c.destroy(new RequestTimeout(`no complete response to ${p.method} ${p.url} within ${this.options.timeoutMs} ms`));
    }
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const p = this.queue[i]!;
      if (now > p.deadline) {
        this.queue.splice(i, 1);
        p.done(new RequestTimeout(`no connection for ${p.method} ${p.url} within ${this.options.timeoutMs} ms`), undefined);
      }
    }
  }

  close(): void {
    this.closing = true;
    clearInterval(this.sweeper);
    for (const p of this.queue.splice(0)) p.done(new ConnectionError('the client is closed'), undefined);
    for (const c of [...this.busy, ...this.idle]) c.destroy(new ConnectionError('the client is closed'));
  }
}
