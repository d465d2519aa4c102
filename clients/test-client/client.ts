/**
 * A small v6 client written for the kit's own tests: it follows every client clause (the
 * conforming client), or breaks exactly one of them (`fault`, a faulty variant for the client
 * kill matrix, variants.ts). `demandsNext` copies a bug seen in a widely used Python client: it
 * reads rel="next" from every page that has a Link header and fails when it is not there.
 */
import { createHmac } from 'node:crypto';
import { Agent } from 'undici';

export type ClientFault =
  | 'no-content-type'
  | 'no-authentication'
  | 'url-without-json'
  | 'wrong-api-version'
  | 'page-size-2000'
  | 'count-without-page-size'
  | 'hmac-decoded-path'
  | 'hmac-no-query'
  | 'hmac-leading-slash'
  | 'hmac-index-php'
  | 'hmac-reserialised-body'
  | 'hmac-uppercase-hex'
  | 'hmac-milliseconds'
  | 'hmac-clock-skew'
  | 'patch-method'
  | 'body-not-json';

export type ClientAuth = { kind: 'basic'; user: string; password: string } | { kind: 'hmac'; publicKey: string; privateKey: string };

export interface TestClientOptions {
  /** The installation's base URL (the API is at base/index.php/api/v6/). */
  base: string;
  auth: ClientAuth;
  userAgent: string;
  fault?: ClientFault;
  /** X-Page-Size of lists and their counts (default 5). */
  pageSize?: number;
  demandsNext?: boolean;
  timeoutMs?: number;
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: unknown;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`${what} answered ${status}: ${JSON.stringify(body)}`);
    this.name = 'ApiFailure';
  }
}

/** Decision: replies above 8 MiB are refused (the client reads no unbounded body). */
const MAX_REPLY_BYTES = 8 * 1024 * 1024;

export function parseLinks(value: string | string[] | undefined): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  const out: Record<string, string> = {};
  // RFC 8288 §3: link-params come in any order after the target, with optional whitespace.
  for (const m of (Array.isArray(value) ? value.join(', ') : value).matchAll(/<([^>]*)>((?:\s*;\s*[^;,=\s]+(?:\s*=\s*(?:"[^"]*"|[^;,\s]*))?)*)/g)) {
    const rel = /(?:^|;)\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]*))/i.exec(m[2]!);
    const names = rel ? (rel[1] ?? rel[2] ?? '') : '';
    for (const name of names.split(/\s+/).filter(Boolean)) out[name] = m[1]!;
  }
  return out;
}

export class TestClient {
  readonly #o: Required<Omit<TestClientOptions, 'fault'>> & { fault: ClientFault | undefined };
  readonly #agent: Agent;

  constructor(opts: TestClientOptions) {
    const timeoutMs = opts.timeoutMs ?? 10_000;
    this.#o = { pageSize: 5, demandsNext: false, timeoutMs, ...opts, fault: opts.fault };
    this.#agent = new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connect: { timeout: timeoutMs } });
  }

  close(): Promise<void> {
    return this.#agent.close();
  }

  #pageSize(): string {
    return this.#o.fault === 'page-size-2000' ? '2000' : String(this.#o.pageSize);
  }

  /** `path`: after /index.php/api/v6/, already percent-encoded, without `.json` (added here), query allowed. */
  url(path: string): string {
    const fault = this.#o.fault;
    const [p, q] = path.split('?') as [string, string | undefined];
    const version = fault === 'wrong-api-version' ? 'v5' : 'v6';
    const suffix = fault === 'url-without-json' ? '' : '.json';
    return `${this.#o.base}/index.php/api/${version}/${p}${suffix}${q !== undefined ? `?${q}` : ''}`;
  }

  #sign(url: string, body: string, bodySent: string): Record<string, string> {
    const auth = this.#o.auth;
    if (auth.kind !== 'hmac') throw new Error('not an HMAC client');
    const fault = this.#o.fault;
    const target = url.replace(/^[a-z]+:\/\/[^/]+/i, '');
    let uri = target.slice(target.indexOf('index.php/') + 'index.php/'.length);
    if (fault === 'hmac-decoded-path') uri = decodeURIComponent(uri);
    if (fault === 'hmac-no-query') uri = uri.split('?')[0]!;
    if (fault === 'hmac-leading-slash') uri = `/${uri}`;
    if (fault === 'hmac-index-php') uri = `index.php/${uri}`;
    const seconds = Math.floor(Date.now() / 1000);
    const timestamp = fault === 'hmac-milliseconds' ? String(Date.now()) : fault === 'hmac-clock-skew' ? String(seconds - 3600) : String(seconds);
    const hashed = fault === 'hmac-reserialised-body' ? body : bodySent;
    let hash = createHmac('sha256', Buffer.from(auth.privateKey, 'utf8'))
      .update(uri + timestamp + hashed, 'utf8')
      .digest('hex');
    if (fault === 'hmac-uppercase-hex') hash = hash.toUpperCase();
    return { 'X-Public-Key': auth.publicKey, 'X-Request-Hash': hash, 'X-Request-Timestamp': timestamp };
  }

  async request(method: string, path: string, opts: { json?: unknown; pageSize?: boolean; url?: string } = {}): Promise<Reply> {
    const fault = this.#o.fault;
    const url = opts.url ?? this.url(path);
    const compact = opts.json === undefined ? '' : JSON.stringify(opts.json);
    // The reserialised-body variant sends indented JSON and hashes the compact form.
    const sent =
      opts.json === undefined
        ? ''
        : fault === 'hmac-reserialised-body'
          ? JSON.stringify(opts.json, null, 2)
          : fault === 'body-not-json'
            ? new URLSearchParams(Object.entries(opts.json as Record<string, unknown>).map(([k, v]): [string, string] => [k, String(v)])).toString()
            : compact;
    const headers: Record<string, string> = { 'User-Agent': this.#o.userAgent, Accept: 'application/json' };
    if (fault !== 'no-content-type') headers['Content-Type'] = 'application/json; charset=utf-8';
    if (opts.pageSize) headers['X-Page-Size'] = this.#pageSize();
    const auth = this.#o.auth;
    if (fault !== 'no-authentication') {
      if (auth.kind === 'basic') headers['Authorization'] = `Basic ${Buffer.from(`${auth.user}:${auth.password}`, 'utf8').toString('base64')}`;
      else Object.assign(headers, this.#sign(url, compact, sent));
    }
    const m = /^([a-z]+:\/\/[^/]+)(.*)$/i.exec(url);
    if (!m) throw new Error(`not an absolute URL: ${url}`);
    const res = await this.#agent.request({
      origin: m[1]!,
      path: m[2]!,
      method: method === 'PUT' && fault === 'patch-method' ? 'PATCH' : method,
      headers,
      ...(sent === '' ? {} : { body: sent }),
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > MAX_REPLY_BYTES) {
        res.body.destroy();
        throw new Error(`${method} ${path}: reply larger than ${MAX_REPLY_BYTES} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: res.statusCode, headers: res.headers, json };
  }

  async #ok(method: string, path: string, opts: { json?: unknown; pageSize?: boolean; url?: string } = {}): Promise<Reply> {
    const r = await this.request(method, path, opts);
    if (r.status < 200 || r.status > 299) throw new ApiFailure(r.status, r.json, `${method} ${opts.url ?? path}`);
    return r;
  }

  async version(): Promise<unknown> {
    return (await this.#ok('GET', 'version')).json;
  }

  async create(path: string, body: Record<string, unknown>): Promise<number> {
    const r = await this.#ok('POST', path, { json: body });
    return (r.json as { id: number }).id;
  }

  async update(path: string, body: Record<string, unknown>): Promise<void> {
    await this.#ok('PUT', path, { json: body });
  }

  async remove(path: string): Promise<void> {
    await this.#ok('DELETE', path);
  }

  async count(listPath: string): Promise<{ num_items: number; num_pages: number; num_items_per_page: number }> {
    const r = await this.#ok('GET', `${listPath}/count`, { pageSize: this.#o.fault !== 'count-without-page-size' });
    return r.json as { num_items: number; num_pages: number; num_items_per_page: number };
  }

  /** Every item of a list: the first page, then rel="next" until a page has none (spec §4 rules 1–3). */
  async listAll(listPath: string, maxPages = 1000): Promise<unknown[]> {
    const items: unknown[] = [];
    let url: string | undefined;
    for (let page = 0; page < maxPages; page++) {
      const current = url ?? this.url(listPath);
      const r = await this.#ok('GET', listPath, { pageSize: true, ...(url !== undefined ? { url } : {}) });
      if (!Array.isArray(r.json)) throw new Error(`GET ${listPath}: not a JSON array`);
      items.push(...(r.json as unknown[]));
      const links = parseLinks(r.headers['link']);
      if (this.#o.demandsNext && links !== undefined) {
        // The bug: `links['next']` without asking whether it is there.
        const next = links['next'];
        if (next === undefined) throw new Error(`KeyError: 'next' (page ${page + 1} of ${listPath} has no rel="next")`);
        url = new URL(next, current).href;
        continue;
      }
      // RFC 8288 §3.1: the target is a URI-Reference, resolved against the page's own URL.
      const next = links?.['next'];
      if (next === undefined) return items;
      url = new URL(next, current).href;
    }
    throw new Error(`GET ${listPath}: more than ${maxPages} pages`);
  }
}
