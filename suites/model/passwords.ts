/**
 * The commands that change a password's state (§1's passwords row: "update security", "archive/
 * unarchive", "move", "lock/unlock"), at the product's paths (product facts §6), each read back by
 * the users it concerns (README.md here). The spec shows none of these paths, so a broken effect
 * is judged at SHOULD under OPS-12, citing the product's path and, for locks, the product's
 * `X-Unlock-Reason` (product facts §3: "Show without it returns only basic data").
 */
import fc from 'fast-check';
import { clip } from '../../core/redact.ts';
import { isSuccess } from '../harness/checks.ts';
import { together } from '../harness/in-order.ts';
import { allIds, Create, fail, framed, label, type Model, type Pw, pick, type Real, Step, stringsIn, UNLOCK, UserCreate, type Usr, type Via } from './model.ts';

const CLAUSE = 'OPS-12';
/** The secret Create sends: in the full data of a show, never in the basic data of a locked one. */
const secretOf = (p: Pw) => `${p.marker}-secret`;

/**
 * A lock or unlock read back by the Admin. Unlocked: the show without X-Unlock-Reason holds the
 * current name (EP-07, as every show) and the secret sent at creation (OPS-12). Locked: the show
 * with X-Unlock-Reason holds them too, and a change without it is refused (product facts §3:
 * "Without it: ... update ... returns 403"; OPS-12); the show without it is sent and left to the
 * oracle (basic data or a refusal: the product's words, not the spec's).
 */
async function judgeLock(r: Real, via: Via, p: Pw): Promise<void> {
  const c = r.clients.admin[via];
  // Both shows side by side (reads), before the write below.
  const [bare, withReason] = await together([c.get(`/passwords/${p.id}.json`), p.locked ? c.get(`/passwords/${p.id}.json`, { headers: UNLOCK }) : undefined]);
  framed(bare);
  const shown = withReason ?? bare;
  framed(shown);
  const how = `${label(p)}, ${p.locked ? 'locked' : 'unlocked'} with a 2XX, shown ${p.locked ? 'with' : 'without'} X-Unlock-Reason to the Admin over ${via}`;
  const strings = stringsIn(shown.json);
  if (shown.response?.status !== 200 || !strings.includes(p.name))
    fail(
      'EP-07',
      shown,
      `200 OK and all data of ${how}: its current name ${p.name}`,
      `status ${shown.response?.status}: ${clip(JSON.stringify(shown.json), 200)}`,
    );
  if (!strings.includes(secretOf(p))) fail(CLAUSE, shown, `all data of ${how}: the password sent at creation`, 'not in the body');
  if (!p.locked) return;
  // The name it has: accepted, the write changes nothing.
  const put = await c.put(`/passwords/${p.id}.json`, { name: p.name });
  framed(put);
  if (isSuccess(put))
    fail(
      CLAUSE,
      put,
      `a refusal of an update of ${label(p)}, locked with a 2XX, sent without X-Unlock-Reason (product facts §3)`,
      `status ${put.response?.status}`,
    );
}

/** A list of passwords read by `actor` holds the password or not. */
async function judgeListed(r: Real, actor: 'viewer' | Usr, via: Via, base: string, p: Pw, want: boolean, why: string): Promise<void> {
  const c = actor === 'viewer' ? r.clients.viewer[via] : actor.client;
  const who = actor === 'viewer' ? `the viewer over ${via}` : `the user ${actor.id} (${actor.username}) over Basic`;
  const first = await c.get(`${base}.json`, { headers: { 'X-Page-Size': '1000' } });
  framed(first);
  if ((first.response?.status === 404 || first.response?.status === 405) && !Array.isArray(first.json)) return;
  const { ex, ids } = await allIds(c, base, CLAUSE, `GET ${base}.json for ${who}`);
  if (ids.has(p.id) !== want) fail(CLAUSE, ex, `${label(p)} ${want ? 'in' : 'not in'} GET ${base}.json for ${who}: ${why}`, want ? 'missing' : 'listed');
}

/**
 * One choice among the state changes of a password by the Admin: lock (unlock a locked one,
 * first without X-Unlock-Reason, then with it), archive (unarchive an archived one), move to the
 * other project, or grant read access to a user of the sequence (made first when it has none).
 */
export class PasswordStep extends Step {
  private did = '';
  constructor(
    readonly kind: 'lock' | 'archive' | 'move' | 'security',
    readonly via: Via,
    readonly back: number,
  ) {
    super();
  }
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    // Decision (the same number of commands): while the sequence has no password, the command creates one first.
    const made = pick(m, this.back) ? '' : 'create+';
    if (made) await new Create(this.via, 'main').run(m, r);
    const p = pick(m, this.back);
    if (!p) return;
    const c = r.clients.admin[this.via];
    this.did = made + (this.kind === 'lock' && p.locked ? 'unlock' : this.kind === 'archive' && p.archived ? 'unarchive' : this.kind);
    if (this.kind === 'lock') {
      const path = `/passwords/${p.id}/${p.locked ? 'unlock' : 'lock'}.json`;
      // Decision: an unlock without a reason may be refused (the product asks for one); then with it.
      let ex = await c.put(path, undefined, p.locked ? {} : { headers: UNLOCK });
      if (p.locked && !isSuccess(ex)) {
        this.did = `${made}unlock+reason`;
        ex = await c.put(path, undefined, { headers: UNLOCK });
      }
      framed(ex);
      if (!isSuccess(ex)) return;
      p.writes++;
      p.locked = !p.locked;
      p.changedState = true;
      return judgeLock(r, this.via, p);
    }
    if (this.kind === 'archive') {
      const ex = await c.put(`/passwords/${p.id}/${p.archived ? 'unarchive' : 'archive'}.json`, undefined, { headers: UNLOCK });
      framed(ex);
      if (!isSuccess(ex)) return;
      p.writes++;
      p.archived = !p.archived;
      p.changedState = true;
      // The viewer's archived list (product facts §6: passwords/archived.json) follows at once.
      return judgeListed(r, 'viewer', this.via, '/passwords/archived', p, p.archived, `${p.archived ? 'archived' : 'unarchived'} with a 2XX`);
    }
    if (this.kind === 'move') {
      const from = p.project;
      const to = from === 'main' ? 'other' : 'main';
      const ex = await c.put(`/passwords/${p.id}/move.json`, { project_id: r.projects[to] }, { headers: UNLOCK });
      framed(ex);
      if (!isSuccess(ex)) return;
      p.writes++;
      p.project = to;
      // Read back through the passwords of each project (§1: "list passwords of a project"), as the viewer who reads both.
      // Decision: not for an archived password (whether a project's list holds archived passwords is not shown).
      if (p.archived) return;
      // Both lists side by side (reads), judged in this order.
      await together([
        judgeListed(r, 'viewer', this.via, `/projects/${r.projects[to]}/passwords`, p, true, `moved here with a 2XX`),
        judgeListed(r, 'viewer', this.via, `/projects/${r.projects[from]}/passwords`, p, false, `moved away with a 2XX`),
      ]);
      return;
    }
    let u = m.users.find((x) => !x.deleted && x.active);
    if (!u) {
      this.did = `${made}createUser+security`;
      await new UserCreate(this.via).run(m, r);
      u = m.users.find((x) => !x.deleted && x.active);
      if (!u) return;
    }
    const ex = await c.put(`/passwords/${p.id}/security.json`, { users_permissions: [[u.id, 10]] }, { headers: UNLOCK });
    framed(ex);
    if (!isSuccess(ex)) return;
    p.writes++;
    // The grantee reads it at once: its show and its list (§1: "update security"), side by side
    // (reads), judged in this order.
    const grantee = u;
    await together([
      grantee.client.get(`/passwords/${p.id}.json`, { headers: UNLOCK }).then((show) => {
        framed(show);
        if (show.response?.status !== 200 || !stringsIn(show.json).includes(p.name))
          fail(CLAUSE, show, `200 OK and ${label(p)} for the user ${grantee.id} given read access with a 2XX`, `status ${show.response?.status}`);
      }),
      !p.archived && judgeListed(r, grantee, this.via, '/passwords', p, true, 'given read access with a 2XX'),
    ]);
  }
  // `password(create+lock, basic, -0)`: what it did, the create it made first included.
  toString = () => `password(${this.did || this.kind}, ${this.via}, -${this.back})`;
}

const via = fc.constantFrom<Via>('basic', 'hmac');
const back = fc.constantFrom(0, 0, 0, 1, 2);

/** The state changes of passwords: the share of the commands the Admin's lock, archive and move writes had, plus security. */
export function passwordCommands(): Array<fc.Arbitrary<Step>> {
  return [
    fc.tuple(fc.constantFrom<PasswordStep['kind']>('lock', 'archive', 'archive', 'move', 'security'), via, back).map(([k, v, b]) => new PasswordStep(k, v, b)),
  ];
}
