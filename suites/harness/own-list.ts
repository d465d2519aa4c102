import { SetupError } from './assert.ts';
import type { ApiClient } from './client.ts';
import { exclusive } from './gate.ts';
import type { Session } from './session.ts';

/** A list of the run's own: its viewer and what it holds. */
export interface OwnList {
  /** A Normal user of the run's own who can access `project` and nothing else. */
  client: ApiClient;
  project: number;
  /** The passwords of the project, in the order they were made. */
  ids: number[];
}

/**
 * A fresh project of the run's own holding `n` passwords, seen by a fresh Normal user given read
 * access to that project only (PUT /projects/{id}/security.json, the product's path): the user's
 * /passwords.json holds those `n` passwords whatever else the installation holds and whoever else
 * writes to it, so a test can walk it whole and judge every position on it. A string (the reason)
 * when the target refuses the grant.
 */
export async function ownPasswordList(s: Session, n: number, label: string): Promise<OwnList | string> {
  if (!s.control) return 'needs the control protocol to create users who see one project only';
  const project = await s.fixtures.createProject();
  const user = await s.user('normal user', { label });
  const grant = await s.admin.put(`/projects/${project}/security.json`, { users_permissions: [[user.id, 10]] });
  const status = grant.response?.status;
  if (status === 404 || status === 405) return `PUT /projects/{id}/security.json (the product's path, not in the spec) answered ${status}`;
  if (status === undefined || status < 200 || status > 299) {
    throw new SetupError(`granting a user access to a project: expected 2XX, got ${status ?? grant.error}`, { exchange: grant });
  }
  const ids = await s.fixtures.createPasswords(project, n);
  return { client: user.client, project, ids };
}

/**
 * A check of a file that reads a list of the run's own when it can: on that list it runs as it
 * is, beside other files (only the run writes the list, and only this file writes it); on a
 * shared list (`shared()` true: the Admin's, which files beside it write) it runs with the target
 * to itself (the gate's exclusive section), as a file that runs alone would.
 */
export function aloneWhenShared<A extends unknown[]>(shared: () => boolean, check: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return (...args: A) => (shared() ? exclusive(() => check(...args)) : check(...args));
}

/** The list a file reads: its viewer, the passwords the run put on it, and why it is shared, if it is. */
export interface ReadList {
  viewer: ApiClient;
  /** Passwords of the run's own on the list, in the order they were made. */
  ids: number[];
  /** Why the list is the Admin's, which files beside this one write; undefined on a list of the run's own. */
  shared: string | undefined;
}

/**
 * A list of the run's own holding `n` passwords (`ownPasswordList`); without one, the Admin's
 * /passwords.json with a project of the run's own holding `n` passwords added, or with `topUp`
 * only as many as it lacks to hold `n` (none on a populated installation).
 */
export async function ownOrAdminList(s: Session, n: number, label: string, opts: { topUp?: boolean } = {}): Promise<ReadList> {
  const own = await ownPasswordList(s, n, label);
  if (typeof own !== 'string') return { viewer: own.client, ids: own.ids, shared: undefined };
  let missing = n;
  if (opts.topUp) {
    const count = await s.admin.get('/passwords/count.json');
    const items = (count.json as { num_items?: unknown } | undefined)?.num_items;
    if (count.response?.status !== 200 || typeof items !== 'number')
      throw new SetupError(`reading /passwords/count.json: expected 200 and a count object, got ${count.response?.status ?? count.error}`, { exchange: count });
    missing = Math.max(0, n - items);
  }
  const ids = missing > 0 ? await s.fixtures.createPasswords(await s.fixtures.createProject(), missing) : [];
  return { viewer: s.admin, ids, shared: own };
}
