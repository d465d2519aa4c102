/**
 * The commands on personal passwords (§1: "My Passwords | list, show, create, update, delete"),
 * at the product's paths (product facts §6: `my_passwords.json`, `my_passwords/ID.json`,
 * `favorite_my_passwords/ID.json`), by their owner and by other users (README.md here).
 *
 * Levels. What the owner's writes do, read back by the owner, is judged at SHOULD under OPS-10
 * (the operation is §1's, its path the product's). Another user's sight of them is cross-user
 * exposure, GEN-17 (SHOULD: "users with other roles see fewer", and the product keeps a personal
 * password its owner's alone), tagged `exposure` so every report shows it first. Decision: the
 * owners and onlookers are the file's users of every role but Admin; whether an Admin sees other
 * users' personal passwords is an open choice (a lawful variant makes it), so no check asks.
 */
import fc from 'fast-check';
import type { Exchange } from '../../core/exchange.ts';
import { clip } from '../../core/redact.ts';
import { isSuccess } from '../harness/checks.ts';
import { type Actor, allIds, createdId, fail, framed, type Model, OUTSIDERS, type Real, Step, stringsIn, type Via } from './model.ts';

export const OWNERS = ['viewer', ...OUTSIDERS] as const;
export type Owner = (typeof OWNERS)[number];
/** Everyone who is not Admin: each looks at the others' personal passwords. */
const ONLOOKERS = ['viewer', 'it', ...OUTSIDERS] as const;
type Onlooker = (typeof ONLOOKERS)[number];

/** A personal password of the sequence's own, made by its owner. */
export interface Mine {
  id: number;
  marker: string;
  name: string;
  owner: Owner;
  deleted: boolean;
  /** Made favorite by its owner with a 2XX and not unmade since. */
  favorite: boolean;
}

const OWN = 'OPS-10';
/** Cross-user exposure: reported in a section of its own (the `exposure` tag of its clause). */
export const EXPOSURE = 'GEN-17';

const mine = (m: Model): Mine[] => (m.personal ??= []);
const labelM = (p: Mine) => `personal password ${p.id} (${p.marker}) of the ${p.owner}`;
const pickM = (m: Model, back: number): Mine | undefined => {
  const live = mine(m).filter((p) => !p.deleted);
  return live.length === 0 ? undefined : live[live.length - 1 - (back % live.length)];
};

/** A my_passwords list by `actor`, every page, or undefined when the product's path does not answer (the feature is off). */
async function listOf(r: Real, actor: Actor, via: Via, base: string, clause: string): Promise<{ ex: Exchange; ids: Set<number> } | undefined> {
  const first = await r.clients[actor][via].get(`${base}.json`, { headers: { 'X-Page-Size': '1000' } });
  framed(first);
  if (!isSuccess(first) && !Array.isArray(first.json)) return undefined;
  return allIds(r.clients[actor][via], base, clause, `GET ${base}.json for the ${actor} over ${via}`);
}

/** The owner reads back: the show holds the current name while it exists, an error once deleted; the list and favorites agree (OPS-10). */
async function judgeOwner(r: Real, via: Via, p: Mine, parts: { list?: boolean; favorites?: boolean }): Promise<void> {
  const who = `its owner, the ${p.owner} over ${via}`;
  const ex = await r.clients[p.owner][via].get(`/my_passwords/${p.id}.json`);
  framed(ex);
  if (p.deleted && isSuccess(ex)) fail(OWN, ex, `an error for ${labelM(p)}, deleted with a 2XX, shown to ${who}`, `status ${ex.response?.status}`);
  if (!p.deleted) {
    if (ex.response?.status !== 200) fail(OWN, ex, `200 OK and ${labelM(p)} for ${who}`, `status ${ex.response?.status}`);
    if (!stringsIn(ex.json).includes(p.name))
      fail(OWN, ex, `the current name ${p.name} (its last update answered 2XX) in the show for ${who}`, clip(JSON.stringify(ex.json), 300) ?? 'no body');
  }
  for (const [on, base, want] of [
    [parts.list, '/my_passwords', !p.deleted],
    [parts.favorites, '/favorite_my_passwords', !p.deleted && p.favorite],
  ] as const) {
    if (!on) continue;
    const got = await listOf(r, p.owner, via, base, OWN);
    if (got && got.ids.has(p.id) !== want) fail(OWN, got.ex, `${labelM(p)} ${want ? 'in' : 'not in'} GET ${base}.json for ${who}`, want ? 'missing' : 'listed');
  }
}

/**
 * Another user than the owner: the show, an update and a deletion are refused, and neither the
 * onlooker's own list, search nor favorites of personal passwords hold it (GEN-17, exposure).
 */
async function judgeOnlooker(r: Real, actor: Onlooker, via: Via, p: Mine, write: boolean): Promise<void> {
  const c = r.clients[actor][via];
  const who = `the ${actor} over ${via}, who is not its owner`;
  const show = await c.get(`/my_passwords/${p.id}.json`);
  framed(show);
  if (isSuccess(show)) fail(EXPOSURE, show, `a refusal of ${labelM(p)} to ${who}`, `status ${show.response?.status}: ${clip(JSON.stringify(show.json), 200)}`);
  if (write) {
    const put = await c.put(`/my_passwords/${p.id}.json`, { name: `${p.name}-changed-by-another` });
    framed(put);
    if (isSuccess(put)) fail(EXPOSURE, put, `a refusal of an update of ${labelM(p)} by ${who}`, `status ${put.response?.status}`);
  }
  for (const base of ['/my_passwords', `/my_passwords/search/${p.marker}`, '/favorite_my_passwords']) {
    const got = await listOf(r, actor, via, base, EXPOSURE);
    if (got?.ids.has(p.id)) fail(EXPOSURE, got.ex, `none of another user's personal passwords in GET ${base}.json for ${who}`, `${labelM(p)} listed`);
  }
}

/**
 * One choice among the commands on personal passwords: create, update, delete, favorite or
 * unfavorite by the owner, or another user's look. While the sequence has none, a command on one
 * creates one first (the product answers 403 "Personal passwords are disabled" when the feature
 * is off: then nothing is judged).
 */
export class PersonalStep extends Step {
  private did = '';
  constructor(
    readonly kind: 'create' | 'update' | 'delete' | 'favorite' | 'look',
    readonly owner: Owner,
    readonly onlooker: Onlooker,
    readonly via: Via,
    readonly back: number,
  ) {
    super();
  }
  check = (m: Readonly<Model>) => !m.personalOff;
  async run(m: Model, r: Real): Promise<void> {
    const steps: string[] = [];
    if (this.kind === 'create' || !pickM(m, this.back)) {
      steps.push(`create(${this.owner})`);
      this.did = steps.join('+');
      await this.create(m, r);
      if (this.kind === 'create') return;
    }
    const p = pickM(m, this.back);
    if (!p) return;
    const onlooker = this.onlooker === p.owner ? 'it' : this.onlooker;
    steps.push(this.kind === 'look' ? `look(${onlooker})` : this.kind);
    this.did = steps.join('+');
    const c = r.clients[p.owner][this.via];
    if (this.kind === 'look') return judgeOnlooker(r, onlooker, this.via, p, true);
    if (this.kind === 'favorite') {
      const on = !p.favorite;
      const ex = on ? await c.post(`/favorite_my_passwords/${p.id}.json`) : await c.delete(`/favorite_my_passwords/${p.id}.json`);
      framed(ex);
      if (!isSuccess(ex)) return;
      p.favorite = on;
      await judgeOwner(r, this.via, p, { favorites: true });
      if (on) await judgeOnlooker(r, onlooker, this.via, p, false);
      return;
    }
    if (this.kind === 'update') {
      const name = `${p.marker}-v${++r.counter.n}-ä`;
      const ex = await c.put(`/my_passwords/${p.id}.json`, { name });
      framed(ex);
      if (!isSuccess(ex)) return;
      p.name = name;
      return judgeOwner(r, this.via, p, {});
    }
    const ex = await c.delete(`/my_passwords/${p.id}.json`);
    framed(ex);
    if (!isSuccess(ex)) return;
    p.deleted = true;
    r.s.fixtures.forget('my_password', p.id);
    await judgeOwner(r, this.via, p, { list: true });
  }
  private async create(m: Model, r: Real): Promise<void> {
    const marker = `${r.prefix}y${++r.counter.n}z`;
    const name = `${r.s.fixtures.name('model-mine')}-${marker}`;
    const ex = await r.clients[this.owner][this.via].post('/my_passwords.json', { name, password: `${marker}-secret` });
    framed(ex);
    if (ex.response?.status === 403 || ex.response?.status === 404 || ex.response?.status === 405) {
      m.personalOff = true;
      return;
    }
    const id = isSuccess(ex) ? createdId(ex) : undefined;
    if (id === undefined || !(await r.s.fixtures.track('my_password', id, name, { creation: ex, reader: r.clients[this.owner][this.via], lazy: true }))) return;
    const p: Mine = { id, marker, name, owner: this.owner, deleted: false, favorite: false };
    mine(m).push(p);
    // Read back by the owner (show and list) and looked for by another user at once.
    await judgeOwner(r, this.via, p, { list: true });
    await judgeOnlooker(r, this.onlooker === p.owner ? 'it' : this.onlooker, this.via, p, false);
  }
  toString = () => `personal(${this.did || `${this.kind}, ${this.owner}`}, ${this.via}, -${this.back})`;
}

/**
 * The personal passwords left by a sequence, deleted by their owners at its end (the file's
 * cleanup deletes as the Admin, who may not see them) and, with `judge`, read back (OPS-10).
 */
export async function endPersonal(m: Model, r: Real, judge: boolean): Promise<void> {
  for (const p of mine(m).filter((q) => !q.deleted)) {
    if (!isSuccess(await r.clients[p.owner].basic.delete(`/my_passwords/${p.id}.json`))) continue;
    p.deleted = true;
    r.s.fixtures.forget('my_password', p.id);
    if (judge) await judgeOwner(r, 'basic', p, {});
  }
}

const via = fc.constantFrom<Via>('basic', 'hmac');
const back = fc.constantFrom(0, 0, 0, 1, 2);

/** The commands on personal passwords: one choice among their kinds (the request budget). */
export function personalCommands(): Array<fc.Arbitrary<Step>> {
  return [
    fc
      .tuple(
        fc.constantFrom<PersonalStep['kind']>('create', 'update', 'delete', 'favorite', 'look', 'look'),
        fc.constantFrom<Owner>(...OWNERS),
        fc.constantFrom<Onlooker>(...ONLOOKERS),
        via,
        back,
      )
      .map(([k, o, l, v, b]) => new PersonalStep(k, o, l, v, b)),
  ];
}
