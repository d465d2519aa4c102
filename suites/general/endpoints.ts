import type { ApiClient } from '../harness/client.ts';
import type { Role } from '../harness/control.ts';
import type { Exchange } from '../harness/exchange.ts';
import type { Session } from '../harness/session.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** The data a path or a body needs: objects the suite created for the file. */
export interface EndpointData {
  projectId: number;
  passwordId: number;
  /** The name given to the password: NON_ASCII_LABEL inside the run's label. */
  passwordName: string;
  /** A labelled name, `pmv6-<run>-<label>-<n>`, for bodies that create or rename. */
  name(label: string): string;
}

export interface Endpoint {
  method: Method;
  /** Relative to {base_url}/index.php/api/v6; `{id}` stands for the id that `id` names. */
  path: string;
  id?: 'password' | 'project';
  /** The JSON body of a POST or PUT. */
  body?: (d: EndpointData) => Record<string, unknown>;
  /** The success status: §4's table for the spec's paths, the product's for the others. */
  success: 200 | 201 | 204;
  /** A successful call creates this kind of object; `useEndpoints` deletes it afterwards. */
  creates?: 'project' | 'password';
  /** The roles that may call it, e.g. "only IT or Admin users may call it"; undefined: every role. */
  roles?: readonly Role[];
  /**
   * 'spec': the path is in §4's table. 'product': §4 does not show it and it comes from
   * ../shared/reference/product-facts.md; a 404 or 405 there is unverifiable, never a violation.
   */
  source: 'spec' | 'product';
}

/** §4's endpoint table. The resource suites extend it with the product's paths. */
export const ENDPOINTS: readonly Endpoint[] = [
  { method: 'GET', path: '/passwords.json', success: 200, source: 'spec' },
  { method: 'GET', path: '/passwords/page/1.json', success: 200, source: 'spec' },
  { method: 'GET', path: '/passwords/count.json', success: 200, source: 'spec' },
  { method: 'GET', path: '/passwords/{id}.json', id: 'password', success: 200, source: 'spec' },
  {
    method: 'POST',
    path: '/projects.json',
    body: (d) => ({ name: d.name('ep-project'), parent_id: 0 }),
    success: 201,
    creates: 'project',
    source: 'spec',
  },
  {
    method: 'POST',
    path: '/passwords.json',
    body: (d) => ({ name: d.name('ep-password'), project_id: d.projectId }),
    success: 201,
    creates: 'password',
    source: 'spec',
  },
  { method: 'GET', path: '/version.json', success: 200, source: 'spec' },
  { method: 'GET', path: '/version/check_latest.json', success: 200, roles: ['admin', 'it'], source: 'spec' },
];

/**
 * PUT and DELETE: §4 shows no path for them ("PUT and DELETE requests that return no content
 * answer 204 No Content"), so these are the product's. DELETE removes the password named by the
 * data: give it a disposable one.
 */
export const WRITE_ENDPOINTS: readonly Endpoint[] = [
  { method: 'PUT', path: '/projects/{id}.json', id: 'project', body: (d) => ({ name: d.name('ep-renamed') }), success: 204, source: 'product' },
  { method: 'DELETE', path: '/passwords/{id}.json', id: 'password', success: 204, source: 'product' },
];

/** A name with Latin-1, BMP and astral characters, so that UTF-8 checks see more than ASCII. */
export const NON_ASCII_LABEL = 'utf8-äöüß-€✓-中文-😀';

/** An id no installation is expected to have. */
export const UNKNOWN_ID = 2_000_000_001;

export function label(e: Pick<Endpoint, 'method' | 'path'>): string {
  return `${e.method} ${e.path}`;
}

export function pathOf(e: Endpoint, d: EndpointData): string {
  const path = e.id === undefined ? e.path : e.path.replace('{id}', String(e.id === 'password' ? d.passwordId : d.projectId));
  // §1: "Every URL ends in `.json`."
  if (!path.endsWith('.json')) throw new Error(`endpoint table: ${path} does not end in .json`);
  return path;
}

export interface CallOptions {
  /** Default application/json; charset=utf-8; null omits the header. */
  contentType?: string | null;
  headers?: Record<string, string>;
  /** Replaces the endpoint's method, e.g. PATCH. */
  method?: string;
}

export interface EndpointCalls {
  /** One project and one password with a non-ASCII name, created once per file through s.fixtures. */
  data(): Promise<EndpointData>;
  /** Sends the endpoint's request; an object it creates is deleted after the file. */
  call(client: ApiClient, e: Endpoint, d: EndpointData, opts?: CallOptions): Promise<Exchange>;
  /** Calls each endpoint in turn. */
  callEach(client: ApiClient, d: EndpointData, opts?: CallOptions, endpoints?: readonly Endpoint[]): Promise<Array<{ endpoint: Endpoint; ex: Exchange }>>;
}

// Objects created by calls to the table (not through s.fixtures) are handed to the fixtures,
// whose cleanup deletes them after the file (passwords first) and reports them.
export function useEndpoints(s: Session): EndpointCalls {
  let data: Promise<EndpointData> | undefined;
  const calls: EndpointCalls = {
    data() {
      data ??= (async () => {
        const projectId = await s.fixtures.createProject();
        const passwordName = s.fixtures.name(NON_ASCII_LABEL);
        const passwordId = await s.fixtures.createPassword(projectId, { name: passwordName });
        return { projectId, passwordId, passwordName, name: (l: string) => s.fixtures.name(l) };
      })();
      return data;
    },
    async call(client, e, d, opts = {}) {
      const ex = await client.request({
        method: opts.method ?? e.method,
        path: pathOf(e, d),
        ...(e.body ? { json: e.body(d) } : {}),
        ...(opts.contentType !== undefined ? { contentType: opts.contentType } : {}),
        ...(opts.headers ? { headers: opts.headers } : {}),
      });
      const status = ex.response?.status ?? 0;
      const id = (ex.json as { id?: unknown } | undefined)?.id;
      if (e.creates && status >= 200 && status < 300 && typeof id === 'number') {
        const body = e.body?.(d) as { name?: unknown } | undefined;
        s.fixtures.track(e.creates, id, typeof body?.name === 'string' ? body.name : '(unnamed)');
      }
      return ex;
    },
    async callEach(client, d, opts = {}, endpoints = ENDPOINTS) {
      const out: Array<{ endpoint: Endpoint; ex: Exchange }> = [];
      for (const endpoint of endpoints) out.push({ endpoint, ex: await calls.call(client, endpoint, d, opts) });
      return out;
    },
  };
  return calls;
}

export interface Reply {
  /** What was sent, e.g. "no credentials: GET /passwords.json". */
  what: string;
  ex: Exchange;
}

/**
 * Replies of many kinds, none needing the control protocol: every endpoint of the table as the
 * Admin, without credentials and without Content-Type; a wrong password; unknown ids; a page
 * above the last; an unknown path; a path without .json; a method other than the four.
 */
export async function variedReplies(s: Session, calls: EndpointCalls, d: EndpointData): Promise<Reply[]> {
  const replies: Reply[] = [];
  const add = (what: string, list: Array<{ endpoint: Endpoint; ex: Exchange }>) => {
    for (const { endpoint, ex } of list) replies.push({ what: `${what}: ${label(endpoint)}`, ex });
  };
  add('Admin', await calls.callEach(s.admin, d));
  add('no credentials', await calls.callEach(s.anonymous, d));
  add('Admin without Content-Type', await calls.callEach(s.admin, d, { contentType: null }));
  const wrong = s.admin.withAuth({ kind: 'basic', user: s.config.user, password: `${s.config.password}-wrong` });
  add('wrong password', await calls.callEach(wrong, d, {}, ENDPOINTS.filter((e) => e.method === 'GET' && e.id === undefined)));
  const unknown = { ...d, passwordId: UNKNOWN_ID, projectId: UNKNOWN_ID };
  // Decision: only GETs of the guessed id: on a real installation that id may exist, and the run
  // never changes or deletes an object it did not create.
  add('unknown id', await calls.callEach(s.admin, unknown, {}, ENDPOINTS.filter((e) => e.id !== undefined && e.method === 'GET')));
  const extra: Array<[string, Exchange]> = [
    ['page above the last: GET /passwords/page/99999999.json', await s.admin.get('/passwords/page/99999999.json')],
    ['unknown path: GET /pmv6-unknown.json', await s.admin.get('/pmv6-unknown.json')],
    ['path without .json: GET /passwords', await s.admin.get('/passwords')],
    ['method other than the four: PATCH /passwords.json', await s.admin.request({ method: 'PATCH', path: '/passwords.json', json: {} })],
  ];
  for (const [what, ex] of extra) replies.push({ what, ex });
  return replies;
}
