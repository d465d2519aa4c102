import type { Exchange } from '../../core/exchange.ts';
import { clip } from '../../core/redact.ts';
import { expectStatus, ReadOnlyError, violation } from '../harness/assert.ts';
import type { ApiClient } from '../harness/client.ts';
import { inOrder } from '../harness/in-order.ts';
import { itemIds } from '../harness/pages.ts';
import type { Session } from '../harness/session.ts';

export type Kind = 'project' | 'password';

function createdId(ex: Exchange): number | undefined {
  const status = ex.response?.status ?? 0;
  if (status < 200 || status > 299) return undefined;
  const id = (ex.json as { id?: unknown } | null | undefined)?.id;
  if (typeof id === 'number' && Number.isSafeInteger(id)) return id;
  if (typeof id === 'string' && /^[0-9]{1,15}$/.test(id)) return Number(id);
  return undefined;
}

/** A JSON body as an object, or as the exact text to send. */
export type Create = (kind: Kind, body: Record<string, unknown> | string, client?: ApiClient) => Promise<Exchange>;

/**
 * POST /projects.json or /passwords.json sent by the test itself, for tests whose subject is the
 * creation (a fixture would turn a wrong answer into setup-failed). Decision: whatever the server
 * creates, also when the test expected a refusal, is handed to the fixtures, whose cleanup deletes
 * it once the file is done (passwords before projects) and reports it.
 */
export function useCreations(s: Session): Create {
  return async (kind, body, client = s.admin) => {
    if (s.config.readOnly) throw new ReadOnlyError(`the test would create a ${kind}`);
    const path = `/${kind}s.json`;
    const ex = typeof body === 'string' ? await client.request({ method: 'POST', path, rawBody: body }) : await client.post(path, body);
    const id = createdId(ex);
    if (id !== undefined)
      await s.fixtures.track(kind, id, typeof body === 'string' ? nameIn(body) : String(body['name'] ?? '(unnamed)'), { creation: ex, lazy: true });
    return ex;
  };
}

function nameIn(raw: string): string {
  try {
    const name = (JSON.parse(raw) as { name?: unknown } | null)?.name;
    return typeof name === 'string' ? name : '(unnamed)';
  } catch {
    return '(unnamed)';
  }
}

/**
 * A fixture made on first use, inside the test that needs it. Decision: not in beforeAll, because
 * a failing hook is not attributed to the tests (they would not show as setup-failed).
 */
export function lazy<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

/** Every string value inside a JSON value (object keys excluded), depth first. */
export function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}

/** The path of keys under which `wanted` first appears as a string value, e.g. "project.name". */
export function whereIs(value: unknown, wanted: string, at = ''): string | undefined {
  if (value === wanted) return at || '(root)';
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const found = whereIs(v, wanted, at ? `${at}.${k}` : k);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** GET /passwords/<id>.json: 200 with a JSON object, returned. */
export async function showPassword(client: ApiClient, id: number): Promise<{ ex: Exchange; body: Record<string, unknown> }> {
  const ex = await client.get(`/passwords/${id}.json`);
  expectStatus(ex, 200);
  const body = ex.json;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    violation(ex, 'a JSON object with the data of the password', body === undefined ? 'a body that is not JSON' : clip(JSON.stringify(body), 200));
  }
  return { ex, body: body as Record<string, unknown> };
}

/**
 * Every item id of a paginated list, page by page with the largest page size the spec allows.
 * Returns the ids and the exchange of the page each id came from.
 */
export async function allListIds(client: ApiClient, list: string, inFlight = 1): Promise<Map<string, Exchange>> {
  const headers = { 'X-Page-Size': '1000' };
  const countEx = await client.get(`${list}/count.json`, { headers });
  expectStatus(countEx, 200);
  const pages = (countEx.json as { num_pages?: unknown } | undefined)?.num_pages;
  if (typeof pages !== 'number' || !Number.isSafeInteger(pages) || pages < 0) {
    violation(countEx, 'num_pages as a non-negative integer', JSON.stringify(pages));
  }
  // The pages are independent reads: `inFlight` of them at once, the same requests as one by one.
  const numbers = Array.from({ length: Math.max(pages, 1) }, (_, i) => i + 1);
  const exchanges = await inOrder(numbers, inFlight, (page) => client.get(`${list}/page/${page}.json`, { headers }));
  const out = new Map<string, Exchange>();
  for (const ex of exchanges) for (const id of itemIds(ex)) out.set(id, ex);
  return out;
}
