/**
 * The clause catalogue: every testable normative statement of
 * spec/password-manager-api-v6.md, once, as data. See README.md in this folder.
 *
 * Quotes are copied word for word from the spec; `normalise()` is the only transformation
 * allowed between a quote and the spec text (test/catalogue.test.ts checks every quote).
 */

export type Level = 'MUST' | 'SHOULD' | 'INFO';

export const AREAS = {
  GEN: 'General rules',
  OPS: 'Operations per resource',
  ADDR: 'Request address',
  RES: 'Resources and creation inputs',
  EP: 'Endpoints',
  STAT: 'Response kinds and status codes',
  PAG: 'Pagination',
  SIZE: 'Page size',
  AUTH: 'Authentication',
  ERR: 'Known error conditions',
  LOG: 'Action log',
  VER: 'Versioning',
  LIM: 'Limits',
} as const;

export type Area = keyof typeof AREAS;

export interface Clause {
  id: string;
  level: Level;
  area: Area;
  section: string;
  quote: string;
  behaviour: string;
  needsControl: boolean;
  retired?: boolean;
  /**
   * Clauses whose pass is a precondition for this one to be verifiable. When one of them does
   * not pass, this clause is skipped-unverifiable, never failed (cache-tests' depends_on).
   */
  dependsOn?: string[];
  /**
   * Kinds of finding a report shows apart, whatever the clause's level: `exposure`, one user's
   * personal data in sight of another (every report opens with them, reporters/README.md).
   */
  tags?: readonly ClauseTag[];
  /**
   * The clause is about HTTP Basic: a run that signs in with HMAC only (the installation refuses
   * Basic, RunConfig.signIn) reports it skipped-unverifiable, never judged from HMAC traffic.
   */
  needsBasic?: true;
}

export type ClauseTag = 'exposure';
export const TAGS: Record<ClauseTag, string> = { exposure: 'Cross-user exposure of personal data' };

/**
 * The normalisation rule: runs of whitespace (spaces, tabs, line breaks) collapse to one space
 * and the ends are trimmed. Applied to the spec and to each quote before the substring check.
 * Nothing else is stripped: table-row quotes keep the ` | ` cell separators exactly as the
 * spec's source row has them, and backticks and quotation marks stay.
 */
export function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

const S = {
  gen: '1. What the service does › General rules',
  ops: '1. What the service does › Operations offered per resource',
  addr: '2. Resources and their fields › Request address',
  project: '2. Resources and their fields › Project (creation input)',
  password: '2. Resources and their fields › Password (creation input)',
  count: '2. Resources and their fields › Count object (returned by count endpoints)',
  version: '2. Resources and their fields › Version object',
  error: '2. Resources and their fields › Error object',
  notShown: '2. Resources and their fields › Not shown',
  ep: '4. Endpoints',
  epGeneral: '4. Endpoints › General paths',
  pag: '4. Endpoints › Pagination rules',
  auth: '5. Authentication',
  authConfig: '5. Authentication › Configuration (settings)',
  errKinds: '7. Errors',
  errKnown: '7. Errors › Known error conditions',
  lim: '8. Limits',
  ver: '9. Versioning',
} as const;

const C = (
  id: string,
  level: Level,
  section: string,
  quote: string,
  behaviour: string,
  needsControl = false,
  extra: Pick<Clause, 'retired' | 'dependsOn' | 'tags' | 'needsBasic'> = {},
): Clause => ({ id, level, area: id.split('-')[0] as Area, section, quote, behaviour, needsControl, ...extra });

// HMAC: the spec says only that the keys "are used to compute a hash of the request" and that
// the calculation is "not shown". Accepting a correctly signed request can therefore only be
// INFO (AUTH-03, signed as the real product computes it). A clause that expects HMAC to be
// refused is MUST, but it proves something only when a correct signature is accepted, so it
// depends on AUTH-03 and is unverifiable when AUTH-03 does not pass.
const HMAC = { dependsOn: ['AUTH-03'] };
const BASIC = { needsBasic: true } as const;

// Paths that the spec does not show (PUT/DELETE targets, the log resource) come from
// ../shared/reference/product-facts.md; a 404 or 405 at such a path makes the check
// unverifiable, never a violation, because the spec does not promise the path.

export const CLAUSES: readonly Clause[] = [
  // ── GEN: section 1, general rules ────────────────────────────────────────────────────────
  C('GEN-01', 'MUST', S.gen, 'The API uses HTTP methods GET, POST, PUT and DELETE.', 'serve its operations through the methods GET, POST, PUT and DELETE'),
  C('GEN-02', 'INFO', S.gen, 'The API uses HTTP methods GET, POST, PUT and DELETE.', 'record the reply to a method other than GET, POST, PUT and DELETE'),
  C('GEN-03', 'MUST', S.gen, 'All request and response bodies are JSON in UTF-8.', 'return every response body as JSON'),
  C('GEN-04', 'MUST', S.gen, 'All request and response bodies are JSON in UTF-8.', 'encode every response body in UTF-8'),
  C('GEN-05', 'INFO', S.gen, 'All request and response bodies are JSON in UTF-8.', 'record the reply to a request body that is not valid JSON'),
  C('GEN-06', 'MUST', S.gen, 'Every URL ends in `.json`.', 'end every URL it hands out, such as Link targets, in .json'),
  C(
    'GEN-07',
    'MUST',
    S.gen,
    'Any active user can use the API with their own credentials.',
    'let an active user of any role call the API with their own credentials',
    true,
  ),
  // "Any active user" names who may use the API; that a deactivated user may not is implied
  // rather than said, so SHOULD.
  C(
    'GEN-15',
    'SHOULD',
    S.gen,
    'Any active user can use the API with their own credentials.',
    "refuse a deactivated user's own credentials, over HTTP Basic and HMAC",
    true,
  ),
  // Credentials a user no longer holds (a password replaced through the product's
  // users/ID/change_password.json, HMAC keys renewed: "after which the old keys stop working",
  // product facts §2.1 and §6) are no longer "their own credentials"; that they stop working is
  // implied rather than said, and the paths are the product's, so SHOULD. The new ones are the
  // user's own and GEN-07 holds them to it.
  C(
    'GEN-18',
    'SHOULD',
    S.gen,
    'Any active user can use the API with their own credentials.',
    'refuse at once the credentials a user no longer holds: the old password after a change, the old HMAC keys after a renewal',
    true,
  ),
  // The web interface is out of sight, but "the user's permissions through the API" are one set
  // whichever method authenticates the request: the same request by the same user gets the same
  // answer over HTTP Basic and over HMAC (suites/relations/, rule basic-hmac).
  C(
    'GEN-16',
    'MUST',
    S.gen,
    "The user's permissions through the API equal the permissions in the web interface",
    'give a user the same answer to the same request over HTTP Basic and over HMAC',
  ),
  C('GEN-08', 'MUST', S.gen, 'a user with the "Admin" role sees all resources', 'show an Admin user resources created by other users', true),
  C('GEN-09', 'MUST', S.gen, 'users with other roles see fewer', 'hide from a user without the Admin role the resources they have no access to', true),
  // Cross-user exposure of personal data (suites/model/personal.ts): the product keeps a personal
  // password its owner's alone (product facts §6, my_passwords), so another user's sight of it is
  // SHOULD; whether an Admin sees them is open (a lawful variant). Reported first in every report.
  C(
    'GEN-17',
    'SHOULD',
    S.gen,
    'users with other roles see fewer',
    "show no user without the Admin role another user's personal passwords or favorites, nor let them change one",
    true,
    { tags: ['exposure'] },
  ),
  C('GEN-10', 'MUST', S.gen, 'API access is switched on and off globally in the settings.', 'switch API access on and off for all users at once', true),
  C('GEN-11', 'MUST', S.gen, 'It is off by default', 'keep API access off in the default settings', true),
  C(
    'GEN-12',
    'MUST',
    S.gen,
    'Allowed values are: all users (default), or only users flagged "API only".',
    'let users not flagged "API only" call the API under the default setting',
    true,
  ),
  C(
    'GEN-13',
    'MUST',
    S.gen,
    'Allowed values are: all users (default), or only users flagged "API only".',
    'refuse users not flagged "API only" while the API is restricted to them',
    true,
  ),
  C(
    'GEN-14',
    'MUST',
    S.gen,
    'Allowed values are: all users (default), or only users flagged "API only".',
    'accept users flagged "API only" while the API is restricted to them',
    true,
  ),

  // ── OPS: section 1, operations offered per resource ──────────────────────────────────────
  // The table says WHICH operations each resource offers; "Their paths and payloads are under
  // Endpoints", and §4 shows only a few of them. So every row is INFO: each operation is called
  // at the product's path (product facts §6) with the product's payload, and a row whose
  // operation is missing there is a warning. The Version and Log rows are RESTATED (§4's
  // version endpoints, VER-08).
  C(
    'OPS-01',
    'INFO',
    S.ops,
    'Projects | list, show, create, update, list passwords of a project, list users who can access the project, archive/unarchive, list files, upload a file, delete',
    'offer the projects operations list, show, create, update, list passwords, list users with access, archive/unarchive, list files, upload a file and delete',
  ),
  C(
    'OPS-02',
    'INFO',
    S.ops,
    'Passwords | list, show, create, update, update security, update custom fields definitions, list users who can access the password, delete, archive/unarchive, move, list files, upload a file, lock/unlock',
    'offer the passwords operations list, show, create, update, update security, update custom fields, list users with access, delete, archive/unarchive, move, list files, upload a file and lock/unlock',
  ),
  C('OPS-03', 'INFO', S.ops, 'My Passwords | list, show, create, update, delete', 'offer the my passwords operations list, show, create, update and delete'),
  C(
    'OPS-04',
    'INFO',
    S.ops,
    'Files | list, show, update notes of a file, get the maximum upload file size, get uploads folder information, upload, download, delete',
    'offer the files operations list, show, update notes, maximum upload size, uploads folder information, upload, download and delete',
  ),
  C(
    'OPS-05',
    'INFO',
    S.ops,
    'Favorites | list favorite passwords and projects of the user, make a password/project favorite, make a password/project not favorite',
    'offer the favorites operations list, make favorite and make not favorite, for passwords and projects',
  ),
  C(
    'OPS-06',
    'INFO',
    S.ops,
    'Users | list, show, create, update, activate/deactivate, convert to ldap/normal, delete',
    'offer the users operations list, show, create, update, activate/deactivate, convert to ldap/normal and delete',
  ),
  C(
    'OPS-07',
    'INFO',
    S.ops,
    'Groups | list, show, create, update, add user to group, delete user from group, delete',
    'offer the groups operations list, show, create, update, add user, delete user and delete',
  ),
  C('OPS-08', 'INFO', S.ops, 'Passwords generator | return a strong random password made with the current generator settings', 'offer the password generator'),
  // The effects of the operations §1 names, at the product's paths (product facts §6), read back
  // by each user they concern (suites/model/: files.ts, personal.ts, passwords.ts). SHOULD: the
  // operation is the spec's, its path and payload the product's; "Transitions: not shown", so
  // only what the operation's name says is asserted (an upload is then listed, a deletion is not).
  C(
    'OPS-09',
    'SHOULD',
    S.ops,
    'Files | list, show, update notes of a file, get the maximum upload file size, get uploads folder information, upload, download, delete',
    'carry out each files operation at once: an uploaded file listed, shown with its name and notes and downloaded byte for byte by each user who may read it, a deleted one neither, an upload over the maximum refused and not listed',
  ),
  C(
    'OPS-10',
    'SHOULD',
    S.ops,
    'My Passwords | list, show, create, update, delete',
    "carry out each my passwords operation for its owner at once: a created one shown and listed, an updated one shown with its new name, a deleted one neither, a favorite one in the owner's favorites",
    true,
  ),
  C(
    'OPS-11',
    'SHOULD',
    S.ops,
    'Favorites | list favorite passwords and projects of the user, make a password/project favorite, make a password/project not favorite',
    "list a password or project in the user's own favorites as soon as it is made favorite and never after it is unmade, and never another user's favorites",
    true,
  ),
  C(
    'OPS-12',
    'SHOULD',
    S.ops,
    'Passwords | list, show, create, update, update security, update custom fields definitions, list users who can access the password, delete, archive/unarchive, move, list files, upload a file, lock/unlock',
    "carry out lock/unlock, archive/unarchive, move and update security at once: a locked password shown in full only with X-Unlock-Reason, an archived one in the archived list, a moved one in its new project's passwords, a grantee reading it",
    true,
  ),

  // The effects of the operations §1 names, at the product's paths (product facts §6), read back by
  // each user they concern: SHOULD, since the spec names the operation and the product the path and
  // payload (issue 35). What only the spec's words require stays at MUST under GEN-07, GEN-08 and
  // GEN-09 (a promoted Admin sees all, a demoted user sees fewer, an active user is answered).
  C(
    'OPS-13',
    'SHOULD',
    S.ops,
    'Users | list, show, create, update, activate/deactivate, convert to ldap/normal, delete',
    "carry out each users operation at once, as the Admin's show and the changed user's own requests read it back: a role change both ways, a conversion to ldap (its login_dn shown) and back to normal (its password working)",
    true,
  ),
  C(
    'OPS-14',
    'SHOULD',
    S.ops,
    'Groups | list, show, create, update, add user to group, delete user from group, delete',
    'carry out each groups operation at once: a created or renamed group shown and listed with its name, a deleted one neither shown nor listed, a user added or removed shown as a member or not',
  ),
  C(
    'OPS-15',
    'SHOULD',
    S.ops,
    'Passwords | list, show, create, update, update security, update custom fields definitions, list users who can access the password, delete, archive/unarchive, move, list files, upload a file, lock/unlock',
    "show a password's custom field definitions as last updated through PUT passwords/ID/custom_fields.json, to the Admin and to a user who may read it",
  ),
  // "made with the current generator settings": the settings are the installation's (set here
  // through the control protocol), the path is the product's: SHOULD. "random": never the same
  // answer twice (the same SHOULD; OPS-08 stays the INFO record that the generator is offered).
  C(
    'OPS-16',
    'SHOULD',
    S.ops,
    'Passwords generator | return a strong random password made with the current generator settings',
    'return a new password at every call, of the length and the character classes the current generator settings give',
    true,
  ),

  // ── ADDR: section 2, request address ─────────────────────────────────────────────────────
  C(
    'ADDR-01',
    'MUST',
    S.addr,
    'Every request goes to `{base_url}/index.php/api/v6/<resource_and_parameters>.json`, where `{base_url}` is the address of the installation.',
    'serve the API under {base_url}/index.php/api/v6/',
  ),
  C('ADDR-02', 'SHOULD', S.addr, 'https is recommended.', 'serve the API over https'),
  // The spec promises http only for installations that themselves use http; what an https
  // installation does on plain http is up to it.
  C('ADDR-03', 'INFO', S.addr, 'Plain http also works if the installation itself uses http', 'record whether an https installation also answers on plain http'),

  // ── RES: section 2, creation inputs and objects ──────────────────────────────────────────
  C('RES-01', 'MUST', S.ep, 'JSON object: name (required), parent_id', 'refuse to create a project without name'),
  C('RES-02', 'MUST', S.project, 'parent_id | integer | no | 0 makes the project a root project', 'create a root project when parent_id is 0'),
  C('RES-03', 'MUST', S.project, 'parent_id | integer | no | 0 makes the project a root project', 'create a project when parent_id is omitted'),
  C('RES-04', 'MUST', S.project, 'Successful creation returns an object with `id` (integer, the new project id).', "return the new project's id as an integer"),
  C('RES-05', 'MUST', S.ep, 'JSON object: name and project_id (required)', 'refuse to create a password without name'),
  C('RES-06', 'MUST', S.ep, 'JSON object: name and project_id (required)', 'refuse to create a password without project_id'),
  C(
    'RES-07',
    'MUST',
    S.ep,
    'optional tags, access_info, username, email, password',
    'create a password with tags, access_info, username, email and password set',
  ),
  C(
    'RES-08',
    'MUST',
    S.password,
    'Successful creation returns an object with `id` (integer, the new password id).',
    "return the new password's id as an integer",
  ),
  C('RES-09', 'MUST', S.password, 'A password is addressed by its internal integer id.', 'address a password by the integer id returned at creation'),
  C('RES-10', 'INFO', S.password, 'A password is addressed by its internal integer id.', 'record the reply to a password id that does not exist'),
  C(
    'RES-11',
    'MUST',
    S.count,
    'Count object (returned by count endpoints)',
    'return num_items, num_pages and num_items_per_page as integers in the count object',
  ),
  C('RES-12', 'MUST', S.version, 'version | string | software version, dotted numbers', 'return version as a string of dotted numbers'),
  C('RES-13', 'MUST', S.version, 'version_date | string | release date, format YYYY-MM-DD', 'return version_date as a YYYY-MM-DD date string'),
  C('RES-14', 'MUST', S.error, 'error | boolean | always true', 'set error to true in every error object'),
  // "description of the status code" paraphrases: a non-empty type string is MUST, its wording
  // (the reason phrase or the number) is SHOULD (RES-18).
  C('RES-15', 'MUST', S.error, 'type | string | description of the status code', 'give a type string in every error object'),
  C('RES-16', 'MUST', S.error, 'message | string | reason for the failure', "give the reason for the failure in the error object's message string"),
  C(
    'RES-18',
    'SHOULD',
    S.error,
    'type | string | description of the status code',
    "describe the status code in the error object's type, e.g. by its reason phrase",
  ),
  C(
    'RES-17',
    'INFO',
    S.notShown,
    'Fields of the project and password records as returned by list and show: not shown.',
    'record the fields of project and password records returned by list and show',
  ),
  // parent_id is a creation input of §2; where a child is listed (projects/ID/subprojects.json and
  // its new_pwd form) and how it moves (projects/ID/change_parent.json) are the product's (product
  // facts §6): SHOULD.
  C(
    'RES-19',
    'SHOULD',
    S.project,
    'parent_id | integer | no | 0 makes the project a root project',
    "list a project created with a parent_id among that parent's subprojects at once, and no longer once moved to another parent or deleted",
  ),

  // ── EP: section 4, the endpoint table and general paths ──────────────────────────────────
  C(
    'EP-01',
    'MUST',
    S.ep,
    'Every request carries the header `Content-Type: application/json; charset=utf-8` and authentication (section 5).',
    'accept requests that carry Content-Type: application/json; charset=utf-8',
  ),
  C(
    'EP-02',
    'MUST',
    S.ep,
    'GET | /passwords.json | nothing | 200 OK, JSON array of the passwords the user can access; paginated',
    'answer GET /passwords.json with 200 OK and a JSON array',
  ),
  C(
    'EP-03',
    'MUST',
    S.ep,
    'GET | /passwords.json | nothing | 200 OK, JSON array of the passwords the user can access; paginated',
    'list in GET /passwords.json only the passwords the user can access',
    true,
  ),
  C(
    'EP-04',
    'MUST',
    S.ep,
    'GET | /passwords.json | nothing | 200 OK, JSON array of the passwords the user can access; paginated',
    'paginate GET /passwords.json',
  ),
  C(
    'EP-05',
    'MUST',
    S.ep,
    'GET | /passwords/page/<page>.json | nothing | 200 OK, the requested page of the list',
    'answer GET /passwords/page/<page>.json with 200 OK and that page of the list',
  ),
  C(
    'EP-06',
    'MUST',
    S.ep,
    'GET | /passwords/count.json | optional header X-Page-Size | 200 OK, count object',
    'answer GET /passwords/count.json with 200 OK and a count object',
  ),
  C(
    'EP-07',
    'MUST',
    S.ep,
    'GET | /passwords/<password_id>.json | nothing | 200 OK, all data of the password',
    'answer GET /passwords/<password_id>.json with 200 OK and the password',
  ),
  C(
    'EP-08',
    'MUST',
    S.ep,
    'POST | /projects.json | JSON object: name (required), parent_id | 201 Created, object with id',
    'answer POST /projects.json with 201 Created and an object with id',
  ),
  C(
    'EP-09',
    'MUST',
    S.ep,
    'POST | /passwords.json | JSON object: name and project_id (required), optional tags, access_info, username, email, password | 201 Created, object with id',
    'answer POST /passwords.json with 201 Created and an object with id',
  ),
  C(
    'EP-10',
    'MUST',
    S.ep,
    'GET | /version.json | nothing | 200 OK, version object without latest_version',
    'answer GET /version.json with 200 OK and a version object',
  ),
  C(
    'EP-11',
    'MUST',
    S.ep,
    'GET | /version/check_latest.json | nothing | 200 OK, version object with latest_version; only IT or Admin users may call it',
    'answer GET /version/check_latest.json for an Admin with 200 OK and a version object',
  ),
  // Which resources are paginated is not shown; the check covers passwords and any list the
  // suite has seen answer with a Link header.
  C(
    'EP-12',
    'MUST',
    S.epGeneral,
    'A count endpoint `/<resource>/count.json` exists for resources that are paginated; the example given is passwords.',
    'serve /<resource>/count.json for a paginated resource',
  ),
  C(
    'EP-13',
    'MUST',
    S.epGeneral,
    'A page endpoint `/<resource>/page/<page>.json` exists for paginated resources.',
    'serve /<resource>/page/<page>.json for a paginated resource',
  ),

  // ── STAT: section 7, kinds of response (and the 204 rule of section 4) ───────────────────
  // 503 (Maintenance Mode, ERR-04) is none of the three kinds, so STAT-01 excludes it.
  C(
    'STAT-01',
    'MUST',
    S.errKinds,
    'Every call returns one of three kinds of response.',
    'answer every call outside Maintenance Mode with a 2XX, a 4XX or a 500',
  ),
  C('STAT-02', 'SHOULD', S.errKinds, 'usually 200 OK for GET', 'answer a successful GET with 200 OK'),
  C('STAT-03', 'SHOULD', S.errKinds, '201 Created for POST that creates', 'answer a successful POST that creates with 201 Created'),
  // Section 4 states this without "usually", so it is MUST; section 7's softer wording of the
  // same rule is listed in RESTATED.
  C(
    'STAT-04',
    'MUST',
    S.epGeneral,
    'PUT and DELETE requests that return no content answer 204 No Content.',
    'answer a PUT or DELETE that returns no content with 204 No Content',
  ),
  C('STAT-05', 'MUST', S.errKinds, 'JSON object or array when there is content', 'send a JSON object or array as the body of a success with content'),
  C('STAT-06', 'MUST', S.errKinds, 'Client error | 4XX | error object (section 2)', 'send the error object as the body of every 4XX response'),
  C(
    'STAT-07',
    'MUST',
    S.errKinds,
    '500 Internal Server Error (unhandled exception on the server)',
    'answer an unhandled exception on the server with 500 Internal Server Error',
    true,
  ),
  C(
    'STAT-08',
    'MUST',
    S.errKinds,
    'Server error | 500 Internal Server Error (unhandled exception on the server) | JSON object describing the error',
    'describe a 500 error in a JSON object body',
    true,
  ),

  // ── PAG: section 4, pagination rules 1 to 5 ──────────────────────────────────────────────
  C(
    'PAG-01',
    'MUST',
    S.pag,
    'A list response that is paginated carries a `Link` header with link relations (rel): self, prev, next, first, last.',
    'send a Link header with a paginated list response',
  ),
  C(
    'PAG-02',
    'MUST',
    S.pag,
    'Each entry is the URL of a page in angle brackets followed by `rel="<name>"`.',
    'write each Link entry as a URL in angle brackets followed by rel="<name>"',
  ),
  C('PAG-03', 'MUST', S.pag, 'On the first page, rel prev is not returned.', 'omit rel="prev" on the first page'),
  C('PAG-04', 'MUST', S.pag, 'On the last page, rel next is not returned.', 'omit rel="next" on the last page'),
  C('PAG-05', 'MUST', S.pag, 'When the result has one page or no data, only rel self is returned.', 'return only rel="self" when the result has one page'),
  C('PAG-06', 'MUST', S.pag, 'When the result has one page or no data, only rel self is returned.', 'return only rel="self" when the result has no data', true),
  C(
    'PAG-07',
    'MUST',
    S.pag,
    'link relations (rel): self, prev, next, first, last',
    'send self, prev, next, first and last on every page of a list of several pages, less prev on the first and next on the last',
  ),
  // The spec names the relations but not their targets; the registered meaning of each name
  // (RFC 8288, IANA link relations) is taken as the requirement.
  C('PAG-08', 'MUST', S.pag, 'Each entry is the URL of a page', 'point self, prev, next, first and last at the pages their names say'),
  C('PAG-09', 'MUST', S.pag, 'Requesting no page, page 0 or page 1 returns the first page.', 'return the first page for no page, page 0 and page 1'),
  C('PAG-10', 'INFO', S.pag, 'Requesting no page, page 0 or page 1 returns the first page.', 'record the reply to a negative or non-numeric page number'),
  C(
    'PAG-11',
    'MUST',
    S.pag,
    'A page number above the last page gives 404 Not Found with the message "The page number is too high".',
    'answer a page above the last with 404 Not Found and the message "The page number is too high"',
  ),

  // ── SIZE: section 4, pagination rules 6 to 8, and the page-size rows of section 8 ────────
  // SIZE-01 needs control because an installation may have changed NUM_ITEMS_LISTS.
  C('SIZE-01', 'MUST', S.pag, 'Page size defaults to 20 items', 'put 20 items on a page by default', true),
  C('SIZE-02', 'MUST', S.pag, 'the installation setting NUM_ITEMS_LISTS changes it', 'use NUM_ITEMS_LISTS as the default page size', true),
  C(
    'SIZE-03',
    'MUST',
    S.pag,
    'The request header `X-Page-Size` sets the page size for that request only.',
    'use the X-Page-Size of a request as its page size',
  ),
  C(
    'SIZE-04',
    'MUST',
    S.pag,
    'The request header `X-Page-Size` sets the page size for that request only.',
    'keep X-Page-Size from changing the page size of later requests',
  ),
  C('SIZE-05', 'MUST', S.pag, 'Its value is an unsigned integer from 5 to 1000 inclusive.', 'accept X-Page-Size 5 and 1000'),
  // The spec gives the range but not the reply outside it.
  C('SIZE-06', 'INFO', S.pag, 'Its value is an unsigned integer from 5 to 1000 inclusive.', 'record the reply to X-Page-Size below 5'),
  C('SIZE-07', 'INFO', S.pag, 'Its value is an unsigned integer from 5 to 1000 inclusive.', 'record the reply to X-Page-Size above 1000'),
  C(
    'SIZE-08',
    'INFO',
    S.pag,
    'Its value is an unsigned integer from 5 to 1000 inclusive.',
    'record the reply to an X-Page-Size that is not an unsigned integer',
  ),
  C(
    'SIZE-09',
    'MUST',
    S.pag,
    'To get correct counts for a page size, send the same X-Page-Size with the count request.',
    'compute num_items_per_page and num_pages of count.json from the X-Page-Size sent with it',
  ),
  // The range is stated; the reply outside it is not (SIZE-06..08 record it). Serving a page of
  // 4 or 2,000 items, or counting with them, goes against the stated range: SHOULD, not MUST,
  // because "its value is" describes the header rather than commanding the server.
  C(
    'SIZE-11',
    'SHOULD',
    S.pag,
    'Its value is an unsigned integer from 5 to 1000 inclusive.',
    'not honour an X-Page-Size below 5 or above 1000 in a list or a count',
  ),
  C(
    'SIZE-10',
    'MUST',
    S.pag,
    'To get correct counts for a page size, send the same X-Page-Size with the count request.',
    'agree in count.json with the items and pages the list returns for the same X-Page-Size',
  ),

  // ── AUTH: section 5 ──────────────────────────────────────────────────────────────────────
  C('AUTH-01', 'MUST', S.auth, 'Every request must be authenticated.', 'answer a request without credentials with 401 Unauthorized'),
  C(
    'AUTH-02',
    'MUST',
    S.auth,
    'HTTP Basic authentication | username and password of the user',
    "accept HTTP Basic authentication with the user's username and password",
    false,
    BASIC,
  ),
  C(
    'AUTH-03',
    'INFO',
    S.auth,
    'HMAC authentication | the user\'s HMAC API keys (shown in the "API Keys" tab of the user\'s account) are used to compute a hash of the request',
    'accept HMAC authentication signed as the real product computes it',
  ),
  C('AUTH-04', 'MUST', S.auth, 'are used to compute a hash of the request', 'refuse a request whose HMAC hash does not match it', false, HMAC),
  C('AUTH-05', 'INFO', S.auth, 'are used to compute a hash of the request', 'record the reply to an HMAC request with an old timestamp', false, HMAC),
  C(
    'AUTH-06',
    'MUST',
    S.authConfig,
    'The enabled method can be set to: both HTTP Basic and HMAC, HTTP Basic only, or HMAC only.',
    'accept HTTP Basic while both methods or HTTP Basic only are enabled',
    true,
    BASIC,
  ),
  C(
    'AUTH-07',
    'MUST',
    S.authConfig,
    'The enabled method can be set to: both HTTP Basic and HMAC, HTTP Basic only, or HMAC only.',
    'refuse HTTP Basic while only HMAC is enabled',
    true,
  ),
  C(
    'AUTH-08',
    'MUST',
    S.authConfig,
    'The enabled method can be set to: both HTTP Basic and HMAC, HTTP Basic only, or HMAC only.',
    'refuse HMAC while only HTTP Basic is enabled',
    true,
    HMAC,
  ),
  C(
    'AUTH-09',
    'INFO',
    S.authConfig,
    'The enabled method can be set to: both HTTP Basic and HMAC, HTTP Basic only, or HMAC only.',
    'accept HMAC while only HMAC is enabled',
    true,
    HMAC,
  ),
  C(
    'AUTH-10',
    'MUST',
    S.authConfig,
    'HMAC API keys can be set to expire after a given number of days or to stay valid indefinitely.',
    'refuse HMAC keys older than the set number of days',
    true,
    HMAC,
  ),
  C(
    'AUTH-11',
    'INFO',
    S.authConfig,
    'HMAC API keys can be set to expire after a given number of days or to stay valid indefinitely.',
    'accept HMAC keys younger than the set number of days, and old keys when they never expire',
    true,
    HMAC,
  ),
  C(
    'AUTH-12',
    'MUST',
    S.auth,
    'A failed HTTP Basic authentication gives 401 Unauthorized with type "Unauthorized"',
    'answer a failed HTTP Basic authentication with 401 Unauthorized and type "Unauthorized"',
    false,
    BASIC,
  ),
  // The wording is paraphrased ("a message saying…"): a message is MUST (AUTH-13), its sense is
  // SHOULD (AUTH-14: it names the user name, password or credentials).
  C(
    'AUTH-13',
    'MUST',
    S.auth,
    'a message saying the username or password is incorrect or missing',
    'give a message with the 401 of a failed HTTP Basic authentication',
    false,
    BASIC,
  ),
  C(
    'AUTH-14',
    'SHOULD',
    S.auth,
    'a message saying the username or password is incorrect or missing',
    'say in the 401 message that the username or password is incorrect or missing',
    false,
    BASIC,
  ),

  // ── ERR: section 7, known error conditions ───────────────────────────────────────────────
  // The spec's message has no final period; the product's UI string has one. The check
  // accepts "API access is disabled" with or without a trailing period.
  C(
    'ERR-01',
    'MUST',
    S.errKnown,
    'API access disabled in settings | 403 Forbidden | message "API access is disabled"',
    'answer 403 Forbidden with the message "API access is disabled" while API access is off',
    true,
  ),
  C(
    'ERR-02',
    'MUST',
    S.errKnown,
    'Content-Type header missing | 415 Unsupported Media Type | not further described',
    'answer a request without Content-Type with 415 Unsupported Media Type',
  ),
  C(
    'ERR-03',
    'INFO',
    S.ep,
    'Every request carries the header `Content-Type: application/json; charset=utf-8`',
    'record the reply to a Content-Type other than application/json; charset=utf-8',
  ),
  C(
    'ERR-04',
    'MUST',
    S.errKnown,
    'Installation in Maintenance Mode (all requests) | 503 Service Unavailable | message "This installation is in Maintenance Mode."',
    'answer every request with 503 Service Unavailable in Maintenance Mode',
    true,
  ),
  C(
    'ERR-05',
    'MUST',
    S.errKnown,
    'Installation in Maintenance Mode (all requests) | 503 Service Unavailable | message "This installation is in Maintenance Mode."',
    'give the message "This installation is in Maintenance Mode." in Maintenance Mode',
    true,
  ),

  // ── LOG: section 1 rules 5 and 6 ─────────────────────────────────────────────────────────
  // The log's path and fields are not shown; reading it uses the product's log resource.
  C('LOG-01', 'MUST', S.gen, 'Every action caused by an API request is written to the action log', 'write each action made through the API to the action log'),
  // "Fields of the ... log resources: not shown", so how the Origin column reaches the API is
  // implementation-defined.
  C(
    'LOG-02',
    'INFO',
    S.gen,
    'The log has a column "Origin" that tells whether an action came from the API',
    'record how the log resource marks an action that came from the API',
  ),
  // What the Origin column holds is not shown; a column that tells API actions apart must not
  // read as the web interface for an API action, so an entry that says "web" is a SHOULD warning.
  C(
    'LOG-05',
    'SHOULD',
    S.gen,
    'The log has a column "Origin" that tells whether an action came from the API',
    'not mark an action made through the API as coming from the web interface',
  ),
  // "Every action ... is written": one action, one entry. The spec does not say "once", so an
  // action written twice (two entries alike but for their id and time) is a SHOULD warning.
  C(
    'LOG-06',
    'SHOULD',
    S.gen,
    'Every action caused by an API request is written to the action log',
    'write each action made through the API to the action log once',
  ),
  // What counts as an action is not shown; the product logs views of passwords (product facts
  // §7, action "view_password"), so whether a view is logged is recorded.
  C(
    'LOG-07',
    'INFO',
    S.gen,
    'Every action caused by an API request is written to the action log',
    'record whether a view of a password through the API is written to the action log',
  ),
  C('LOG-03', 'MUST', S.gen, 'Requests that end in an error are not logged', 'leave a request that ends in an error other than 401 out of the log'),
  C('LOG-04', 'MUST', S.gen, 'except 401 Unauthorized, which is logged.', 'write a request that ends in 401 Unauthorized to the log'),

  // Who may query the log: "The Log endpoints require the Admin or IT role" (product facts §4),
  // the spec's "users with other roles see fewer" made concrete by the product: SHOULD.
  C(
    'LOG-08',
    'SHOULD',
    S.ops,
    'Log | query the log',
    'answer a query of the log to Admin and IT users, and refuse it to the other roles, as soon as a role changes',
    true,
  ),

  // ── VER: section 9 and the version object ────────────────────────────────────────────────
  C('VER-01', 'MUST', S.version, 'api_version | string | API version used for the request', 'report API version 6 as api_version for a request to /api/v6/'),
  C(
    'VER-02',
    'MUST',
    S.ver,
    'is returned as `api_version` by the version endpoints',
    'return api_version from GET /version.json and GET /version/check_latest.json',
  ),
  C('VER-03', 'INFO', S.ver, 'This interface is API version 6 (v6).', 'record which other API versions the installation serves'),
  C('VER-04', 'MUST', S.ep, 'version object without latest_version', 'omit latest_version from GET /version.json'),
  // "empty string when the latest version cannot be checked" cannot be forced from outside;
  // the check asserts the type and records the value.
  C(
    'VER-05',
    'MUST',
    S.version,
    'latest_version | string | only in the check_latest response; empty string when the latest version cannot be checked',
    'return latest_version as a string from GET /version/check_latest.json',
  ),
  C('VER-06', 'MUST', S.ep, 'only IT or Admin users may call it', 'refuse GET /version/check_latest.json to a user who is neither IT nor Admin', true),
  C('VER-07', 'MUST', S.ep, 'only IT or Admin users may call it', 'let an IT user call GET /version/check_latest.json', true),
  C('VER-08', 'MUST', S.ver, 'the log is a resource', 'serve the action log as a resource that can be queried'),

  // ── LIM: section 8 (its page-size rows are RESTATED under SIZE) ──────────────────────────
  // "Character set | UTF-8" says how text is encoded, nothing more: printable text (astral
  // characters included) must come back as sent (MUST); what a server does with U+0000, other
  // controls, noncharacters or Unicode normalisation is not stated, so LIM-04 records it.
  C('LIM-01', 'MUST', S.lim, 'Character set | UTF-8', 'return printable non-ASCII text, including characters outside the BMP, as it was sent'),
  C('LIM-04', 'INFO', S.lim, 'Character set | UTF-8', 'record what becomes of control characters, U+0000, noncharacters and decomposed text'),
  C('LIM-02', 'INFO', S.lim, 'Rate limits: not shown.', 'record whether a burst of requests is rate-limited'),
  C('LIM-03', 'INFO', S.lim, 'Maximum request body size: not shown.', 'record the reply to a large request body'),
];

/**
 * Statements that repeat a statement already in CLAUSES. They get no ID of their own; the
 * clauses named here cover them. Listed so a reader sees every sentence was considered.
 */
export const RESTATED: ReadonlyArray<{ quote: string; section: string; coveredBy: string[] }> = [
  { quote: 'API access is per user.', section: S.gen, coveredBy: ['GEN-07'] },
  { quote: 'Paths below are relative to `{base_url}/index.php/api/v6`.', section: S.ep, coveredBy: ['ADDR-01'] },
  { quote: 'The version is part of the path (`/api/v6/`).', section: S.ver, coveredBy: ['ADDR-01', 'VER-01'] },
  { quote: 'Who may call the API: all users (default) or only "API only" users.', section: S.authConfig, coveredBy: ['GEN-12', 'GEN-13', 'GEN-14'] },
  {
    quote: 'Failed HTTP Basic authentication | 401 Unauthorized | type "Unauthorized"; message that username or password is incorrect or missing',
    section: S.errKnown,
    coveredBy: ['AUTH-12', 'AUTH-13'],
  },
  { quote: 'Page number above the last page | 404 Not Found | message "The page number is too high"', section: S.errKnown, coveredBy: ['PAG-11'] },
  { quote: '204 No Content for PUT and DELETE without content', section: S.errKinds, coveredBy: ['STAT-04'] },
  { quote: 'Only 401 errors are written to the log among error responses.', section: S.errKinds, coveredBy: ['LOG-03', 'LOG-04'] },
  { quote: 'Actions made through the API are written to the action log; see section 1.', section: '6. Events', coveredBy: ['LOG-01'] },
  { quote: 'Log | query the log', section: S.ops, coveredBy: ['VER-08'] },
  { quote: 'Version | return version information', section: S.ops, coveredBy: ['EP-10', 'EP-11'] },
  {
    quote: 'The archive/unarchive, lock/unlock, activate/deactivate and ldap/normal conversions exist as operations.',
    section: '3. States and transitions',
    coveredBy: ['OPS-01', 'OPS-02', 'OPS-06'],
  },
  { quote: 'Default page size | 20 items', section: S.lim, coveredBy: ['SIZE-01'] },
  { quote: 'X-Page-Size | unsigned integer, 5 to 1000 inclusive', section: S.lim, coveredBy: ['SIZE-05', 'SIZE-06', 'SIZE-07', 'SIZE-08'] },
  { quote: 'the pagination link relations self, prev, next, first, last are present', section: S.ver, coveredBy: ['PAG-01', 'PAG-07'] },
  { quote: 'the page size can be set per request with X-Page-Size', section: S.ver, coveredBy: ['SIZE-03'] },
  { quote: 'the authentication method can be chosen and HMAC keys can expire', section: S.ver, coveredBy: ['AUTH-06', 'AUTH-07', 'AUTH-08', 'AUTH-10'] },
  { quote: 'The software version is returned by GET /version.json (section 4).', section: S.ver, coveredBy: ['EP-10', 'RES-12'] },
];

/** Statements considered and left out because nothing about them can be observed through the API. */
export const UNTESTABLE: Array<{ quote: string; why: string }> = [
  {
    quote: "The user's permissions through the API equal the permissions in the web interface",
    why: 'the web interface is not observable through the API; the observable part is GEN-08, GEN-09, EP-03 and GEN-16 (one set of permissions whichever method authenticates)',
  },
  {
    quote: 'cannot be switched on in the online demo. The API is not available in the demo.',
    why: "concerns the vendor's online demo, not an installation under test",
  },
  { quote: 'like the same action in the web interface', why: 'compares with actions made in the web interface, which the suite cannot perform' },
  { quote: 'the main log screen can filter on it', why: "a feature of the web interface's log screen" },
  { quote: '(a setting available when the API is enabled)', why: 'describes the settings screen; the control protocol sets the value directly' },
  { quote: '(shown in the "API Keys" tab of the user\'s account)', why: 'describes the web interface; the control protocol hands out the keys' },
  { quote: 'visible in the settings, under the API tab', why: 'describes the settings screen; the API-observable half is VER-02' },
  { quote: 'also used in the user interface', why: "concerns the web interface's lists" },
  { quote: 'A high value can make a list slow.', why: 'a warning with no threshold; the load scenarios measure large pages without a verdict from the spec' },
  {
    quote: 'id of the project that receives the password',
    why: 'the fields of password records are not shown, so which project holds a password cannot be read back by a client that relies on the spec alone',
  },
  {
    quote: 'Only the operation names are given here. Their paths and payloads are under Endpoints.',
    why: "the paths, methods and payloads are not under Endpoints for most operations; the OPS clauses borrow the product's (suites/harness/endpoints.ts) and are INFO for that reason",
  },
  {
    quote: 'Paths, methods and payloads of the remaining operations listed in section 1 are not shown.',
    why: "the suite borrows the product's paths and payloads (OPS-*, STAT-04, LOG-01 over every write); a 404 or 405 at them is unverifiable, never a violation",
  },
  {
    quote:
      'Response bodies of other list endpoints, and which lists are paginated, are not shown beyond the fact that each resource states whether pagination applies.',
    why: 'no list other than passwords is named as paginated, so the pagination rules are checked on passwords and on every list of the endpoint table that answers with a Link header or serves count.json',
  },
  {
    quote: 'Transitions: not shown.',
    why: 'the operations are called (OPS-01, OPS-02, OPS-06), but what they do to the state of an object is not given, so no effect is asserted',
  },
  { quote: 'Events: not shown.', why: 'no events are described' },
  { quote: 'Fields of the file, user, group, favorite and log resources: not shown.', why: 'no fields to check; LOG-02 records what the log resource returns' },
  { quote: 'Update inputs and creation inputs beyond those listed above: not shown.', why: 'no inputs to check' },
  {
    quote: 'The HMAC calculation (what is hashed, which headers carry it): not shown.',
    why: 'the reason HMAC acceptance is INFO (AUTH-03) and HMAC refusals depend on it',
  },
  {
    quote: 'The service version from which the method choice and key expiry exist: not shown.',
    why: 'the suite tests v6 only and does not gate on the software version',
  },
  { quote: '(before v6 only next was returned)', why: 'describes earlier API versions, which this suite does not test (VER-03 only records which are served)' },
];

const BY_ID = new Map(CLAUSES.map((c) => [c.id, c]));

export function clauseById(id: string): Clause | undefined {
  return BY_ID.get(id);
}

/**
 * Active clauses selected by area prefixes ("AUTH") or clause IDs ("PAG-03"), in catalogue
 * order. Selectors match exactly; an unknown selector matches nothing (callers report it).
 */
export function clausesMatching(selectors: string[]): Clause[] {
  const wanted = new Set(selectors);
  return CLAUSES.filter((c) => !c.retired && (wanted.has(c.id) || wanted.has(c.area)));
}
