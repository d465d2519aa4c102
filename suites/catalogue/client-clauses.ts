/**
 * The client clause catalogue: the rules of spec/password-manager-api-v6.md that bind a client
 * (every library or integration that calls a v6 installation), once, as data, in the format of
 * `clauses.ts` (area CLI). The client kit (clients/) checks every request it receives against
 * them. Quotes are word for word from the spec; clients/test/client-catalogue.test.ts checks
 * every quote and the ID register `client-ids.json`.
 */
import { type Level, normalise } from './clauses.ts';

export { normalise };

export const CLIENT_AREAS = {
  CLI: 'Client requests',
} as const;

export type ClientArea = keyof typeof CLIENT_AREAS;

/** The same fields as `Clause`; `needsControl` is always false (the kit sees every request). */
export interface ClientClause {
  id: string;
  level: Level;
  area: ClientArea;
  section: string;
  quote: string;
  behaviour: string;
  needsControl: false;
  retired?: boolean;
}

const S = {
  gen: '1. What the service does › General rules',
  addr: '2. Resources and their fields › Request address',
  ep: '4. Endpoints',
  pag: '4. Endpoints › Pagination rules',
  auth: '5. Authentication',
} as const;

const C = (id: string, level: Level, section: string, quote: string, behaviour: string): ClientClause => ({
  id,
  level,
  area: id.split('-')[0] as ClientArea,
  section,
  quote,
  behaviour,
  needsControl: false,
});

// HMAC: the spec says only that the keys "are used to compute a hash of the request" and that the
// calculation is "not shown", so signing as the real product computes it (product facts §2.2) is
// INFO, as its server-side twin AUTH-03 is. A request with HMAC headers that does not verify is
// still authenticated in the sense of CLI-02 (it carries authentication); CLI-07 says why it fails.

export const CLIENT_CLAUSES: readonly ClientClause[] = [
  C(
    'CLI-01',
    'MUST',
    S.ep,
    'Every request carries the header `Content-Type: application/json; charset=utf-8` and authentication (section 5).',
    'send Content-Type: application/json; charset=utf-8 on every request',
  ),
  C('CLI-02', 'MUST', S.auth, 'Every request must be authenticated.', 'authenticate every request with HTTP Basic or all three HMAC headers'),
  C('CLI-03', 'MUST', S.gen, 'Every URL ends in `.json`.', 'end the path of every request in .json'),
  C(
    'CLI-04',
    'MUST',
    S.addr,
    'Every request goes to `{base_url}/index.php/api/v6/<resource_and_parameters>.json`',
    'send every request under {base_url}/index.php/api/v6/',
  ),
  C('CLI-05', 'MUST', S.pag, 'Its value is an unsigned integer from 5 to 1000 inclusive.', 'send X-Page-Size only as one unsigned integer from 5 to 1000'),
  C(
    'CLI-06',
    'MUST',
    S.pag,
    'To get correct counts for a page size, send the same X-Page-Size with the count request.',
    'ask a count with the same X-Page-Size as the list it counts',
  ),
  C(
    'CLI-07',
    'INFO',
    S.auth,
    'the user\'s HMAC API keys (shown in the "API Keys" tab of the user\'s account) are used to compute a hash of the request',
    'sign HMAC requests as the product computes the hash, with a timestamp within the window',
  ),
  C('CLI-08', 'MUST', S.gen, 'The API uses HTTP methods GET, POST, PUT and DELETE.', 'use only the methods GET, POST, PUT and DELETE'),
  C('CLI-09', 'MUST', S.gen, 'All request and response bodies are JSON in UTF-8.', 'send every request body as JSON in UTF-8'),
];

const BY_ID = new Map(CLIENT_CLAUSES.map((c) => [c.id, c]));

export function clientClauseById(id: string): ClientClause | undefined {
  return BY_ID.get(id);
}
