/**
 * The client kit: the reference server, wrapped from outside (Fastify hooks added before listen,
 * as the mutants do), that records every request a client sends, checks it against the client
 * clauses, and answers with a scenario when one is switched on. Its own control endpoints live at
 * {base}/__clients/ (control.ts), beside the reference server's {base}/__control/.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { queryCredentials, registerCredentials, registerSecret } from '../core/redact.ts';
import { computeRequestHash, DEFAULT_HMAC_WINDOW_SECONDS, signedUri } from '../fixtures/reference-server/src/auth/hmac.ts';
import { randomHexKey, SecretBox } from '../fixtures/reference-server/src/crypto.ts';
import { JSON_CONTENT_TYPE } from '../fixtures/reference-server/src/errors.ts';
import { createReferenceServer, type ReferenceServer, type ReferenceServerOptions } from '../fixtures/reference-server/src/index.ts';
import { installControl } from './control.ts';
import { CountPairing } from './count-pairing.ts';
import { credentialsOf, type KitReply, type KitSnapshot, Ledger, PROBE_HEADER } from './ledger.ts';
import { pathOf, type ReceivedRequest, single } from './request.ts';
import { checkRequest, isReadinessProbe } from './rules.ts';
import {
  CUT_BODY,
  CUT_BODY_LENGTH,
  cannedReply,
  describeScenario,
  isCount,
  linkHeader,
  pageNumber,
  pageTooHighReply,
  readLinkHeader,
  type ScenarioSetting,
  SLOW_DEFAULT_MS,
  scenarioCount,
} from './scenarios.ts';

export interface ClientKitOptions extends Omit<ReferenceServerOptions, 'encryptionKey' | 'controlToken'> {
  /** Bearer token of both control protocols ({base}/__control and {base}/__clients). */
  controlToken: string;
  /** The scenario from the start (default normal). */
  scenario?: ScenarioSetting;
}

export interface ClientKit {
  server: ReferenceServer;
  windowSeconds: number;
  listen(opts?: { host?: string; port?: number }): Promise<string>;
  close(): Promise<void>;
  snapshot(): KitSnapshot;
  reset(): void;
  scenario(): ScenarioSetting | undefined;
  setScenario(s: ScenarioSetting | undefined): void;
  /** Resolves when a client asks the kit to stop (POST {base}/__clients/stop). */
  stopRequested: Promise<void>;
  /**
   * Tells `listener` of every API request a client sends, when it arrives; the exchange it gets is
   * live: its body, status, reply and end are filled in as they come (a request the kit still holds
   * has status null). Returns the unsubscribe.
   */
  observe(listener: (ex: KitExchange) => void): () => void;
}

/** One API request of a client and the kit's answer, as `observe` tells it. */
export interface KitExchange {
  seq: number;
  at: number;
  method: string;
  rawUrl: string;
  /** Relative to /index.php/api/v6, without the query. */
  apiPath: string;
  /** null until the kit answers (a request held under `slow`, or one the client gave up on). */
  status: number | null;
  /** The reply's headers and body as the client got them. */
  reply: KitReply | undefined;
  probe: boolean;
  /** SHA-256 of the body, once the kit has read it; undefined when it answered before reading it. */
  bodyDigest?: string;
  /** The request's Content-Length as sent (for a body the kit never read). */
  contentLength?: string;
  /** When the exchange ended: answered, or the connection closed (the client gave up, or the kit cut it). */
  endedAt?: number;
  /** The connection closed before the kit answered: the client gave up on it. */
  abandoned?: boolean;
  /** The kit cut the connection mid-body (scenario connection-closed). */
  cut?: boolean;
}

const API_MARK = '/index.php/api/v6';

/** The path relative to /index.php/api/v6 (no query), or undefined outside the v6 API. */
export function apiPathOf(rawUrl: string, basePath: string): string | undefined {
  const path = pathOf(rawUrl);
  const prefix = `${basePath}${API_MARK}/`;
  return path.startsWith(prefix) ? path.slice(prefix.length - 1) : undefined;
}

export async function createClientKit(opts: ClientKitOptions): Promise<ClientKit> {
  const { scenario: initial, ...serverOpts } = opts;
  const encryptionKey = randomHexKey();
  const server = await createReferenceServer({ ...serverOpts, encryptionKey, controlToken: opts.controlToken });
  const box = new SecretBox(Buffer.from(encryptionKey, 'hex'));
  const app = server.app;
  const now = opts.now ?? Date.now;
  const basePath = (opts.basePath ?? '').replace(/\/+$/, '').replace(/^(?=[^/])/, '/');
  const windowSeconds = opts.hmacWindowSeconds ?? DEFAULT_HMAC_WINDOW_SECONDS;
  const ledger = new Ledger();
  const pairing = new CountPairing();
  // Requests the kit itself sends (exact-fill's counts) carry this header with this value.
  const innerHeader = 'x-pmv6-kit-inner';
  const innerToken = randomBytes(16).toString('hex');
  const internal = [`${basePath}/__control/`, `${basePath}/__clients/`];

  // Decision: every secret the kit issues or is given is registered for redaction when it comes to
  // be, not when a request first uses it: a client may echo a key in a path or a header under
  // Basic authentication, where the kit never looks the key up.
  registerCredentials(opts.adminUser ?? 'admin', opts.adminPassword, 'admin password');
  registerSecret(opts.controlToken, 'control token');
  const users = server.store.users;
  const setKeys = users.setKeys.bind(users);
  users.setKeys = (id, publicKey, sealed, issuedAtMs) => {
    setKeys(id, publicKey, sealed, issuedAtMs);
    registerSecret(box.open(sealed), 'HMAC private key');
  };
  for (let offset = 0, page = users.page(1000, 0); page.length > 0; offset += page.length, page = users.page(1000, offset)) {
    for (const row of page) {
      const sealed = users.byId(row.id)?.private_key_sealed;
      if (sealed) registerSecret(box.open(sealed), 'HMAC private key');
    }
  }

  const keys = new Map<string, { sealed: string; key: string; user: string }>();
  const keyOf = (publicKey: string) => {
    const user = server.store.users.byPublicKey(publicKey);
    if (user === undefined || user.private_key_sealed === null) return undefined;
    const known = keys.get(publicKey);
    if (known !== undefined && known.sealed === user.private_key_sealed) return known;
    if (keys.size >= 10_000) keys.clear();
    const entry = { sealed: user.private_key_sealed, key: box.open(user.private_key_sealed), user: user.username };
    registerSecret(entry.key, 'HMAC private key');
    keys.set(publicKey, entry);
    return entry;
  };

  /**
   * Passwords a request sets (a control or API body's `password`, `new_password`; with its
   * `username` when it has one) and credential-named query values are registered as secrets
   * before the request is recorded, so no output of the kit shows them in any encoding.
   */
  const registerSent = (rawUrl: string, body: unknown) => {
    for (const [name, value] of queryCredentials(rawUrl)) registerSecret(value, `${name} in a query`);
    if (!Buffer.isBuffer(body) || body.length > 65_536) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return;
    const fields = parsed as Record<string, unknown>;
    const username = typeof fields.username === 'string' ? fields.username : undefined;
    for (const key of ['password', 'new_password', 'password_confirm']) {
      const value = fields[key];
      if (typeof value !== 'string') continue;
      if (username !== undefined) registerCredentials(username, value, `password of ${username}`);
      else registerSecret(value, 'password');
    }
  };

  let current: ScenarioSetting | undefined;
  const setScenario = (s: ScenarioSetting | undefined) => {
    current = s === undefined || s.name === 'normal' ? undefined : { ...s };
    ledger.scenario(now(), current === undefined ? 'normal' : describeScenario(current));
  };
  if (initial !== undefined) setScenario(initial);

  const listeners = new Set<(ex: KitExchange) => void>();
  const received = new WeakMap<FastifyRequest, ReceivedRequest & { probe: boolean; status: number | null; reply?: KitReply }>();
  const live = new WeakMap<FastifyRequest, KitExchange>();
  const underScenario = new WeakMap<FastifyRequest, ScenarioSetting>();
  let seq = 0;

  const isInner = (req: FastifyRequest) => req.headers[innerHeader] === innerToken;
  const isInternal = (raw: string) => internal.some((p) => raw.startsWith(p));

  app.addHook('onRequest', (req, reply, done) => {
    const raw = req.raw.url ?? req.url;
    if (isInner(req) || isInternal(raw)) return done();
    const rec: ReceivedRequest = {
      seq: ++seq,
      at: now(),
      method: req.method,
      rawUrl: raw,
      origin: `${req.protocol}://${req.headers.host ?? 'localhost'}`,
      // Decision: a copy of the headers as the client sent them; a server hook may rewrite
      // req.headers (a variant reading an X-Page-Size out of range as the default), and the
      // client clauses judge what the client sent, never what the server made of it.
      headers: { ...req.headers },
      body: undefined,
    };
    received.set(req, { ...rec, probe: req.headers[PROBE_HEADER] !== undefined, status: null });
    const apiPath = apiPathOf(raw, basePath);
    if (apiPath !== undefined && listeners.size > 0) {
      const length = req.headers['content-length'];
      const ex: KitExchange = {
        seq: rec.seq,
        at: rec.at,
        method: rec.method,
        rawUrl: raw,
        apiPath,
        status: null,
        reply: undefined,
        probe: req.headers[PROBE_HEADER] !== undefined,
        ...(typeof length === 'string' ? { contentLength: length } : {}),
      };
      live.set(req, ex);
      reply.raw.once('close', () => {
        if (ex.endedAt !== undefined) return;
        ex.endedAt = now();
        if (ex.status === null) ex.abandoned = true;
      });
      for (const l of listeners) l(ex);
    }
    done();
  });

  app.addHook('preHandler', (req, _reply, done) => {
    const rec = received.get(req);
    if (rec !== undefined && Buffer.isBuffer(req.body)) rec.body = req.body;
    const ex = live.get(req);
    if (ex !== undefined)
      ex.bodyDigest = createHash('sha256')
        .update(Buffer.isBuffer(req.body) ? req.body : '')
        .digest('hex');
    if (!isInner(req)) registerSent(req.raw.url ?? req.url, req.body);
    done();
  });

  /** Checks and counts an answered request (onResponse; the cut replies of connection-closed, which never complete). */
  const account = (req: FastifyRequest, statusCode: number) => {
    const rec = received.get(req);
    if (rec === undefined || isReadinessProbe(rec, basePath)) return;
    try {
      rec.status = statusCode;
      const apiPath = apiPathOf(rec.rawUrl, basePath);
      const ex = live.get(req);
      if (ex !== undefined && !ex.cut && !ex.abandoned) {
        ex.status = rec.status;
        ex.reply = rec.reply;
        ex.endedAt ??= now();
      }
      const client = ledger.client(
        single(rec.headers, 'user-agent'),
        credentialsOf(rec, (pk) => keyOf(pk)?.user),
        rec.at,
      );
      ledger.request(client, rec.at, rec.probe);
      const result = checkRequest(rec, { basePath, privateKeyOf: (pk) => keyOf(pk)?.key, nowMs: rec.at, windowSeconds });
      ledger.checked(client, result.checked, rec.probe);
      for (const f of result.findings) ledger.finding(client, rec, rec.status, f, rec.probe, rec.reply);
      const size = rec.headers['x-page-size'];
      if (apiPath !== undefined && !Array.isArray(size)) {
        const paired = pairing.observe(client.id, rec, apiPath, size);
        if (paired !== undefined) {
          const count = paired.count as typeof rec;
          ledger.checked(client, ['CLI-06'], count.probe);
          if (paired.finding) ledger.finding(client, count, count.status, paired.finding, count.probe, count.reply);
        }
      }
    } catch (e) {
      // A fault of the kit is never the client's finding.
      ledger.kitError(`request #${rec.seq}: ${(e as Error).stack ?? String(e)}`);
    }
  };

  app.addHook('onResponse', (req, reply, done) => {
    account(req, reply.statusCode);
    done();
  });

  app.addHook('onRequest', (req, reply, done) => {
    const s = current;
    if (s === undefined || isInner(req)) return done();
    const apiPath = apiPathOf(req.raw.url ?? req.url, basePath);
    if (apiPath === undefined || (s.path !== undefined && !apiPath.startsWith(s.path))) return done();
    if (s.times !== undefined && --s.times <= 0) setScenario(undefined);
    if (s.name === 'slow') {
      // A client that gives up closes its connection: the hold ends there (the request then goes
      // on as a server would go on with it), so held requests do not outlive their clients.
      let held = true;
      const release = () => {
        if (!held) return;
        held = false;
        clearTimeout(timer);
        done();
      };
      const timer = setTimeout(release, s.delayMs ?? SLOW_DEFAULT_MS);
      reply.raw.once('close', release);
      return;
    }
    if (s.name === 'connection-closed') {
      // Headers and the start of a body promised longer, then the connection is gone: what a
      // client sees when a proxy or the server dies mid-reply.
      reply.hijack();
      const ex = live.get(req);
      if (ex !== undefined) {
        ex.status = 200;
        ex.cut = true;
        ex.reply = { headers: { 'content-type': JSON_CONTENT_TYPE, 'content-length': String(CUT_BODY_LENGTH) }, body: CUT_BODY };
      }
      const res = reply.raw;
      res.writeHead(200, { 'content-type': JSON_CONTENT_TYPE, 'content-length': String(CUT_BODY_LENGTH) });
      const rec = received.get(req);
      if (rec !== undefined) rec.reply = { headers: { 'content-type': JSON_CONTENT_TYPE, 'content-length': String(CUT_BODY_LENGTH) }, body: CUT_BODY };
      res.write(CUT_BODY, () => {
        if (ex !== undefined) ex.endedAt = now();
        res.destroy();
        account(req, 200);
      });
      return;
    }
    const canned = cannedReply(s, apiPath, req.headers['x-page-size']);
    if (canned !== undefined) {
      reply.code(canned.status).headers(canned.headers).send(canned.body);
      return;
    }
    if (s.name === 'one-page' || s.name === 'exact-fill') underScenario.set(req, s);
    done();
  });

  const innerCount = async (req: FastifyRequest, listApiPath: string): Promise<unknown> => {
    const url = `${basePath}${API_MARK}${listApiPath}/count.json`;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'content-length' && k !== 'transfer-encoding') headers[k] = v;
    headers[innerHeader] = innerToken;
    const pk = headers['x-public-key'];
    const ts = headers['x-request-timestamp'];
    if (pk !== undefined && ts !== undefined) {
      const key = keyOf(pk)?.key;
      if (key === undefined) return undefined;
      headers['x-request-hash'] = computeRequestHash(key, signedUri(url) ?? '', ts, '');
    }
    const res = await app.inject({ method: 'GET', url, headers });
    if (res.statusCode !== 200) return undefined;
    try {
      return JSON.parse(res.body) as unknown;
    } catch {
      return undefined;
    }
  };

  // Callback style: requests outside one-page and exact-fill pass without a promise.
  app.addHook('onSend', (req, reply, payload, done) => {
    const s = underScenario.get(req);
    if (s === undefined || reply.statusCode !== 200) return done(null, payload);
    rewritePage(req, reply, payload, s).then(
      (out) => done(null, out),
      (e: Error) => done(e),
    );
  });

  // Registered after the scenarios' hook: the reply a finding shows is the one the client got.
  app.addHook('onSend', (req, reply, payload, done) => {
    const rec = received.get(req);
    if (rec !== undefined) {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
      const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.subarray(0, 64 * 1024).toString('utf8') : '';
      rec.reply = { headers, body };
    }
    done(null, payload);
  });

  const rewritePage = async (req: FastifyRequest, reply: FastifyReply, payload: unknown, s: ScenarioSetting): Promise<unknown> => {
    if (s.name !== 'one-page' && s.name !== 'exact-fill') return payload;
    const apiPath = apiPathOf(req.raw.url ?? req.url, basePath)!;
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
    if (text === undefined) return payload;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return payload;
    }
    if (apiPath.endsWith('/count.json')) return isCount(body) ? JSON.stringify(scenarioCount(s.name, body)) : payload;
    const link = reply.getHeader('link');
    if (!Array.isArray(body) || typeof link !== 'string') return payload;
    const self = readLinkHeader(link).find(([rel]) => rel === 'self')?.[1];
    if (self === undefined) return payload;
    if (s.name === 'one-page') {
      reply.header('link', linkHeader(self, 1, 1));
      return payload;
    }
    const listPath = apiPath.replace(/(?:\/page\/[^/]+)?\.json$/, '');
    const count = await innerCount(req, listPath);
    if (!isCount(count)) return payload;
    const cut = scenarioCount('exact-fill', count);
    const page = pageNumber(apiPath) ?? 1;
    if (page > Math.max(cut.num_pages, 1)) {
      const r = pageTooHighReply();
      reply.code(r.status).removeHeader('link');
      return r.body;
    }
    reply.header('link', linkHeader(self, page, cut.num_pages));
    return cut.num_items === 0 ? '[]' : payload;
  };

  let stop!: () => void;
  const stopRequested = new Promise<void>((resolve) => (stop = resolve));
  const kit: ClientKit = {
    server,
    windowSeconds,
    listen: (o) => server.listen(o),
    close: () => server.close(),
    snapshot: () => ledger.snapshot(now()),
    reset: () => {
      ledger.reset(now());
      pairing.clear();
      setScenario(undefined);
    },
    scenario: () => (current === undefined ? undefined : { ...current }),
    setScenario,
    stopRequested,
    observe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  installControl(app, { basePath, token: opts.controlToken, kit, stop: () => stop() });
  return kit;
}
