import { createServer, type IncomingHttpHeaders, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ENCODER_NAMES, ENCODERS } from '../../../core/test/encodings.ts';

// A hostile target: an HTTP proxy on loopback in front of the reference server that misbehaves the
// way real servers and proxies do, one switchable behaviour per case (README.md here).

/** The kinds of object a run creates, by the path of their creation. */
export type Kind = 'project' | 'password' | 'my_password' | 'group' | 'user' | 'file';

/** Above 2^53: a double cannot hold it, and rounds it to `BIG_ROUNDED`. */
export const BIG_ID = '9007199254740993';
export const BIG_ROUNDED = '9007199254740992';

export interface Behaviour {
  /**
   * Creation replies (201 {"id"}) of the first `perKind` creations of each kind carry the id of a
   * pre-existing object of that kind instead. With `big`, the first project creation answers
   * BIG_ID instead: requests naming BIG_ID reach the project created, requests naming
   * BIG_ROUNDED (the id a client that parses ids as doubles sends) reach `big`, a pre-existing project.
   */
  rewriteCreations?: { victims: Partial<Record<Kind, number>>; perKind: number; big?: number };
  /**
   * The target is served under this base path (e.g. `/pm`): it is stripped before forwarding and
   * put into every Link URL. Requests outside it are answered `[]` and listed in `outside`.
   */
  basePath?: string;
  /** With `basePath`: Link URLs keep the server's paths, outside the base path (same origin). */
  linksOutsideBase?: boolean;
  /** Every URL of every Link header points at this origin instead (another listener). */
  foreignLinks?: string;
  /** These GET {control}/settings (1-based, in order of arrival) are answered 500 with an HTML page. */
  failSettingsReads?: number[];
  /** These PUT {control}/settings (1-based) are answered 500 with an HTML page, not forwarded. */
  failSettingsWrites?: number[];
  /** After this many requests, the proxy answers nothing more (the sockets stay open). */
  hangAfter?: number;
  /** Every JSON reply to a GET is padded to at least this many bytes (a long extra field). */
  padGets?: number;
  /** Every Link header gets `count` empty parameters (`; x=""`), 14 KB for 1,500. */
  longLink?: number;
  /** Replies to GETs whose API path matches are an array nested `depth` deep. */
  deepJson?: { depth: number; path: RegExp };
  /** Every reply echoes these secrets, in every form, in its headers and its body (see echo()). */
  echo?: () => string[];
  /**
   * Requests that match are forwarded only after `ms`, whether or not the client still waits (as
   * a server applies a request its client gave up on).
   */
  delay?: { match: (method: string, path: string, body: string) => boolean; ms: number };
  /** Called for each request before it is forwarded (its API or control path, from the root). */
  onRequest?: (method: string, path: string, body: string, authorization: string | undefined) => void;
}

export interface Hostile {
  url: string;
  /** Requests received, by `METHOD path`. */
  seen: string[];
  /** Creation replies the proxy rewrote to a pre-existing object's id. */
  rewritten: Array<{ kind: Kind; id: number }>;
  /** When the proxy last sent an answer (epoch ms), or undefined. */
  lastAnswerAt(): number | undefined;
  /** Requests outside `basePath`, with whether they carried credentials. */
  outside: Array<{ method: string; url: string; authorization: boolean }>;
  /** Secrets the kit issued that the proxy saw go by: user passwords sent to, and private keys answered by, the control protocol. */
  observed: Set<string>;
  close(): Promise<void>;
}

const API = '/index.php/api/v6/';

/** The kind of object a request creates (a POST of a creation path), or undefined. */
export function kindOf(method: string, path: string): Kind | undefined {
  if (method !== 'POST') return undefined;
  if (path === '/__control/users') return 'user';
  if (!path.startsWith(API)) return undefined;
  const rel = path.slice(API.length);
  const m = /^(projects|passwords|my_passwords|groups|users)\.json$/.exec(rel);
  if (m) return ({ projects: 'project', passwords: 'password', my_passwords: 'my_password', groups: 'group', users: 'user' } as const)[m[1] as 'projects'];
  if (/^(projects|passwords)\/\d+\/upload\.json$/.test(rel)) return 'file';
  return undefined;
}

/**
 * The forms a careless server echoes a secret in: the raw text and every encoder of
 * core/test/encodings.ts (JSON, percent, base64 and base64url, HTML, hex in either case and
 * separated, ...), nested once.
 */
export function echoForms(secret: string): string[] {
  const hex = Buffer.from(secret, 'utf8').toString('hex');
  // Issue 24's hex forms, named here too so they are echoed whatever the encoders' list holds.
  const issue = [hex, hex.toUpperCase(), hex.match(/../g)!.join(' '), hex.match(/../g)!.join(' ').toUpperCase()];
  return [...new Set([secret, ...ENCODER_NAMES.map((n) => ENCODERS[n](secret)), ...issue])];
}

/** Header-safe forms only (printable ASCII). */
const headerSafe = (s: string) => /^[\x20-\x7e]*$/.test(s);

function deepArray(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

const HTML_500 = '<!doctype html><title>500</title><h1>Internal Server Error</h1><p>upstream said: oops';

export async function startHostile(upstream: string, behaviour: Behaviour = {}): Promise<Hostile> {
  const up = new URL(upstream);
  const seen: string[] = [];
  const observed = new Set<string>();
  const outside: Hostile['outside'] = [];
  const sockets = new Set<Socket>();
  const created = new Map<Kind, number>();
  let settingsReads = 0;
  let settingsWrites = 0;
  let bigReal: string | undefined;
  let requests = 0;
  const rewritten: Hostile['rewritten'] = [];
  let lastAnswer: number | undefined;
  const answer = (res: ServerResponse, status: number, headers: Record<string, string>, text: string) => {
    lastAnswer = Date.now();
    send(res, status, headers, text);
  };
  const pad = behaviour.padGets ? 'p'.repeat(behaviour.padGets) : '';

  const server = createServer((req, res) => {
    requests += 1;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('end', () => {
      if (behaviour.hangAfter !== undefined && requests > behaviour.hangAfter) return; // never answers
      void handle(req, res, Buffer.concat(chunks)).catch(() => res.destroy());
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const method = req.method ?? 'GET';
    let path = req.url ?? '/';
    const base = behaviour.basePath;
    if (base) {
      if (!path.startsWith(`${base}/`)) {
        outside.push({ method, url: path, authorization: req.headers.authorization !== undefined });
        return answer(res, 200, { 'content-type': 'application/json; charset=utf-8' }, '[]');
      }
      path = path.slice(base.length);
    }
    seen.push(`${method} ${path.split('?')[0]}`);
    const auth = req.headers.authorization;
    // Secrets the kit issues: passwords of the users it makes (a test's wrong or garbage
    // credentials are not secrets, and are echoed without being looked for).
    if (req.url?.endsWith('/__control/users'))
      for (const m of body.toString('utf8').matchAll(/"password"\s*:\s*"((?:[^"\\]|\\.)*)"/g)) observed.add(JSON.parse(`"${m[1]}"`));
    behaviour.onRequest?.(method, path, body.toString('utf8'), auth);
    const bare = path.split('?')[0]!;
    if (bare === '/__control/settings' && method === 'GET' && behaviour.failSettingsReads?.includes(++settingsReads)) {
      return answer(res, 500, { 'content-type': 'text/html; charset=utf-8' }, HTML_500);
    }
    if (bare === '/__control/settings' && method === 'PUT' && behaviour.failSettingsWrites?.includes(++settingsWrites)) {
      return answer(res, 500, { 'content-type': 'text/html; charset=utf-8' }, HTML_500);
    }
    const rewrite = behaviour.rewriteCreations;
    let namesBig = false;
    if (rewrite?.big !== undefined) {
      // Exactly as sent: a client that kept BIG_ID reaches what it created, one that rounded it
      // reaches the pre-existing project.
      const swap = (s: string) => s.replaceAll(BIG_ID, bigReal ?? '0').replaceAll(BIG_ROUNDED, String(rewrite.big));
      if (path.includes(BIG_ID) || path.includes(BIG_ROUNDED)) {
        namesBig = path.includes(BIG_ID);
        path = swap(path);
      }
      const text = body.toString('utf8');
      if (text.includes(BIG_ID) || text.includes(BIG_ROUNDED)) body = Buffer.from(swap(text), 'utf8');
    }
    if (behaviour.delay?.match(method, bare, body.toString('utf8'))) await new Promise((r) => setTimeout(r, behaviour.delay!.ms));
    const reply = await forward(method, path, req.headers, body);
    let { status, headers, text } = reply;
    const kind = kindOf(method, bare);
    if (bare.startsWith('/__control/users')) {
      for (const m of text.matchAll(/"private_key"\s*:\s*"([^"]+)"/g)) observed.add(m[1]!);
    }
    if (rewrite && kind && status === 201) {
      const n = (created.get(kind) ?? 0) + 1;
      created.set(kind, n);
      const real = /"id"\s*:\s*(\d+)/.exec(text)?.[1];
      if (kind === 'project' && n === 1 && rewrite.big !== undefined && real) {
        bigReal = real;
        text = text.replace(/"id"\s*:\s*\d+/, `"id":${BIG_ID}`);
      } else if (n <= rewrite.perKind && rewrite.victims[kind] !== undefined) {
        text = text.replace(/"id"\s*:\s*\d+/, `"id":${rewrite.victims[kind]}`);
        rewritten.push({ kind, id: rewrite.victims[kind]! });
      }
    }
    if (namesBig && bigReal) text = text.replace(new RegExp(`"id"\\s*:\\s*${bigReal}\\b`), `"id":${BIG_ID}`);
    const isJson = /json/.test(String(headers['content-type'] ?? ''));
    if (method === 'GET' && bare.startsWith(API) && behaviour.deepJson?.path.test(bare.slice(API.length)) && status === 200) {
      text = deepArray(behaviour.deepJson.depth);
    } else if (method === 'GET' && pad && isJson && text.length < pad.length) {
      text = padded(text, pad);
    }
    const link = headers.link;
    if (typeof link === 'string') {
      let l = link;
      if (base && !behaviour.linksOutsideBase) l = l.replace(/<(https?:\/\/[^/>]+)/g, `<$1${base}`);
      if (behaviour.foreignLinks) l = l.replace(/<https?:\/\/[^/>]+/g, `<${behaviour.foreignLinks}`);
      if (behaviour.longLink) l = l.replace(/>/, `>${'; x=""'.repeat(behaviour.longLink)}`);
      headers.link = l;
    }
    if (behaviour.echo) ({ headers, text } = echo([...(auth ? [auth] : []), ...behaviour.echo()], requests, headers, text, isJson));
    answer(res, status, headers, text);
  }

  function forward(
    method: string,
    path: string,
    headers: IncomingHttpHeaders,
    body: Buffer,
  ): Promise<{ status: number; headers: Record<string, string>; text: string }> {
    return new Promise((resolve, reject) => {
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(headers))
        if (v !== undefined && k !== 'content-length' && k !== 'connection') out[k] = Array.isArray(v) ? v.join(', ') : v;
      if (body.length > 0) out['content-length'] = String(body.length);
      const r = request({ host: up.hostname, port: up.port, method, path, headers: out }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => {
          const h: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) {
            if (v === undefined || ['content-length', 'connection', 'keep-alive', 'transfer-encoding'].includes(k)) continue;
            h[k] = Array.isArray(v) ? v.join(', ') : v;
          }
          resolve({ status: res.statusCode ?? 502, headers: h, text: Buffer.concat(parts).toString('utf8') });
        });
        res.on('error', reject);
      });
      r.on('error', reject);
      r.end(body);
    });
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    seen,
    observed,
    lastAnswerAt: () => lastAnswer,
    rewritten,
    outside,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, text: string): void {
  if (res.destroyed) return;
  // No body in a 204 or 304, nor in a reply to HEAD.
  const body = status === 204 || status === 304 || res.req.method === 'HEAD' ? Buffer.alloc(0) : Buffer.from(text, 'utf8');
  res.writeHead(status, { ...headers, 'content-length': String(body.length) });
  res.end(body);
}

/** The JSON text with a long extra field in the object, or in the first object of the array. */
function padded(text: string, pad: string): string {
  const t = text.trimStart();
  if (t.startsWith('{')) return t === '{}' ? `{"pmv6_pad":"${pad}"}` : `{"pmv6_pad":"${pad}",${t.slice(1)}`;
  if (t.startsWith('[{')) return `[{"pmv6_pad":"${pad}",${t.slice(2)}`;
  // An empty array, or one of scalars: whitespace is JSON too.
  if (t.startsWith('[')) return `[${' '.repeat(pad.length)}${t.slice(1)}`;
  return text;
}

/** Bytes of echo headers in one reply: well under Node's 16 KB of headers. */
const HEADER_BYTES = 8 * 1024;

const rotate = <T>(items: T[], by: number): T[] => (items.length === 0 ? items : [...items.slice(by % items.length), ...items.slice(0, by % items.length)]);

/**
 * Every form of every secret in the body, and in headers those forms a header can carry up to
 * HEADER_BYTES. Decision: the n-th reply starts at another secret and form, so a client that keeps
 * only the first kilobytes of a body or a few headers still meets every form in some reply.
 */
function echo(secrets: string[], n: number, headers: Record<string, string>, text: string, isJson: boolean): { headers: Record<string, string>; text: string } {
  const forms = rotate(secrets.flatMap(echoForms), n * 7);
  const h = { ...headers };
  let budget = HEADER_BYTES;
  rotate(secrets, n)
    .flatMap(echoForms)
    .filter(headerSafe)
    .forEach((f, i) => {
      if (f.length + 16 > budget) return;
      budget -= f.length + 16;
      h[`x-echo-${i}`] = f;
    });
  if (!isJson) return { headers: h, text: `${text}\n${forms.join('\n')}` };
  const field = `"pmv6_echo":${JSON.stringify(forms)},"message_echo":${JSON.stringify(forms.slice(0, 20).join(' | '))}`;
  const t = text.trimStart();
  if (t.startsWith('{')) return { headers: h, text: t === '{}' ? `{${field}}` : `{${field},${t.slice(1)}` };
  if (t.startsWith('[{')) return { headers: h, text: `[{${field},${t.slice(2)}` };
  return { headers: h, text };
}

/** Another origin: records every request (method, URL, headers) and answers an empty JSON list. */
export async function startRecorder(): Promise<{
  url: string;
  requests: Array<{ method: string; url: string; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}> {
  const requests: Array<{ method: string; url: string; headers: IncomingHttpHeaders }> = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => send(res, 200, { 'content-type': 'application/json; charset=utf-8' }, '[]'));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
