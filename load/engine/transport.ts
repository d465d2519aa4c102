// The engine's side of `Io` (load/k6/lib/iterations.js): each request signed or authorised, sent
// over the HTTP/1.1 pool, timed and recorded; the request bound and the end of the run, after
// which only `cleanup` requests still go out.
import { performance } from 'node:perf_hooks';
import { signedUri } from '../../core/signed-uri.js';
import { basicAuthorization, hmacHeaders } from '../../core/signers.ts';
import type { Io, Method, Reply, SendOptions } from '../k6/lib/iterations.js';
import { Http1Pool, ResponseTooLarge } from './http1.ts';
import type { RunMetrics } from './metrics.ts';
import type { EndpointStats } from './stats.ts';
import type { Credentials } from './types.ts';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Thrown from `send` once the run has ended or reached its request bound: the iteration stops there. */
export class Stopped extends Error {}

export interface TransportOptions {
  /** base URL of the installation */
  target: string;
  credentials: Credentials;
  auth: 'basic' | 'hmac';
  connections: number;
  timeoutMs: number;
  maxResponseBytes: number;
  maxRequests: number;
  /** parse and check one list-page body in this many */
  sampleEvery: number;
  ca?: string;
  insecure?: boolean;
}

export interface Transport {
  io: Io;
  /** `io.send`, typed as the promise it always is here */
  send: (method: Method, url: string, o: SendOptions) => Promise<Reply>;
  /** true once the run has ended, or a response broke the byte cap */
  readonly stopped: boolean;
  /** the response beyond the byte cap that ended the run, if one did */
  readonly fatal: Error | undefined;
  /** requests sent again on a new connection after a kept-alive one closed under them */
  readonly retried: number;
  stop(): void;
  close(): void;
}

/** The caller has checked that HMAC credentials exist when `auth` is `hmac`. */
export function createTransport(opts: TransportOptions, metrics: RunMetrics): Transport {
  const creds = opts.credentials;
  const base = opts.target.replace(/\/+$/, '');
  const api = `${base}/index.php/api/v6`;
  const pool = new Http1Pool({
    origin: base,
    connections: opts.connections,
    timeoutMs: opts.timeoutMs,
    maxResponseBytes: opts.maxResponseBytes,
    ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
    ...(opts.insecure ? { insecure: true } : {}),
  });
  // Credentials go only below the API root (iterations.js `onTarget` keeps Link targets there;
  // this exact-prefix test is the transport's own, on every request).
  const apiSlash = `${api}/`;
  const offTarget = (url: string): boolean => !url.startsWith(apiSlash) || url.includes('/.') || url.includes('\\') || (url.includes('%2') && /%2e/i.test(url));
  let stopped = false;
  let fatal: Error | undefined;
  let pageResponses = 0;

  // Basic authorization and a page size make the same lines on every request: built once per page size.
  const basicLines = `authorization: ${basicAuthorization(creds.user, creds.password)}\r\ncontent-type: ${JSON_CONTENT_TYPE}\r\n`;
  const basicLinesBySize = new Map<number | undefined, string>();
  function headerLines(url: string, body: string, pageSize: number | undefined): string {
    const sizeLine = pageSize !== undefined ? `x-page-size: ${pageSize}\r\n` : '';
    if (opts.auth === 'basic') {
      let lines = basicLinesBySize.get(pageSize);
      if (lines === undefined) basicLinesBySize.set(pageSize, (lines = basicLines + sizeLine));
      return lines;
    }
    const h = creds.hmac!;
    const signed = hmacHeaders({ publicKey: h.publicKey, privateKey: h.privateKey, uri: signedUri(url), timestamp: Math.floor(Date.now() / 1000), body });
    let lines = `content-type: ${JSON_CONTENT_TYPE}\r\n`;
    for (const [k, v] of Object.entries(signed)) lines += `${k}: ${v}\r\n`;
    return lines + sizeLine;
  }

  function answered(stats: EndpointStats, t0: number, reply: Reply, size: number): Reply {
    metrics.record(stats, t0, reply.status, size);
    return reply;
  }

  function unanswered(stats: EndpointStats, t0: number, name: string, e: unknown): Reply {
    if (e instanceof ResponseTooLarge && fatal === undefined) {
      fatal = e;
      stopped = true;
    }
    metrics.transportError(e instanceof Error ? e.name : 'Error');
    metrics.check(`${name}: no transport error`, false);
    metrics.record(stats, t0, 0, 0);
    return { status: 0, link: undefined, body: undefined };
  }

  // Decision: no named closures here; tsx (esbuild keepNames) wraps each one in a __name() call
  // every time it is created, which showed in the profile of the hot path.
  function send(method: Method, url: string, o: SendOptions): Promise<Reply> {
    if (!o.cleanup && (stopped || metrics.requests >= opts.maxRequests)) return Promise.reject(new Stopped());
    if (offTarget(url)) {
      metrics.check(`${o.name}: request on the target`, false);
      return Promise.resolve({ status: 0, link: undefined, body: undefined });
    }
    metrics.requests++;
    const body = o.body === undefined ? '' : JSON.stringify(o.body);
    const lines = headerLines(url, body, o.pageSize);
    const stats = metrics.statsFor(method, o.name, o.pageSize);
    const t0 = performance.now();
    return new Promise((resolve) => {
      pool.send(method, url, lines, body, o.readBody, t0, (e, r) =>
        resolve(e === undefined ? answered(stats, t0, r!, r!.size) : unanswered(stats, t0, o.name, e)),
      );
    });
  }

  const sampleEvery = Math.max(1, opts.sampleEvery);
  return {
    io: {
      api,
      runTag: Date.now().toString(36),
      send,
      check: (name, ok, tags) => metrics.check(name, ok, tags),
      sampleBody: () => pageResponses++ % sampleEvery === 0,
    },
    send,
    get stopped() {
      return stopped;
    },
    get fatal() {
      return fatal;
    },
    get retried() {
      return pool.retried;
    },
    stop: () => void (stopped = true),
    close: () => pool.close(),
  };
}
