/**
 * The users operations beyond create, update, (de)activate and delete (model.ts): a role change
 * both ways, a password change, an HMAC key renewal and a conversion to LDAP and back, each by the
 * Admin and read back at once by the Admin and by the changed user's own credentials, over HTTP
 * Basic and HMAC (issue 35). Each operation is data: the request, what the model then holds, and
 * the read-backs with the clause each proves.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { Exchange } from '../../core/exchange.ts';
import { clip, registerCredentials } from '../../core/redact.ts';
import { expectResponse } from '../harness/assert.ts';
import { isSuccess } from '../harness/checks.ts';
import type { ApiClient } from '../harness/client.ts';
import { together } from '../harness/in-order.ts';
import { fail, framed, labelU, type Model, ownClients, pickU, type Real, UserCreate, type Usr, type Via } from './model.ts';

/** Whether HMAC works for the run (the Admin's HMAC client is not its Basic one). */
export const hmacWorks = (r: Real): boolean => r.clients.admin.hmac !== r.clients.admin.basic;

/**
 * HMAC keys for a user of the sequence, through the control protocol (`POST /users/ID/api_keys`:
 * "earlier keys stop working", the product's "Renew API Keys", product facts §2.1). Undefined
 * when HMAC does not work for the run or there is no control protocol.
 */
export async function issueKeys(r: Real, u: Usr): Promise<ApiClient | undefined> {
  if (!r.s.control || !hmacWorks(r)) return undefined;
  const keys = await r.s.control.issueApiKeys(u.id);
  return r.s.admin.withAuth({ kind: 'hmac', publicKey: keys.public_key, privateKey: keys.private_key });
}

function newPassword(u: Usr): { client: (r: Real) => ApiClient; password: string } {
  const password = `${randomBytes(12).toString('base64url')}-Bb2`;
  registerCredentials(u.username, password, `password of ${u.username}`);
  return { password, client: (r) => r.s.admin.withAuth({ kind: 'basic', user: u.username, password }) };
}

/** The values of every field of this name in a body, at any depth. */
function valuesOf(body: unknown, key: string): unknown[] {
  if (Array.isArray(body)) return body.flatMap((v) => valuesOf(v, key));
  if (body === null || typeof body !== 'object') return [];
  return Object.entries(body).flatMap(([k, v]) => (k === key ? [v] : valuesOf(v, key)));
}

const own = ownClients;
/** The run signs in with HMAC only: a user's password is never tried (RunConfig.signIn). */
const basicOff = (r: Real): boolean => r.s.admin.basicRefused !== undefined;

/**
 * A read-back by a user: a request that must be answered (2XX) or refused (not 2XX), under the
 * clause the sentence it rests on gives. `unserved`: a 404 or 405 there says nothing (a product path).
 */
async function expectAnswer(c: ApiClient, path: string, answered: boolean, clause: string, who: string, why: string, unserved = false): Promise<Exchange> {
  const ex = await c.get(path, { headers: { 'X-Page-Size': '5' } });
  expectResponse(ex, `an answer to GET ${path}`);
  framed(ex);
  const status = ex.response.status;
  if (unserved && (status === 404 || status === 405) && !isSuccess(ex)) return ex;
  if (answered && !isSuccess(ex)) fail(clause, ex, `an answer to GET ${path} for ${who}: ${why}`, `status ${status}`);
  if (!answered && isSuccess(ex)) fail(clause, ex, `a refusal of GET ${path} to ${who}: ${why}`, `status ${status}`);
  return ex;
}

/** What a user of the role may now do, at once, with their own credentials over both methods. */
async function judgeRole(r: Real, u: Usr, admin: boolean): Promise<void> {
  // Every read side by side (none writes), judged in this order.
  await together(
    own(u).flatMap(([c, how]) => {
      const who = `${labelU(u)} over ${how}, made ${admin ? 'Admin' : 'Normal user'} with a 2XX just before`;
      return [
        // The file's project, made by the run's Admin, to which this user was never given access.
        expectAnswer(
          c,
          `/projects/${r.projects.main}.json`,
          admin,
          admin ? 'GEN-08' : 'GEN-09',
          who,
          admin ? 'a user with the "Admin" role sees all resources' : 'users with other roles see fewer: never given access to the project',
        ),
        expectAnswer(c, '/log.json', admin, 'LOG-08', who, 'the Log endpoints require the Admin or IT role (product facts §4)', true),
      ];
    }),
  );
}

/** The credentials a user holds no more are refused at once (GEN-18); the new ones are answered. */
async function judgeReplaced(u: Usr, old: ApiClient, now: ApiClient, what: string, newClause: string): Promise<void> {
  if (!u.active) return;
  const who = `${labelU(u)}`;
  // Both side by side (reads), judged in this order.
  await together([
    expectAnswer(old, '/version.json', false, 'GEN-18', `${who} with the ${what} replaced with a 2XX just before`, 'they are no longer their own credentials'),
    expectAnswer(now, '/version.json', true, newClause, `${who} with the new ${what}`, 'any active user can use the API with their own credentials'),
  ]);
}

type Kind = 'active' | 'role' | 'password' | 'keys' | 'ldap';

/**
 * The operations, as data: which user state they need, the Admin's request(s) and the read-backs
 * once they answered 2XX. A role change and a conversion go there and back in one command (Normal
 * user → Admin → Normal user, normal → LDAP → normal), so a user of the sequence is a Normal user
 * between commands and the other commands' judgements hold for it.
 */
const OPERATIONS: Record<Kind, (r: Real, u: Usr, via: Via) => Promise<void>> = {
  // Deactivated, then activated again: refused at once over both methods (GEN-15), answered again (GEN-07).
  async active(r, u, via) {
    if (!u.active || u.ldap) return;
    for (const to of ['deactivate', 'activate'] as const) {
      const ex = await r.clients.admin[via].put(`/users/${u.id}/${to}.json`);
      framed(ex);
      if (!isSuccess(ex)) return;
      u.active = to === 'activate';
      // Over both methods side by side (reads), judged in this order.
      await together(
        own(u).map(([c, how]) =>
          expectAnswer(
            c,
            '/version.json',
            u.active,
            u.active ? 'GEN-07' : 'GEN-15',
            `${labelU(u)} over ${how}, ${to}d with a 2XX just before`,
            'any active user can use the API with their own credentials',
          ),
        ),
      );
    }
  },
  async role(r, u, via) {
    const c = r.clients.admin[via];
    for (const role of ['admin', 'normal user'] as const) {
      const ex = await c.put(`/users/${u.id}.json`, { role });
      framed(ex);
      if (!isSuccess(ex)) return;
      if (u.active && !u.ldap) await judgeRole(r, u, role === 'admin');
    }
  },
  async password(r, u, via) {
    if (u.ldap) return;
    const next = newPassword(u);
    const ex = await r.clients.admin[via].put(`/users/${u.id}/change_password.json`, { password: next.password });
    framed(ex);
    if (!isSuccess(ex) || basicOff(r)) return;
    const old = u.client;
    u.client = next.client(r);
    await judgeReplaced(u, old, u.client, 'password', 'GEN-07');
  },
  async keys(r, u) {
    const old = u.hmac ?? (await issueKeys(r, u));
    if (!old) return;
    const one = u.client === old;
    u.hmac = (await issueKeys(r, u)) ?? old;
    if (one) u.client = u.hmac;
    // HMAC acceptance rests on the product's signing (AUTH-03): new keys refused are the renewal's fault.
    await judgeReplaced(u, old, u.hmac, 'HMAC keys', 'GEN-18');
  },
  async ldap(r, u, via) {
    const c = r.clients.admin[via];
    const dn = `cn=${u.username},ou=pmv6,dc=example,dc=invalid`;
    const ex = await c.put(`/users/${u.id}/convert_to_ldap.json`, { login_dn: dn, ldap_server_id: 1 });
    framed(ex);
    if (!isSuccess(ex)) return;
    u.ldap = true;
    // Read back through the Admin's show: the login_dn it was given (product facts §7, user show).
    // Decision: the fields of a user are not shown (§2), so only a show that has a login_dn is held to it.
    const show = await c.get(`/users/${u.id}.json`);
    expectResponse(show, `an answer to GET /users/${u.id}.json`);
    framed(show);
    const shown = show.response.status === 200 ? valuesOf(show.json, 'login_dn') : [];
    if (shown.length > 0 && !shown.includes(dn))
      fail(
        'OPS-13',
        show,
        `the login_dn ${dn} of ${labelU(u)}, converted to LDAP with a 2XX just before, in its show`,
        clip(JSON.stringify(show.json), 300) ?? 'no body',
      );
    const next = newPassword(u);
    const back = await c.put(`/users/${u.id}/convert_to_normal.json`, { password: next.password });
    framed(back);
    if (!isSuccess(back)) return;
    u.ldap = false;
    if (basicOff(r)) return;
    u.client = next.client(r);
    if (u.active)
      await expectAnswer(
        u.client,
        '/version.json',
        true,
        'OPS-13',
        `${labelU(u)} over HTTP Basic`,
        'converted back to normal with a 2XX and this password just before',
      );
  },
};

/**
 * The users operations of this file, one after another, by the Admin on a user of the sequence: a
 * deactivation and activation, a role change there and back, a password change, an HMAC key renewal, an LDAP round trip.
 * Decision (the request budget and the kill of a fault in any of them at every seed): one command
 * does all four, so each comes up as often as the command does. While the sequence has no user,
 * the command creates one first (model.ts UserCreate).
 */
export class AccountStep implements fc.AsyncCommand<Model, Real, false> {
  private created = false;
  constructor(
    readonly via: Via,
    readonly back: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    this.created = false;
    if (!pickU(m, this.back)) {
      this.created = true;
      await new UserCreate(this.via).run(m, r);
    }
    const u = pickU(m, this.back);
    if (!u) return;
    for (const kind of KINDS) await OPERATIONS[kind](r, u, this.via);
  }
  toString = () => `${this.created ? `createUser(${this.via})+` : ''}account(${this.via}, -${this.back}: ${KINDS.join(', ')})`;
}

const KINDS: readonly Kind[] = ['active', 'role', 'password', 'keys', 'ldap'];

export function accountCommand(): fc.Arbitrary<AccountStep> {
  return fc.tuple(fc.constantFrom<Via>('basic', 'hmac'), fc.constantFrom(0, 0, 1)).map(([v, b]) => new AccountStep(v, b));
}
