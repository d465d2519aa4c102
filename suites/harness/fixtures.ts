import { randomBytes } from 'node:crypto';
import type { Faker } from '@faker-js/faker';
import { faker as english } from '@faker-js/faker/locale/en';
import type { Exchange } from '../../core/exchange.ts';
import { registerCredentials } from '../../core/redact.ts';
import { ReadOnlyError, SetupError } from './assert.ts';
import type { ApiClient } from './client.ts';
import { inFlight, type RunConfig } from './config.ts';
import type { ControlClient, Role } from './control.ts';
import { activeGate } from './gate.ts';
import { inOrder } from './in-order.ts';
import {
  activeLedger,
  exactId,
  foreignText,
  Ledger,
  type OwnedKind,
  OwnershipError,
  type Pending,
  RunStoppedError,
  type Verdict,
  verifyCreated,
} from './ownership.ts';
import { validate } from './schemas.ts';

/**
 * What a run creates. Projects, passwords and users come from the methods below; my passwords,
 * files and groups are created by calls of the endpoint table (suites/harness/endpoints.ts),
 * which hands them to track().
 */
export type FixtureKind = OwnedKind;

/**
 * Deletion order of cleanup(): files before their containers, passwords before projects, groups
 * before the users they hold, users last (objects they created keep their ids).
 */
export const CLEANUP_ORDER: readonly FixtureKind[] = ['file', 'password', 'my_password', 'project', 'group', 'user'];

/** Items of the one list page that shows many of a file's creations at once (the spec's largest page). */
const BULK_PAGE_SIZE = 1000;

/** Sent with deletions of passwords, which a locked password needs (X-Unlock-Reason, product facts §3). */
export const UNLOCK_REASON = 'pmv6 conformance run: cleanup';

/** The product's deletion path of each kind (product facts §6): `DELETE <kind>s/ID.json`, the id as the server sent it. */
export function deletePath(kind: FixtureKind, id: number | string): string {
  return `/${kind}s/${id}.json`;
}

/** An id for reports: a number where a double holds it exactly, else its exact text. */
export function reportId(id: string): number | string {
  const n = Number(id);
  return /^\d+$/.test(id) && Number.isSafeInteger(n) ? n : id;
}

export interface FixtureUser {
  id: number;
  username: string;
  password: string;
  publicKey: string;
  privateKey: string;
  /** HTTP Basic as this user (HMAC when the run signs in with HMAC only) */
  client: ApiClient;
  /** HMAC as this user */
  hmacClient: ApiClient;
}

export interface CleanupReport {
  deleted: Array<{ kind: FixtureKind; id: number | string; name: string }>;
  leftovers: Array<{ kind: FixtureKind; id: number | string; name: string; reason: string }>;
  /** Ids the target gave for the run's creations that do not show the run's name: never touched. */
  untouched?: Array<{ kind: FixtureKind; id: number | string; name: string; reason: string }>;
}

interface Created {
  kind: FixtureKind;
  /** exactly as the server sent it */
  id: string;
  name: string;
}

/** Data the suite creates is labelled `pmv6-<run>-…`, comes from a seeded faker, and is removed by cleanup(). */
export class Fixtures {
  readonly faker: Faker;
  private counter = 0;
  private readonly created: Created[] = [];
  /** Tracked objects a test deleted itself (forget()). */
  private readonly gone: Created[] = [];
  /** Ids the target gave that did not show the run's name (reported, never touched). */
  private readonly untouched: NonNullable<CleanupReport['untouched']> = [];
  /** Creations not yet shown with the run's name (settle()). */
  private readonly pending: Pending[] = [];
  /** Settles under way (settle()): a test beside the others waits for its siblings' too. */
  private readonly settling = new Set<Promise<void>>();
  /** The run's ledger (suites/harness/ownership.ts); one of its own outside a run. */
  readonly ledger: Ledger;

  constructor(
    readonly cfg: RunConfig,
    readonly admin: ApiClient,
    readonly control?: ControlClient,
  ) {
    // Decision (issue 38): the English locale's own module, not the package's index, which loads
    // every locale (0.4 s of a run's start-up here); a Faker of its definitions (en over base)
    // makes the same data for a seed as Faker({ locale: [en] }) did.
    this.faker = new (english.constructor as new (o: { locale: Faker['rawDefinitions'] }) => Faker)({ locale: english.rawDefinitions });
    this.faker.seed(cfg.seed);
    this.ledger = activeLedger() ?? new Ledger(cfg.runId);
  }

  // Every suite file has its own Fixtures: the tag keeps names unique across the files of a run
  // (usernames must be unique on the server) while the run ID still marks what the run made.
  private readonly tag = randomBytes(2).toString('hex');

  name(label: string): string {
    this.counter += 1;
    return `pmv6-${this.cfg.runId}-${this.tag}-${label}-${this.counter}`;
  }

  private writable(what: string): void {
    if (this.cfg.readOnly) throw new ReadOnlyError(`the fixture would create ${what}`);
  }

  private async create(kind: 'project' | 'password', client: ApiClient, path: string, body: Record<string, unknown>): Promise<number> {
    const ex: Exchange = await client.post(path, body);
    if (!ex.response) throw new SetupError(`creating a ${kind}: no response: ${ex.error ?? 'unknown error'}`, { exchange: ex });
    if (ex.response.status !== 201) {
      throw new SetupError(`creating a ${kind}: expected status 201, got ${ex.response.status}`, { exchange: ex });
    }
    const problems = validate('created', ex.json);
    const id = exactId(ex);
    if (problems.length > 0 || id === undefined) throw new SetupError(`creating a ${kind}: ${problems.join('; ') || 'no integer id'}`, { exchange: ex });
    this.expect(kind, id, String(body['name']), ex, [client, this.admin]);
    return Number(id);
  }

  /**
   * Records a creation as pending (suites/harness/ownership.ts, Ledger.expect): the run writes to
   * it only once an answer shows it with the run's name; cleanup() reads back what none showed.
   * A creation found to be another's is reported then and listed as not touched.
   */
  private expect(kind: FixtureKind, id: string, name: string, creation: Exchange | undefined, readers: readonly ApiClient[], acceptUnreadable = false): void {
    const item: Created = { kind, id, name };
    this.created.push(item);
    const bulk = this.bulkRead(kind, readers[0] ?? this.admin);
    const pending: Pending = {
      kind,
      id,
      name,
      readers,
      ...(creation ? { creation } : {}),
      ...(acceptUnreadable ? { acceptUnreadable } : {}),
      ...(bulk ? { bulk } : {}),
    };
    pending.onVerdict = (v) => this.verdict(item, v);
    this.ledger.expect(pending);
    this.pending.push(pending);
  }

  /** A pending creation's verdict: the run's; another's (not touched); or gone before its deferred read-back. */
  private verdict(item: Created, v: Verdict): void {
    if (v.owned) return;
    const i = this.created.indexOf(item);
    if (i >= 0) this.created.splice(i, 1);
    if ('gone' in v) this.gone.push(item);
    else this.untouched.push({ kind: item.kind, id: reportId(item.id), name: item.name, reason: foreignText(v.foreign) });
  }

  /**
   * Settles every creation of this file still pending, before the cleanup writes to them or a
   * section changes the settings they could be read back under. Lists first: one search by the
   * file's name prefix shows many passwords or projects at once (Ledger.observe); what it did not
   * show is read back one by one. `deferred`: read back long after the creation (a 404 is gone).
   */
  async settle(opts: { deferred?: boolean } = {}): Promise<void> {
    const open = this.pending.splice(0);
    const mine = inOrder(open, inFlight(this.cfg), (p) => this.ledger.settle(p, opts)).then(() => {});
    this.settling.add(mine);
    try {
      // Decision: the creations another test of the file took out of `pending` and is still reading
      // back are settled too before a section opens (tests side by side, testsSideBySide), so none
      // is read back under a section's settings. Not from inside a section: their reads wait for
      // its end (suites/harness/gate.ts).
      if (!activeGate()?.holding()) await Promise.all([...this.settling].map((p) => (p === mine ? p : p.catch(() => {}))));
      else await mine;
    } finally {
      this.settling.delete(mine);
    }
  }

  /**
   * One list page that shows this file's creations of a kind with their names: a search by the
   * file's name prefix (passwords, projects, the Admin's personal passwords), the list of users
   * or groups (no search: one page of the largest size).
   */
  private bulkRead(kind: FixtureKind, reader: ApiClient): Pending['bulk'] {
    const size = { headers: { 'X-Page-Size': String(BULK_PAGE_SIZE) } };
    const search = encodeURIComponent(`pmv6-${this.cfg.runId}-${this.tag}-`);
    if (kind === 'password' || kind === 'project') return { key: `${this.tag}:${kind}`, read: () => this.admin.get(`/${kind}s/search/${search}.json`, size) };
    // Personal passwords are listed to their owner only: the Admin's own, by the Admin.
    if (kind === 'my_password' && reader === this.admin)
      return { key: `${this.tag}:${kind}`, read: () => this.admin.get(`/my_passwords/search/${search}.json`, size) };
    if (kind === 'user' || kind === 'group') return { key: `${this.tag}:${kind}`, read: () => this.admin.get(`/${kind}s.json`, size) };
    return undefined;
  }

  /**
   * Reads a created object back (as its creator, else the Admin: `readers` in order) and
   * records it as the run's when it shows the run's name; otherwise a SetupError naming the id,
   * which is never written to (suites/harness/ownership.ts).
   */
  private async verify(
    kind: FixtureKind,
    id: string,
    name: string,
    creation?: Exchange,
    readers: readonly ApiClient[] = [this.admin],
    acceptUnreadable = false,
  ): Promise<void> {
    const verdict = await verifyCreated(this.ledger, readers, { kind, id, name, ...(creation ? { creation } : {}) }, { acceptUnreadable });
    if (verdict.owned) {
      this.created.push({ kind, id, name });
      return;
    }
    if (!('foreign' in verdict)) throw new SetupError(`${kind} ${id}: its read-back answered 404`, { exchange: verdict.readBack });
    const reason = foreignText(verdict.foreign);
    this.untouched.push({ kind, id: reportId(id), name, reason });
    throw new SetupError(reason, ...(verdict.foreign.readBack ? [{ exchange: verdict.foreign.readBack }] : []));
  }

  /** POST /projects.json → 201 {id} */
  async createProject(client: ApiClient = this.admin, fields: Record<string, unknown> = {}): Promise<number> {
    this.writable('a project');
    return this.create('project', client, '/projects.json', { name: this.name('project'), parent_id: 0, ...fields });
  }

  /** `n` passwords in a project, --concurrency at once; their ids in the order they were asked for. */
  createPasswords(projectId: number, n: number): Promise<number[]> {
    return inOrder([...Array(n).keys()], inFlight(this.cfg), () => this.createPassword(projectId));
  }

  /** POST /passwords.json → 201 {id}, with realistic optional fields */
  async createPassword(projectId: number, fields: Record<string, unknown> = {}, client: ApiClient = this.admin): Promise<number> {
    this.writable('a password');
    const f = this.faker;
    const firstName = f.person.firstName();
    const lastName = f.person.lastName();
    return this.create('password', client, '/passwords.json', {
      name: this.name('password'),
      project_id: projectId,
      tags: f.helpers.uniqueArray(() => f.word.noun(), 3).join(','),
      access_info: f.internet.url(),
      username: f.internet.username({ firstName, lastName }),
      email: f.internet.email({ firstName, lastName }),
      password: f.internet.password({ length: 20 }),
      ...fields,
    });
  }

  /**
   * An id that names no one's object: a project or password the run created, verified and
   * deleted again. For probes that write to an id that does not exist (404): on a populated
   * installation a guessed id may be someone's. Undefined when the target did not delete it.
   */
  async deletedId(kind: 'project' | 'password', projectId?: number): Promise<number | undefined> {
    if (kind === 'password' && projectId === undefined) throw new Error('fixtures: a deleted password needs a project');
    const id = kind === 'project' ? await this.createProject() : await this.createPassword(projectId!);
    const ex = await this.admin.delete(deletePath(kind, id), kind === 'password' ? { headers: { 'X-Unlock-Reason': UNLOCK_REASON } } : {});
    const status = ex.response?.status ?? 0;
    if (status < 200 || status >= 300) return undefined;
    this.forget(kind, id);
    return id;
  }

  /** Needs the control protocol. cleanup() deletes the user through DELETE /users/ID.json. */
  async createUser(role: Role, opts: { api_only?: boolean; active?: boolean; label?: string } = {}): Promise<FixtureUser> {
    if (!this.control) throw new SetupError(`creating a "${role}" user needs the control protocol, which this run does not have`);
    this.writable('a user');
    const username = this.name(opts.label ?? role.replace(/\s+/g, '-'));
    const password = `${this.faker.internet.password({ length: 16 })}-${this.faker.string.alphanumeric(8)}`;
    registerCredentials(username, password, `password of ${username}`);
    const created = await this.control.createUser({
      username,
      password,
      role,
      api_only: opts.api_only ?? false,
      active: opts.active ?? true,
    });
    // The control answer names the user; the API's read-back, where the target offers one, too.
    if (created.username !== username) {
      const reason = `the control protocol answered the creation of user ${username} with user ${created.id_text} named ${JSON.stringify(created.username)}: never written to`;
      this.untouched.push({ kind: 'user', id: reportId(created.id_text), name: username, reason });
      throw new SetupError(reason);
    }
    this.expect('user', created.id_text, username, undefined, [this.admin], true);
    const hmac = this.admin.withAuth({ kind: 'hmac', publicKey: created.public_key, privateKey: created.private_key });
    return {
      id: created.id,
      username,
      password,
      publicKey: created.public_key,
      privateKey: created.private_key,
      // A run that signs in with HMAC only (RunConfig.signIn) signs the user's requests with its keys too.
      client: this.admin.basicRefused !== undefined ? hmac : this.admin.withAuth({ kind: 'basic', user: username, password }),
      hmacClient: hmac,
    };
  }

  /**
   * Records an object a test created itself (not through these fixtures), once read back (as
   * `reader`, then the Admin) showing the run's name, so cleanup() deletes it and reports it
   * with the rest. `creation` (the exchange that created it) gives the id exactly as sent. False
   * when the id does not show the run's name: it is reported and never written to.
   */
  async track(kind: FixtureKind, id: number | string, name: string, opts: { creation?: Exchange; reader?: ApiClient; lazy?: boolean } = {}): Promise<boolean> {
    const text = (opts.creation && exactId(opts.creation)) ?? String(id);
    // `lazy`: read back only when needed (expect()); true until then.
    if (opts.lazy) {
      this.expect(kind, text, name, opts.creation, opts.reader ? [opts.reader, this.admin] : [this.admin]);
      return true;
    }
    try {
      await this.verify(kind, text, name, opts.creation, opts.reader ? [opts.reader, this.admin] : [this.admin]);
      return true;
    } catch (e) {
      if (e instanceof SetupError) return false;
      throw e;
    }
  }

  /**
   * A test deleted a tracked object itself (DELETE answered 2XX): cleanup() reports it as deleted
   * without sending another DELETE, whose 404 would read as a leftover for users.
   */
  forget(kind: FixtureKind, id: number | string): void {
    const text = this.ledger.resolve(kind, String(id)) ?? String(id);
    const i = this.created.findIndex((c) => c.kind === kind && c.id === text);
    if (i >= 0) this.gone.push(...this.created.splice(i, 1));
    this.ledger.markDeleted(kind, text);
  }

  /**
   * In CLEANUP_ORDER (newest first within a kind); never throws. Every kind goes through
   * DELETE /<kind>s/ID.json (product facts §6), as the run's Admin. Reported apart from the verdict.
   * The objects of one kind are deleted --concurrency at once; a project refused (4XX or 5XX other
   * than 404) is asked again after the others, newest first: it may have held a newer one (a
   * subproject) that the server would not delete it with.
   */
  async cleanup(): Promise<CleanupReport> {
    await this.settle({ deferred: true });
    const report: CleanupReport = { deleted: this.gone.map((g) => ({ ...g, id: reportId(g.id) })), leftovers: [] };
    if (this.untouched.length > 0) report.untouched = this.untouched.splice(0);
    this.gone.length = 0;
    for (const kind of CLEANUP_ORDER) {
      const items = this.created.filter((c) => c.kind === kind).reverse();
      // A locked password is deleted only with a reason (product facts §3); harmless on others.
      const remove = (item: Created) =>
        this.admin.delete(deletePath(kind, item.id), kind === 'password' ? { headers: { 'X-Unlock-Reason': UNLOCK_REASON } } : {}).catch((e: unknown) => {
          if (e instanceof OwnershipError || e instanceof SetupError) return e;
          throw e;
        });
      const answers = await inOrder(items, inFlight(this.cfg), remove);
      // A project refused while a subproject of it still existed is asked again, one after
      // another, newest first, once the others are gone.
      if (kind === 'project')
        for (const [i, item] of items.entries()) {
          const status = (answers[i] as Exchange).response?.status;
          if (status !== undefined && status >= 400 && status !== 404) answers[i] = await remove(item);
        }
      for (const [i, item] of items.entries()) {
        const ex = answers[i]!;
        // The run has stopped: the runner's sweep deletes it from the ledger and reports it (a
        // "not sent" line here would name an object the sweep removes a moment later).
        if (ex instanceof RunStoppedError) continue;
        // Not the run's to delete (the guard refused it): reported, never touched.
        if (ex instanceof OwnershipError || ex instanceof SetupError) {
          report.untouched = [...(report.untouched ?? []), { kind, id: reportId(item.id), name: item.name, reason: ex.message }];
          continue;
        }
        const status = ex.response?.status;
        // Any other object may already be gone (the test, or its container, removed it): 404
        // counts as deleted. For a user, 404 or 405 more likely means the target has no
        // DELETE users/ID.json: it is a leftover.
        const gone = status !== undefined && ((status >= 200 && status < 300) || (status === 404 && kind !== 'user'));
        if (gone) {
          report.deleted.push({ ...item, id: reportId(item.id) });
          this.ledger.markDeleted(kind, item.id);
        } else {
          const reason =
            status === undefined
              ? `no response: ${ex.error}`
              : kind === 'user' && (status === 404 || status === 405)
                ? `DELETE users/${item.id}.json answered ${status}: the target may not offer deleting users through the API`
                : status === 405
                  ? `DELETE ${kind}s/${item.id}.json answered 405: the target may not offer deleting them through the API`
                  : `DELETE answered ${status}`;
          report.leftovers.push({ ...item, id: reportId(item.id), reason });
        }
      }
    }
    this.created.length = 0;
    return report;
  }
}
