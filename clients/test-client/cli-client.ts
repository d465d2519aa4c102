/**
 * A client as a command, for `pmv6 clients run`: it creates a password, lists every password
 * (following Link rel="next") and deletes the one it made, and prints what it did. Base URL and
 * credentials come from the environment the kit gives (PMV6_API_URL, PMV6_USER, PMV6_PASSWORD,
 * PMV6_PROJECT_ID). With `--bug NAME` it has one of the bugs real third-party clients were seen
 * with (issue 29), so that the tests show `clients run` catches each under its scenario:
 *
 * - `crash-on-missing-next`: reads the next link without looking (a KeyError on the last page);
 * - `no-timeout`: waits for a reply for ever;
 * - `swallow-errors`: an error answer is an empty list, exit 0;
 * - `first-page-only`: takes the first page for the whole list;
 * - `secret-in-error`: prints the body it sent (the new password) in its error message;
 * - `crash-on-odd-replies`: trusts every reply to be whole JSON with a known error type (crashes
 *   on a proxy's HTML page, an unknown error `type`, a body cut mid-way).
 */
const BUGS = ['crash-on-missing-next', 'no-timeout', 'swallow-errors', 'first-page-only', 'secret-in-error', 'crash-on-odd-replies'] as const;
type Bug = (typeof BUGS)[number];

const arg = process.argv.indexOf('--bug');
const bug = arg >= 0 ? (process.argv[arg + 1] as Bug) : undefined;
if (bug !== undefined && !BUGS.includes(bug)) {
  process.stderr.write(`cli-client: --bug must be one of ${BUGS.join(', ')}\n`);
  process.exit(2);
}

const api = process.env.PMV6_API_URL ?? '';
const auth = `Basic ${Buffer.from(`${process.env.PMV6_USER}:${process.env.PMV6_PASSWORD}`).toString('base64')}`;

class ApiError extends Error {}

/** The error types this client maps to its own errors (the bug crash-on-odd-replies knows no other). */
const KNOWN_TYPES: Record<string, string> = {
  'Bad Request': 'invalid request',
  Unauthorized: 'not signed in',
  Forbidden: 'forbidden',
  'Not Found': 'not found',
  'Unsupported Media Type': 'unsupported media type',
  'Internal Server Error': 'server error',
  'Service Unavailable': 'unavailable',
};

async function call(method: string, url: string, body?: unknown): Promise<{ status: number; link: string; json: unknown }> {
  const res = await fetch(url, {
    method,
    headers: { authorization: auth, 'content-type': 'application/json; charset=utf-8', 'user-agent': `pmv6-cli-client/${bug ?? 'conforming'}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    ...(bug === 'no-timeout' ? {} : { signal: AbortSignal.timeout(5_000) }),
  });
  if (bug === 'crash-on-odd-replies') {
    const json = JSON.parse(await res.text()) as { type?: string; message?: string } | undefined;
    if (res.status >= 400) throw new ApiError(`${method} ${url.slice(api.length)}: ${KNOWN_TYPES[json!.type!]!.toUpperCase()}: ${json!.message}`);
    return { status: res.status, link: res.headers.get('link') ?? '', json };
  }
  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    throw new ApiError(`${method} ${url.slice(api.length)}: ${res.status}, the reply was cut off: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    throw new ApiError(
      `${method} ${url.slice(api.length)}: HTTP ${res.status} ${res.statusText}, not JSON (${res.headers.get('content-type') ?? 'no content type'})`,
    );
  }
  if (res.status >= 400) {
    const message = (json as { message?: string } | undefined)?.message ?? `HTTP ${res.status}`;
    throw new ApiError(`${method} ${url.slice(api.length)}: ${res.status} ${message}`);
  }
  return { status: res.status, link: res.headers.get('link') ?? '', json };
}

function next(link: string): string | undefined {
  const links: Record<string, string> = {};
  for (const m of link.matchAll(/<([^>]*)>\s*;\s*rel="?([a-z]+)"?/g)) links[m[2]!] = m[1]!;
  if (bug === 'crash-on-missing-next') {
    const on = links.next as unknown as { toString(): string };
    return on.toString(); // the bug: no rel="next" on the last page
  }
  return links.next;
}

async function listAll(path: string): Promise<unknown[]> {
  const items: unknown[] = [];
  let url: string | undefined = `${api}${path}`;
  while (url !== undefined) {
    let page: Awaited<ReturnType<typeof call>>;
    try {
      page = await call('GET', url);
    } catch (e) {
      if (bug === 'swallow-errors') return items;
      throw e;
    }
    items.push(...(page.json as unknown[]));
    url = bug === 'first-page-only' ? undefined : next(page.link);
  }
  return items;
}

async function main(): Promise<void> {
  const secret = `cli-client-${Math.random().toString(36).slice(2)}-pw`;
  const body = { name: 'pmv6-cli-client', project_id: Number(process.env.PMV6_PROJECT_ID), password: secret };
  let id: number;
  try {
    id = ((await call('POST', `${api}passwords.json`, body)).json as { id: number }).id;
  } catch (e) {
    if (bug === 'swallow-errors') return;
    if (bug === 'secret-in-error') throw new ApiError(`could not create ${JSON.stringify(body)}: ${(e as Error).message}`);
    throw e;
  }
  const passwords = await listAll('passwords.json');
  process.stdout.write(`${passwords.length} passwords\n`);
  await call('DELETE', `${api}passwords/${id}.json`);
  process.stdout.write(`created and deleted password ${id}\n`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    // A clean failure: one line with the server's message (a bug's TypeError crashes instead).
    if (e instanceof ApiError || (e instanceof Error && e.name === 'TimeoutError')) {
      process.stderr.write(`cli-client: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  },
);
