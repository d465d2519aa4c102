/**
 * What the kit saw: the clients (grouped by User-Agent and credentials), how many requests each
 * sent, which clauses each request was checked against, and the findings with their redacted
 * exchange and a curl line. Bounded: counts are exact, stored examples are capped.
 */

import type { Exchange } from '../core/exchange.ts';
import { hideQueryCredentials, redactExchange, redactUrl, redactValue, registerCredentials } from '../core/redact.ts';
import { parseBasic } from '../fixtures/reference-server/src/auth/basic.ts';
import { clientClauseById } from '../suites/catalogue/client-clauses.ts';
import { toCurl } from '../suites/harness/curl.ts';
import type { HmacMistake } from './hmac-diagnosis.ts';
import { type ReceivedRequest, single } from './request.ts';
import type { Finding } from './rules.ts';

/** Decision: per client and clause the first 10 findings keep their exchange; all are counted. */
export const EXAMPLES_PER_CLAUSE = 10;
/** Decision: at most 500 distinct clients are told apart; later ones share one record. */
export const MAX_CLIENTS = 500;
/** Decision: a stored request body is cut at 16 KiB (results.json stays readable). */
const SHOWN_BODY = 16 * 1024;

export interface StoredFinding {
  clause: string;
  level: string;
  seq: number;
  at: string;
  method: string;
  target: string;
  status: number | null;
  expected: string;
  actual: string;
  hmac?: { verdict: string; mistakes?: HmacMistake[]; skewSeconds?: number };
  exchange: Exchange;
  curl: string;
}

export interface ClientRecord {
  id: string;
  userAgent: string | null;
  credentials: string;
  requests: number;
  /** Requests that carried X-Pmv6-Probe (declared deliberate mistakes of a test). */
  probes: number;
  firstAt: string;
  lastAt: string;
  /** clause → requests checked against it (probes excluded). */
  checked: Record<string, number>;
  /** clause → findings (probes excluded). */
  findings: Record<string, number>;
  /** clause → what declared probes broke on purpose. */
  probeFindings: Record<string, number>;
  examples: StoredFinding[];
}

export interface KitSnapshot {
  startedAt: string;
  takenAt: string;
  requests: number;
  scenarios: Array<{ at: string; scenario: string }>;
  clients: ClientRecord[];
  /** Faults of the kit itself while checking (never a client's finding). */
  kitErrors: string[];
}

interface PendingFinding {
  basic: { username: string; password: string } | undefined;
  raw: Exchange;
  finding: Omit<StoredFinding, 'exchange' | 'curl'>;
  shown?: StoredFinding;
}

export const PROBE_HEADER = 'x-pmv6-probe';

/** How a request identifies its sender: Basic user name, HMAC public key (shortened, as redaction shows it) or none. */
export function credentialsOf(req: ReceivedRequest, userOfKey: (publicKey: string) => string | undefined): string {
  const pk = single(req.headers, 'x-public-key');
  if (pk !== undefined) {
    const user = userOfKey(pk);
    return `hmac ${pk.slice(0, 6)}…${user !== undefined ? ` (${user})` : ''}`;
  }
  const basic = parseBasic(single(req.headers, 'authorization'));
  if (basic !== undefined) return `basic ${basic.username}`;
  return 'none';
}

/**
 * A client may send a form-encoded body by mistake (CLI-09); the harness's redaction knows JSON
 * only, so sensitive form fields are hidden here with the same key list (redactValue).
 */
export function redactFormBody(text: string): string {
  if (!/^[^=&\s{[]+=[^&]*(?:&[^=&\s]+=[^&]*)*$/.test(text)) return text;
  return [...new URLSearchParams(text)]
    .map(([k, v]) => {
      const shown = (redactValue({ [k]: v }) as Record<string, unknown>)[k];
      return `${encodeURIComponent(k)}=${shown === '«redacted»' ? shown : encodeURIComponent(String(shown))}`;
    })
    .join('&');
}

/** What the kit answered, as the client received it (after any scenario rewrote it). */
export interface KitReply {
  headers: Record<string, string>;
  body: string;
}

export function exchangeOf(req: ReceivedRequest, status: number | null, reply?: KitReply): Exchange {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  const ex: Exchange = { request: { method: req.method, url: `${req.origin}${req.rawUrl}`, headers }, durationMs: 0 };
  if (req.body !== undefined && req.body.length > 0) {
    const text = req.body.subarray(0, SHOWN_BODY).toString('utf8');
    const safe = redactFormBody(text);
    ex.request.body = req.body.length > SHOWN_BODY ? `${safe}… (${req.body.length} bytes, cut)` : safe;
  }
  if (status !== null) {
    const body = reply?.body ?? '';
    ex.response = {
      status,
      headers: reply?.headers ?? {},
      body: body.length > SHOWN_BODY ? `${body.slice(0, SHOWN_BODY)}… (${body.length} characters, cut)` : body,
    };
  }
  return ex;
}

/** Headers curl sets itself (or that would make it print compressed bytes) stay out of the curl line. */
const CURL_SETS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'accept-encoding']);

function forCurl(ex: Exchange): Exchange {
  const headers = Object.fromEntries(Object.entries(ex.request.headers).filter(([k]) => !CURL_SETS.has(k.toLowerCase())));
  return { ...ex, request: { ...ex.request, headers } };
}

export class Ledger {
  #startedAt = new Date();
  #requests = 0;
  #clients = new Map<string, ClientRecord>();
  #scenarios: Array<{ at: string; scenario: string }> = [];
  #kitErrors: string[] = [];
  #pending = new Map<ClientRecord, PendingFinding[]>();

  reset(now: number): void {
    this.#startedAt = new Date(now);
    this.#requests = 0;
    this.#clients.clear();
    this.#scenarios = [];
    this.#kitErrors = [];
    this.#pending.clear();
  }

  kitError(text: string): void {
    if (this.#kitErrors.length < 100) this.#kitErrors.push(text);
  }

  scenario(now: number, text: string): void {
    if (this.#scenarios.length < 1000) this.#scenarios.push({ at: new Date(now).toISOString(), scenario: text });
  }

  client(userAgent: string | undefined, credentials: string, at: number): ClientRecord {
    const key = `${userAgent ?? ''}\0${credentials}`;
    let rec = this.#clients.get(key);
    if (rec === undefined) {
      const overflow = this.#clients.size >= MAX_CLIENTS;
      const k = overflow ? '\0overflow' : key;
      rec = this.#clients.get(k);
      if (rec === undefined) {
        const iso = new Date(at).toISOString();
        rec = {
          id: overflow ? 'other' : `client-${this.#clients.size + 1}`,
          userAgent: overflow ? null : (userAgent ?? null),
          credentials: overflow ? `more than ${MAX_CLIENTS} clients` : credentials,
          requests: 0,
          probes: 0,
          firstAt: iso,
          lastAt: iso,
          checked: {},
          findings: {},
          probeFindings: {},
          examples: [],
        };
        this.#clients.set(k, rec);
      }
    }
    return rec;
  }

  request(rec: ClientRecord, at: number, probe: boolean): void {
    this.#requests++;
    rec.requests++;
    if (probe) rec.probes++;
    rec.lastAt = new Date(at).toISOString();
  }

  checked(rec: ClientRecord, clauses: string[], probe: boolean): void {
    if (probe) return;
    for (const c of clauses) rec.checked[c] = (rec.checked[c] ?? 0) + 1;
  }

  finding(rec: ClientRecord, req: ReceivedRequest, status: number | null, f: Finding, probe: boolean, reply?: KitReply): void {
    if (probe) {
      rec.probeFindings[f.clause] = (rec.probeFindings[f.clause] ?? 0) + 1;
      return;
    }
    const n = (rec.findings[f.clause] = (rec.findings[f.clause] ?? 0) + 1);
    if (n > EXAMPLES_PER_CLAUSE) return;
    const d = f.hmac;
    const pending = this.#pending.get(rec) ?? [];
    this.#pending.set(rec, pending);
    pending.push({
      basic: parseBasic(single(req.headers, 'authorization')),
      raw: exchangeOf(req, status, reply),
      finding: {
        clause: f.clause,
        level: clientClauseById(f.clause)?.level ?? 'MUST',
        seq: req.seq,
        at: new Date(req.at).toISOString(),
        method: req.method,
        target: redactUrl(req.rawUrl),
        status,
        expected: hideQueryCredentials(f.expected),
        actual: hideQueryCredentials(f.actual),
        ...(d
          ? {
              hmac: {
                verdict: d.verdict,
                ...(d.verdict === 'mistakes' ? { mistakes: d.mistakes, ...(d.skewSeconds !== undefined ? { skewSeconds: d.skewSeconds } : {}) } : {}),
              },
            }
          : {}),
      },
    });
  }

  /**
   * Decision: a finding's exchange is redacted and its curl line written when a snapshot is taken,
   * not while the client waits for its answer; each is rendered once. Every client password seen
   * in a finding is registered as a secret before any of them is rendered.
   */
  #render(rec: ClientRecord): StoredFinding[] {
    const pending = this.#pending.get(rec) ?? [];
    for (const p of pending)
      if (p.shown === undefined && p.basic !== undefined) registerCredentials(p.basic.username, p.basic.password, `password of ${p.basic.username}`);
    return pending.map((p) => (p.shown ??= { ...p.finding, exchange: redactExchange(p.raw), curl: toCurl(forCurl(p.raw)) }));
  }

  snapshot(now: number): KitSnapshot {
    return {
      startedAt: this.#startedAt.toISOString(),
      takenAt: new Date(now).toISOString(),
      requests: this.#requests,
      scenarios: [...this.#scenarios],
      clients: [...this.#clients.values()].map((c) => ({ ...structuredClone(c), examples: structuredClone(this.#render(c)) })),
      kitErrors: [...this.#kitErrors],
    };
  }
}
