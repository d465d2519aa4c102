/**
 * The client clauses (suites/catalogue/client-clauses.ts) as checks on one received request.
 * CLI-06 needs the client's earlier and later requests: see count-pairing.ts.
 */
import { parseBasic } from '../fixtures/reference-server/src/auth/basic.ts';
import { describeDiagnosis, diagnoseHmac, type HmacDiagnosis, verifiesAsProduct } from './hmac-diagnosis.ts';
import { pathOf, type ReceivedRequest, single } from './request.ts';

export const CONTENT_TYPE = 'application/json; charset=utf-8';
export const API_ROOT = '/index.php/api/v6/';
export const PAGE_SIZE = { min: 5, max: 1000 } as const;
const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE']);

export interface Finding {
  clause: string;
  expected: string;
  actual: string;
  hmac?: HmacDiagnosis;
}

export interface CheckResult {
  /** Clauses this request was checked against (a clause that does not apply is not listed). */
  checked: string[];
  findings: Finding[];
}

export interface CheckContext {
  /** The kit's mount point ('' or '/base'). */
  basePath: string;
  privateKeyOf(publicKey: string): string | undefined;
  nowMs: number;
  windowSeconds: number;
}

/**
 * `application/json` with the parameter charset=utf-8. Decision: media type and charset compare
 * case-insensitively and spaces around `;` and `=` are allowed (RFC 9110 §8.3.1), but the charset
 * must be there: the spec names the whole header value.
 */
export function isSpecContentType(value: string): boolean {
  const [type, ...params] = value.split(';');
  if (type === undefined || type.trim().toLowerCase() !== 'application/json') return false;
  let charset: string | undefined;
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq < 0) return false;
    const name = p.slice(0, eq).trim().toLowerCase();
    const v = p
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (name !== 'charset' || charset !== undefined) return false;
    charset = v;
  }
  return charset === 'utf-8';
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function shown(value: string | string[] | undefined): string {
  if (value === undefined) return 'no such header';
  return Array.isArray(value) ? `${value.length} headers: ${value.map((v) => JSON.stringify(v)).join(', ')}` : JSON.stringify(value);
}

/** The body's bytes when the server read it (or there is none); undefined when it was not read. */
export function fullBody(req: ReceivedRequest): Buffer | undefined {
  if (req.body !== undefined) return req.body;
  const length = single(req.headers, 'content-length');
  const chunked = req.headers['transfer-encoding'] !== undefined;
  return !chunked && (length === undefined || length === '0') ? Buffer.alloc(0) : undefined;
}

/**
 * A readiness probe: a GET or HEAD without a body or credentials of the root of the kit or of
 * the API root (`GET /`, `GET {base}/index.php/api/v6/`), as a CI job sends while it waits for
 * the kit to listen. Decision: not a request under the spec's rules (it asks for no resource of
 * the API), so no clause is checked on it and it counts as no client's request.
 */
export function isReadinessProbe(req: ReceivedRequest, basePath: string): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const h = req.headers;
  if (h.authorization !== undefined || h['x-public-key'] !== undefined || h['x-request-hash'] !== undefined) return false;
  const body = fullBody(req);
  if (body === undefined || body.length > 0) return false;
  const path = pathOf(req.rawUrl);
  const roots = ['/', `${basePath}/`, `${basePath}${API_ROOT}`, `${basePath}${API_ROOT.slice(0, -1)}`];
  return path === '' || roots.includes(path);
}

export function checkRequest(req: ReceivedRequest, ctx: CheckContext): CheckResult {
  const checked: string[] = [];
  const findings: Finding[] = [];
  const h = req.headers;
  const path = pathOf(req.rawUrl);
  const local = path.startsWith(ctx.basePath) ? path.slice(ctx.basePath.length) : undefined;

  checked.push('CLI-01');
  const ct = h['content-type'];
  if (ct === undefined || !isSpecContentType(ct)) {
    findings.push({
      clause: 'CLI-01',
      expected: `Content-Type: ${CONTENT_TYPE}`,
      actual: ct === undefined ? 'no Content-Type header' : `Content-Type: ${JSON.stringify(ct)}`,
    });
  }

  checked.push('CLI-02');
  const authz = single(h, 'authorization');
  const hmacHeaders = ['x-public-key', 'x-request-hash', 'x-request-timestamp'].filter((n) => h[n] !== undefined);
  const basic = authz !== undefined && /^basic\s/i.test(authz) ? parseBasic(authz) : undefined;
  if (hmacHeaders.length > 0 && hmacHeaders.length < 3) {
    findings.push({ clause: 'CLI-02', expected: 'X-Public-Key, X-Request-Hash and X-Request-Timestamp together', actual: `only ${hmacHeaders.join(', ')}` });
  } else if (hmacHeaders.length === 0 && basic === undefined) {
    findings.push({
      clause: 'CLI-02',
      expected: 'Authorization: Basic base64(username:password), or the three HMAC headers',
      actual:
        authz === undefined
          ? 'no Authorization header and no HMAC headers'
          : `Authorization with ${/^\S+/.exec(authz)?.[0] ?? 'an empty value'} and no HMAC headers`,
    });
  }

  checked.push('CLI-03');
  if (!path.endsWith('.json')) findings.push({ clause: 'CLI-03', expected: 'a path ending in .json', actual: JSON.stringify(path) });

  checked.push('CLI-04');
  if (local === undefined || !local.startsWith(API_ROOT)) {
    findings.push({ clause: 'CLI-04', expected: `a path under ${ctx.basePath}${API_ROOT}`, actual: JSON.stringify(path) });
  }

  const size = h['x-page-size'];
  if (size !== undefined) {
    checked.push('CLI-05');
    const ok = typeof size === 'string' && /^[0-9]{1,7}$/.test(size) && Number(size) >= PAGE_SIZE.min && Number(size) <= PAGE_SIZE.max;
    if (!ok)
      findings.push({
        clause: 'CLI-05',
        expected: `X-Page-Size: one unsigned integer from ${PAGE_SIZE.min} to ${PAGE_SIZE.max}`,
        actual: `X-Page-Size: ${shown(size)}`,
      });
  }

  if (hmacHeaders.length === 3) {
    const body = fullBody(req);
    const publicKey = single(h, 'x-public-key')!;
    const input = {
      rawUrl: req.rawUrl,
      publicKey,
      hash: single(h, 'x-request-hash'),
      timestamp: single(h, 'x-request-timestamp'),
      body: body ?? Buffer.alloc(0),
      privateKey: ctx.privateKeyOf(publicKey),
      nowMs: ctx.nowMs,
      windowSeconds: ctx.windowSeconds,
    };
    // A body the kit did not read whole cannot be hashed: the clause is not judged on it.
    if (body !== undefined) {
      checked.push('CLI-07');
      if (!verifiesAsProduct(input)) {
        const d = diagnoseHmac(input);
        if (d.verdict !== 'verified') {
          findings.push({
            clause: 'CLI-07',
            expected:
              'X-Request-Hash = lowercase hex HMAC-SHA256(private key, path after index.php/ with its query + Unix seconds + exact body), timestamp within the window',
            actual: describeDiagnosis(d, ctx.windowSeconds),
            hmac: d,
          });
        }
      }
    }
  }

  checked.push('CLI-08');
  if (!METHODS.has(req.method)) findings.push({ clause: 'CLI-08', expected: 'GET, POST, PUT or DELETE', actual: req.method });

  const body = fullBody(req);
  if (body !== undefined && body.length > 0) {
    checked.push('CLI-09');
    let text: string | undefined;
    try {
      text = utf8.decode(body);
    } catch {
      findings.push({ clause: 'CLI-09', expected: 'a body in UTF-8', actual: `${body.length} bytes that are not valid UTF-8` });
    }
    if (text !== undefined) {
      try {
        JSON.parse(text);
      } catch (e) {
        findings.push({ clause: 'CLI-09', expected: 'a JSON body', actual: `not JSON (${(e as Error).message})` });
      }
    }
  }
  return { checked, findings };
}
