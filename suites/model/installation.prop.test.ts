import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { SetupError, ViolationError } from '../harness/assert.ts';
import { isSuccess } from '../harness/checks.ts';
import { type ClauseTestContext, clauseTest } from '../harness/clause-test.ts';
import type { ApiClient } from '../harness/client.ts';
import { inFlight } from '../harness/config.ts';
import { ahead } from '../harness/in-order.ts';
import { checkProperty } from '../harness/property.ts';
import { useSession } from '../harness/session.ts';
import { allCommands } from './commands.ts';
import { endFiles } from './files.ts';
import { judgeGeneratorSettings } from './generator.ts';
import { ACTORS, type Actor, clauseOf, countShows, emptyGroup, endProjects, judgeLog, MEMBERS, type Model, OUTSIDERS, type Real, type Via } from './model.ts';
import { endPersonal } from './personal.ts';

// Random sequences of the v6 operations by users of every role, over HTTP Basic and HMAC, each
// answer held to a model of what the installation must then contain (./model.ts, README.md).
// One property run serves every test of the file; each test reports the violations of its clause.

const s = useSession();
const RUNS = 9;
const MAX_COMMANDS = 29;
/** Read access to a project (product facts §7: PRJ permission labels), through the product's path. */
const READ = 10;

interface Shared {
  clients: Record<Actor, Record<Via, ApiClient>>;
  hmac: boolean;
  projects: Real['projects'];
  pool: Real['pool'];
  groups: Real['groups'];
  people: Real['people'];
}

type Outcome = { ok: true } | { ok: false; clause: string | undefined; error: unknown } | { ok: 'unverifiable'; reason: string };
let outcome: Promise<Outcome> | undefined;
/** The file's users and clients once made (the generator's settings are judged after the sequences). */
let made: Shared | undefined;

async function grant(project: number, user: number): Promise<number | undefined> {
  const ex = await s.admin.put(`/projects/${project}/security.json`, { users_permissions: [[user, READ]] });
  return ex.response?.status;
}

/**
 * The users of every role, the two projects and the viewer, once for the file; whether HMAC works;
 * whether access can be granted. Decision (issue 26's request budget): every sequence works in
 * the same two projects with the same viewer, on passwords of its own; a check holds a list to
 * the sequence's own passwords and a count to all the file has in the projects (`Real.pool`).
 */
async function shared(): Promise<Shared | string> {
  if (!s.control) return 'needs the control protocol to create users of every role';
  const users = Object.fromEntries(
    await Promise.all(
      ['it', ...OUTSIDERS].map(async (role) => [
        role,
        await s.user(role as (typeof OUTSIDERS)[number] | 'it', { label: `model-${role.replace(/\s+/g, '-')}` }),
      ]),
    ),
  );
  const adminHmac = await s.adminHmac();
  const probe = adminHmac ? await adminHmac.get('/version.json') : undefined;
  const hmac = probe !== undefined && isSuccess(probe);
  const pair = (basic: ApiClient, signed: ApiClient | undefined): Record<Via, ApiClient> => ({ basic, hmac: hmac && signed ? signed : basic });
  const project = await s.fixtures.createProject();
  const status = await grant(project, users.it.id);
  if (status === 404 || status === 405) return `PUT /projects/{id}/security.json (the product's path, not in the spec) answered ${status}`;
  if (status === undefined || status < 200 || status > 299) throw new SetupError(`granting a user read access to a project: expected 2XX, got ${status}`);
  const clients = { admin: pair(s.admin, adminHmac) } as Shared['clients'];
  for (const role of ['it', ...OUTSIDERS] as const) clients[role] = pair(users[role].client, users[role].hmacClient);
  const [main, other, viewer] = await Promise.all([s.fixtures.createProject(), s.fixtures.createProject(), s.user('normal user', { label: 'model-viewer' })]);
  for (const p of [main, other]) {
    const status = await grant(p, viewer.id);
    if (status === undefined || status < 200 || status > 299) throw new SetupError(`granting the viewer read access to project ${p}: got ${status}`);
  }
  clients.viewer = pair(viewer.client, viewer.hmacClient);
  const people = Object.fromEntries(MEMBERS.map((who) => [who, who === 'viewer' ? viewer : users[who]])) as Real['people'];
  return { clients, hmac, projects: { main, other }, pool: { live: 0 }, groups: {}, people };
}

/** A sequence's model, empty: its passwords are its own, in the file's two projects (shared). */
function setup(sh: Shared): { model: Model; real: Real } {
  return {
    model: { passwords: [], projects: [], users: [], favorites: {}, generated: [], groupsOffered: sh.groups.offered !== false },
    real: {
      s,
      clients: sh.clients,
      projects: sh.projects,
      pool: sh.pool,
      groups: sh.groups,
      people: sh.people,
      sameAdmin: s.config.hmac !== undefined,
      prefix: `m${randomBytes(4).toString('hex')}`,
      counter: { n: 0 },
    },
  };
}

function runModel(t: ClauseTestContext): Promise<Outcome> {
  outcome ??= (async (): Promise<Outcome> => {
    const sh = await shared();
    if (typeof sh === 'string') return { ok: 'unverifiable', reason: sh };
    made = sh;
    t.observe('HMAC', sh.hmac ? 'every command over HMAC is signed' : 'HMAC not accepted (AUTH-03): the commands over HMAC go over Basic');
    const property = fc.asyncProperty(fc.commands(allCommands(), { maxCommands: MAX_COMMANDS, size: 'max' }), async (cmds) => {
      let state: { model: Model; real: Real } | undefined;
      try {
        await fc.asyncModelRun(() => (state = setup(sh)), cmds);
      } catch (e) {
        // What only the sequence can delete (files of locked passwords, others' personal passwords), also after a failure.
        if (state) await Promise.allSettled([endFiles(state.model, state.real), endPersonal(state.model, state.real, false)]);
        throw e;
      }
      // At the end of every sequence, the log of each of its passwords (LOG-01), its group emptied
      // (OPS-14) and its projects deleted (OPS-01, SIZE-10), each read back.
      // The logs side by side (reads of entries that name one password each), judged in order.
      if (state) for await (const _ of ahead(state.model.passwords, inFlight(s.config), (p) => judgeLog(state!.model, state!.real, p)));
      if (state) await emptyGroup(state.model, state.real);
      if (state) await endProjects(state.model, state.real);
      if (state) await endFiles(state.model, state.real);
      if (state) await endPersonal(state.model, state.real, true);
    });
    const stop = countShows();
    try {
      await checkProperty(t, property, { numRuns: RUNS });
      return { ok: true };
    } catch (e) {
      return { ok: false, clause: e instanceof ViolationError ? clauseOf(e) : undefined, error: e };
    } finally {
      stop();
    }
  })();
  return outcome;
}

/** The test of one clause: the shared run's violation of it, if that is where the run stopped. */
function modelTest(id: string, behaviour: string, after?: (t: ClauseTestContext) => Promise<void>): void {
  clauseTest(
    id,
    behaviour,
    async (t) => {
      const o = await runModel(t);
      if (o.ok === true) return after?.(t);
      if (o.ok === 'unverifiable') return t.unverifiable(o.reason);
      // A failure that names no clause (no response, a failed setup) is reported once, by the first test.
      if (o.clause === id || (o.clause === undefined && id === FIRST)) throw o.error;
      if (o.clause === undefined) t.unverifiable('the model run ended on an error reported under EP-03');
      t.unverifiable(`the model run stopped at a violation of ${o.clause} before it could judge this clause further`);
    },
    { timeout: 300_000 },
  );
}

const OF = `in random sequences of creates, updates, archives, locks, moves, favorites, deletes, shows, lists, counts, searches, custom fields, generator and log reads, groups and their members, projects and subprojects, users, roles and credentials by users of every role (${ACTORS.join(', ')}), over HTTP Basic and HMAC`;

const FIRST = 'EP-03';
modelTest(FIRST, `list every password the user can access and no deleted one, ${OF}`);
modelTest('EP-07', `show a password with the values of its last successful update, ${OF}`);
modelTest('RES-10', `answer a show of a password deleted earlier with an error, ${OF}`);
modelTest('GEN-09', `refuse every show, list entry and write of the run's passwords to users given no access, ${OF}`);
modelTest('SIZE-10', `count in count.json the passwords the list holds, ${OF}`);
modelTest('OPS-11', `list a favorite as soon as it is made and never after it is unmade, and never another user's, ${OF}`);
// Then, once for the file, the generator with its settings changed (./generator.ts), in an exclusive section.
modelTest('OPS-16', `never return the same generated password twice, ${OF}; and follow the generator settings' length and classes`, async (t) => {
  const sh = made!;
  const why = await judgeGeneratorSettings(s, [
    [sh.clients.admin.basic, 'the Admin over HTTP Basic'],
    [sh.clients.it.hmac, `the IT user over ${sh.hmac ? 'HMAC' : 'HTTP Basic (HMAC not accepted)'}`],
  ]);
  if (why !== undefined) t.unverifiable(why);
});
modelTest('EP-11', `answer check_latest for the Admin and refuse it to every role but IT and Admin, ${OF}`);
modelTest('LOG-01', `write each action to the log once, shows included when the server logs shows, ${OF}`);
modelTest('OPS-02', `find a password by the text of its name while it exists, and not once deleted, ${OF}`);
modelTest('OPS-01', `show and find a project with its current name while it exists, and neither it nor its password once deleted, ${OF}`);
modelTest('GEN-07', `let a user activated again call the API with their own credentials, ${OF}`);
modelTest('GEN-15', `refuse the credentials of a user deactivated with a 2XX, ${OF}`);
modelTest('GEN-08', `list to the Admin every project the Admin made and did not delete, ${OF}`);
modelTest('OPS-09', `upload, list, show, download byte for byte, update the notes of and delete files, and refuse an upload over the maximum, ${OF}`);
modelTest('OPS-10', `show, list, update and delete a personal password as its owner did, ${OF}`);
modelTest('OPS-12', `lock and unlock, archive and unarchive, move and grant access to a password, each read back at once, ${OF}`);
modelTest('GEN-17', `show no user another user's personal passwords, ${OF}`);
modelTest('GEN-18', `refuse at once an old password after a change and old HMAC keys after a renewal, ${OF}`);
modelTest(
  'OPS-13',
  `show a user with its current name while it exists and not once deleted, and carry out role changes both ways and conversions to ldap and back at once, as the Admin and the changed user read them back, ${OF}`,
);
modelTest(
  'OPS-14',
  `list in a group's show the users added to it and not those removed, show and list a created or renamed group with its name, and neither once deleted, ${OF}`,
);
modelTest('OPS-15', `show a password's custom field definitions as last updated, to the Admin and to a user who may read it, ${OF}`);
modelTest('RES-19', `list a project created under a parent among its subprojects, and not once moved away or deleted, ${OF}`);
modelTest('LOG-08', `answer a query of the log to Admin and IT users only, also at once after a role change, ${OF}`);
modelTest('GEN-03', `send every JSON body as sent, without a byte order mark and with a JSON media type, error bodies included, ${OF}`);
