/**
 * Favorite projects per user (§1: "Favorites | list favorite passwords and projects of the user,
 * make a password/project favorite, make a password/project not favorite"), at the product's paths
 * (product facts §6: `favorite_projects/ID.json`, `favorite_projects.json`). The favorites of
 * passwords are model.ts's Favorite and Favorites, those of personal passwords personal.ts's.
 *
 * The Admin makes a project of the sequence favorite or not; read back at once through the
 * Admin's favorite projects (listed while favorite, not after), and through the viewer's, which
 * never hold another user's favorites (OPS-11, SHOULD: the operation is §1's, its path the product's).
 */
import fc from 'fast-check';
import { isSuccess } from '../harness/checks.ts';
import { allIds, fail, favKey, favSet, framed, type Model, ProjectCreate, type Real, Step, type Via } from './model.ts';

const CLAUSE = 'OPS-11';
const key = (r: Real, via: Via) => `projects-${favKey(r, 'admin', via)}`;

/** The favorite projects of `actor` (every page), or undefined when the product's path does not answer. */
async function favoriteProjects(r: Real, actor: 'admin' | 'viewer', via: Via) {
  const c = r.clients[actor][via];
  const first = await c.get('/favorite_projects.json', { headers: { 'X-Page-Size': '1000' } });
  framed(first);
  if ((first.response?.status === 404 || first.response?.status === 405) && !Array.isArray(first.json)) return undefined;
  return allIds(c, '/favorite_projects', CLAUSE, `GET /favorite_projects.json for the ${actor} over ${via}`);
}

export class ProjectFavorite extends Step {
  private did = '';
  constructor(
    readonly via: Via,
    readonly back: number,
  ) {
    super();
  }
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const live = () => m.projects.filter((p) => !p.deleted);
    // Decision (the same number of commands): while the sequence has no project, the command creates one first.
    if (live().length === 0) {
      this.did = 'createProject+';
      await new ProjectCreate(this.via).run(m, r);
    }
    const list = live();
    const p = list[list.length - 1 - (this.back % Math.max(1, list.length))];
    if (!p) return;
    const mine = favSet(m, key(r, this.via));
    const on = !mine.has(p.id);
    this.did += on ? 'favoriteProject' : 'unfavoriteProject';
    const c = r.clients.admin[this.via];
    const ex = on ? await c.post(`/favorite_projects/${p.id}.json`) : await c.delete(`/favorite_projects/${p.id}.json`);
    framed(ex);
    if (!isSuccess(ex)) return;
    if (on) mine.add(p.id);
    else mine.delete(p.id);
    const own = await favoriteProjects(r, 'admin', this.via);
    if (own && own.ids.has(p.id) !== on)
      fail(
        CLAUSE,
        own.ex,
        `project ${p.id} ${on ? 'in' : 'not in'} the favorite projects of the Admin over ${this.via}, who made it ${on ? '' : 'not '}favorite with a 2XX`,
        on ? 'missing' : 'listed',
      );
    if (!on) return;
    const other = await favoriteProjects(r, 'viewer', this.via);
    if (other?.ids.has(p.id))
      fail(CLAUSE, other.ex, `none of another user's favorite projects in the favorite projects of the viewer over ${this.via}`, `project ${p.id} listed`);
  }
  toString = () => `favorite(${this.did || 'project'}, ${this.via}, -${this.back})`;
}

/** The commands on favorite projects: one choice, toggling (the request budget). */
export function favoriteCommands(): Array<fc.Arbitrary<Step>> {
  return [fc.tuple(fc.constantFrom<Via>('basic', 'hmac'), fc.constantFrom(0, 0, 0, 1, 2)).map(([v, b]) => new ProjectFavorite(v, b))];
}
