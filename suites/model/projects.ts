/**
 * Projects under a parent (issue 35): a project created with a `parent_id` (§2, Project creation
 * input), moved with the product's `PUT projects/ID/change_parent.json` and deleted, by the Admin,
 * each read back at once through the parents' `GET projects/ID/subprojects.json` and its
 * `subprojects/new_pwd.json` form (product facts §6: "Not paginated"): a child is listed under its
 * parent, and no longer under the parent it left or once deleted (RES-19).
 *
 * The parents are the sequence's projects (model.ts); a child is the sequence's too, apart from
 * them, so the other commands' judgements of the sequence's projects never count it. Decision:
 * what deleting a parent does to its children is not shown, so a child whose parent was deleted is
 * no longer judged; the file's cleanup deletes what is left (a 404 there counts as gone).
 */
import fc from 'fast-check';
import { isSuccess } from '../harness/checks.ts';
import { beside, createdId, fail, framed, listed, type Model, type Prj, ProjectCreate, pickP, type Real, type Via } from './model.ts';

interface Child {
  id: number;
  name: string;
  parent: Prj | undefined;
  deleted: boolean;
}

const own = beside<Model, Child[]>(() => []);
const labelC = (c: Child) => `project ${c.id} (${c.name})`;

/**
 * The subprojects of a parent of the sequence, as the Admin reads them (`new_pwd` or not): `child`
 * listed when `under`, else not (RES-19). A path the target does not serve says nothing.
 */
async function judgeUnder(r: Real, via: Via, parent: Prj, child: Child, under: boolean, newPwd: boolean): Promise<void> {
  if (parent.deleted) return;
  const path = `/projects/${parent.id}/subprojects${newPwd ? '/new_pwd' : ''}.json`;
  const ex = await r.clients.admin[via].get(path);
  framed(ex);
  if ((ex.response?.status === 404 || ex.response?.status === 405) && !Array.isArray(ex.json)) return;
  const ids = listed(ex, 'RES-19', `GET ${path} for the Admin over ${via}`);
  if (under && !ids.has(child.id))
    fail('RES-19', ex, `${labelC(child)} among the subprojects of project ${parent.id}: created under it or moved there with a 2XX just before`, 'missing');
  if (!under && ids.has(child.id))
    fail(
      'RES-19',
      ex,
      `no ${labelC(child)} among the subprojects of project ${parent.id}: ${child.deleted ? 'deleted' : 'moved to another parent'} with a 2XX just before`,
      'listed',
    );
}

/**
 * A child made under a project of the sequence, moved to another (or to the root when there is
 * none) and, when `remove`, deleted, each read back at once. Decision (the request budget and the
 * kill of a fault at every seed): the operations in one command; without a project of the
 * sequence to be the parent, the command creates one first (model.ts ProjectCreate).
 */
export class SubprojectStep implements fc.AsyncCommand<Model, Real, false> {
  private done: string[] = [];
  constructor(
    readonly remove: boolean,
    readonly via: Via,
    readonly back: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    this.done = [];
    const c = r.clients.admin[this.via];
    if (!pickP(m, this.back)) {
      const make = new ProjectCreate(this.via);
      this.done.push(make.toString());
      await make.run(m, r);
    }
    const parent = pickP(m, this.back);
    if (!parent) return;
    this.done.push(`createSubproject(${this.via}, -${this.back})`);
    const name = r.s.fixtures.name('model-sub');
    const ex = await c.post('/projects.json', { name, parent_id: parent.id });
    framed(ex);
    const id = ex.response?.status === 201 ? createdId(ex) : undefined;
    if (id === undefined || !(await r.s.fixtures.track('project', id, name, { creation: ex, reader: c, lazy: true }))) return;
    const child: Child = { id, name, parent, deleted: false };
    own(m).push(child);
    await judgeUnder(r, this.via, parent, child, true, false);
    // To another project of the sequence when there is one, else to the root (parent_id 0, §2).
    const to = m.projects.find((p) => !p.deleted && p !== parent);
    this.done.push(`moveSubproject(${to ? 'to another' : 'to the root'})`);
    const move = await c.put(`/projects/${child.id}/change_parent.json`, { parent_id: to?.id ?? 0 });
    framed(move);
    if (!isSuccess(move)) return;
    child.parent = to;
    await judgeUnder(r, this.via, parent, child, false, false);
    if (to) await judgeUnder(r, this.via, to, child, true, true);
    if (!this.remove) return;
    this.done.push('deleteSubproject');
    const del = await c.delete(`/projects/${child.id}.json`);
    framed(del);
    if (!isSuccess(del)) return;
    child.deleted = true;
    r.s.fixtures.forget('project', child.id);
    if (to) await judgeUnder(r, this.via, to, child, false, true);
  }
  toString = () => (this.done.length > 0 ? this.done.join('+') : `subproject(${this.via}, -${this.back}${this.remove ? ', delete' : ''})`);
}

export function subprojectCommand(): fc.Arbitrary<SubprojectStep> {
  return fc.tuple(fc.boolean(), fc.constantFrom<Via>('basic', 'hmac'), fc.constantFrom(0, 0, 1)).map(([rm, v, b]) => new SubprojectStep(rm, v, b));
}
