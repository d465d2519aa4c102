/**
 * The groups operations beyond membership (model.ts Membership): create, rename and delete, by the
 * Admin at the product's paths (product facts §6), each read back at once through the group's show
 * and the groups list (OPS-14, issue 35). Decision: groups of the sequence's own, apart from the
 * group whose members model.ts follows, so a rename or delete never disturbs those judgements.
 */
import fc from 'fast-check';
import { clip } from '../../core/redact.ts';
import { expectResponse } from '../harness/assert.ts';
import { isSuccess } from '../harness/checks.ts';
import { beside, createdId, fail, framed, listed, type Model, PAGE, type Real, stringsIn, type Via } from './model.ts';

interface Grp {
  id: number;
  name: string;
  deleted: boolean;
}

/** The sequence's own groups. */
const own = beside<Model, Grp[]>(() => []);
const labelG = (g: Grp) => `group ${g.id} (${g.name})`;

/** GET groups/ID.json by the Admin: the current name while the group exists, an error once deleted (OPS-14). */
async function judgeShown(r: Real, via: Via, g: Grp): Promise<void> {
  const ex = await r.clients.admin[via].get(`/groups/${g.id}.json`);
  expectResponse(ex, `an answer to GET /groups/${g.id}.json`);
  framed(ex);
  const who = `the Admin over ${via}`;
  if (g.deleted) {
    if (isSuccess(ex)) fail('OPS-14', ex, `an error for ${labelG(g)}, deleted with a 2XX just before, shown to ${who}`, `status ${ex.response.status}`);
    return;
  }
  if (ex.response.status !== 200) fail('OPS-14', ex, `200 OK and ${labelG(g)} for ${who}`, `status ${ex.response.status}`);
  if (!stringsIn(ex.json).includes(g.name))
    fail(
      'OPS-14',
      ex,
      `the name ${g.name} of its last 2XX create or update in the show of ${labelG(g)} for ${who}`,
      clip(JSON.stringify(ex.json), 300) ?? 'no body',
    );
}

/**
 * GET groups.json at 1000 a page by the Admin: the group listed while it exists, not once deleted
 * (OPS-14). Decision: an installation of 1000 groups or more is not judged for a missing one.
 */
async function judgeListed(r: Real, via: Via, g: Grp): Promise<void> {
  const ex = await r.clients.admin[via].get('/groups.json', { headers: PAGE });
  const ids = listed(ex, 'OPS-14', `GET /groups.json for the Admin over ${via}`);
  if (g.deleted && ids.has(g.id)) fail('OPS-14', ex, `no ${labelG(g)} in GET /groups.json: deleted with a 2XX just before`, 'listed');
  if (!g.deleted && !ids.has(g.id) && (ex.json as unknown[]).length < 1000)
    fail('OPS-14', ex, `${labelG(g)} in GET /groups.json: created with a 201`, 'missing');
}

/**
 * A group of the sequence (created first while it has none) renamed, and deleted when `remove`,
 * each read back at once. Decision (the request budget and the kill of a fault at every seed):
 * the operations in one command.
 */
export class GroupStep implements fc.AsyncCommand<Model, Real, false> {
  private created = false;
  constructor(
    readonly remove: boolean,
    readonly via: Via,
  ) {}
  check = (m: Readonly<Model>) => m.groupsOffered;
  async run(m: Model, r: Real): Promise<void> {
    this.created = false;
    const c = r.clients.admin[this.via];
    let g = [...own(m)].reverse().find((x) => !x.deleted);
    if (!g) {
      this.created = true;
      const name = r.s.fixtures.name('model-group');
      const ex = await c.post('/groups.json', { name });
      framed(ex);
      if (ex.response?.status === 404 || ex.response?.status === 405) {
        r.groups.offered = m.groupsOffered = false;
        return;
      }
      const id = ex.response?.status === 201 ? createdId(ex) : undefined;
      if (id === undefined || !(await r.s.fixtures.track('group', id, name, { creation: ex, reader: c, lazy: true }))) return;
      g = { id, name, deleted: false };
      own(m).push(g);
      await judgeShown(r, this.via, g);
      await judgeListed(r, this.via, g);
    }
    const name = `${g.name.replace(/-renamed-\d+$/, '')}-renamed-${r.counter.n++}`;
    const ex = await c.put(`/groups/${g.id}.json`, { name });
    framed(ex);
    if (!isSuccess(ex)) return;
    g.name = name;
    await judgeShown(r, this.via, g);
    if (!this.remove) return;
    const del = await c.delete(`/groups/${g.id}.json`);
    framed(del);
    if (!isSuccess(del)) return;
    g.deleted = true;
    r.s.fixtures.forget('group', g.id);
    await judgeShown(r, this.via, g);
    await judgeListed(r, this.via, g);
  }
  toString = () => `${this.created ? `createGroup(${this.via})+` : ''}renameGroup(${this.via})${this.remove ? '+deleteGroup' : ''}`;
}

export function groupCommand(): fc.Arbitrary<GroupStep> {
  return fc.tuple(fc.boolean(), fc.constantFrom<Via>('basic', 'hmac')).map(([rm, v]) => new GroupStep(rm, v));
}
