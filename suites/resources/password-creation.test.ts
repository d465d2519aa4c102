import { expectClientError, expectResponse, expectSchema, expectStatus, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { UNKNOWN_ID } from '../harness/endpoints.ts';
import { useSession } from '../harness/session.ts';
import { lazy, showPassword, stringsIn, useCreations, whereIs } from './resource-helpers.ts';

const s = useSession();
const create = useCreations(s);
const project = lazy(() => s.fixtures.createProject());

clauseTest('RES-05', 'refuse to create a password without name', async () => {
  const projectId = await project();
  for (const body of [{ project_id: projectId }, { project_id: projectId, username: s.fixtures.name('no-name'), password: 'x' }]) {
    expectClientError(await create('password', body));
  }
});

clauseTest('RES-06', 'refuse to create a password without project_id', async () => {
  for (const body of [{ name: s.fixtures.name('no-project') }, { name: s.fixtures.name('no-project'), username: 'u', password: 'x' }]) {
    expectClientError(await create('password', body));
  }
});

clauseTest(['EP-09', 'RES-08'], 'answer POST /passwords.json with 201 Created and an object with an integer id', async () => {
  const ids: number[] = [];
  for (const label of ['password-a', 'password-b']) {
    const ex = await create('password', { name: s.fixtures.name(label), project_id: await project() });
    expectStatus(ex, 201);
    const { id } = expectSchema(ex, 'created') as { id: number };
    if (ids.includes(id)) violation(ex, 'a new id for each new password', `id ${id} again`);
    ids.push(id);
  }
});

/**
 * Decision: the fields of a password record are "not shown", but GET /passwords/<id>.json returns
 * "all data of the password" (EP-07). So each value sent must come back as a string value
 * somewhere in the show body (MUST); the field name it comes back under is only recorded. Tags are
 * a "comma-separated list", so they are compared as a set: one string splitting to the same tags,
 * or an array of exactly those tags.
 */
clauseTest('RES-07', 'create a password with tags, access_info, username, email and password set, and show them back', async (t) => {
  const f = s.fixtures.faker;
  const tags = [`alpha${f.string.alphanumeric(6).toLowerCase()}`, `beta${f.string.alphanumeric(6).toLowerCase()}`];
  const fields = {
    tags: tags.join(','),
    access_info: `https://${f.string.alphanumeric(10).toLowerCase()}.example.org/login`,
    username: `user-${f.string.alphanumeric(10)}`,
    email: `${f.string.alphanumeric(10).toLowerCase()}@example.org`,
    password: `${f.internet.password({ length: 16 })}-${f.string.alphanumeric(8)}`,
  };
  const name = s.fixtures.name('all-fields');
  const ex = await create('password', { name, project_id: await project(), ...fields });
  expectStatus(ex, 201);
  const { id } = expectSchema(ex, 'created') as { id: number };
  const shown = await showPassword(s.admin, id);
  const strings = stringsIn(shown.body);
  const where: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries({ name, ...fields })) {
    if (key === 'tags') continue;
    if (!strings.includes(value)) violation(shown.ex, `the ${key} sent (${JSON.stringify(value)}) in the show body`, 'absent');
    where[key] = whereIs(shown.body, value);
  }
  const sameTags = (list: string[]) => list.length === tags.length && tags.every((tag) => list.includes(tag));
  const tagString = strings.find((v) =>
    sameTags(
      v
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== ''),
    ),
  );
  const tagArray = Object.entries(shown.body).find(([, v]) => Array.isArray(v) && v.every((x) => typeof x === 'string') && sameTags(v as string[]));
  if (tagString === undefined && tagArray === undefined) {
    violation(shown.ex, `the tags sent (${fields.tags}) in the show body`, 'absent');
  }
  where['tags'] = tagString !== undefined ? whereIs(shown.body, tagString) : tagArray?.[0];
  t.observe('fields under which the sent values come back', where);
});

clauseTest('RES-09', 'address a password by the integer id returned at creation', async () => {
  const names = [s.fixtures.name('addressed-a'), s.fixtures.name('addressed-b')];
  const ids: number[] = [];
  for (const name of names) ids.push(await s.fixtures.createPassword(await project(), { name }));
  for (const [i, id] of ids.entries()) {
    const shown = await showPassword(s.admin, id);
    const strings = stringsIn(shown.body);
    if (!strings.includes(names[i]!)) violation(shown.ex, `the password named ${names[i]} at /passwords/${id}.json`, 'its name is absent');
    const other = names[1 - i]!;
    if (strings.includes(other)) violation(shown.ex, `only the password with id ${id}`, `the body also names ${other}`);
  }
});

clauseTest('EP-07', 'answer GET /passwords/<password_id>.json with 200 OK and the password', async () => {
  const name = s.fixtures.name('shown');
  const secret = `${s.fixtures.faker.internet.password({ length: 20 })}-${s.fixtures.faker.string.alphanumeric(6)}`;
  const id = await s.fixtures.createPassword(await project(), { name, password: secret });
  const shown = await showPassword(s.admin, id);
  const strings = stringsIn(shown.body);
  if (!strings.includes(name)) violation(shown.ex, `the name ${name} in the show body`, 'absent');
  // "all data of the password": the secret value is part of it.
  if (!strings.includes(secret)) violation(shown.ex, 'the password value sent at creation in the show body', 'absent');
});

clauseTest('RES-10', 'record the reply to a password id that does not exist', async (t) => {
  const id = await s.fixtures.createPassword(await project());
  const deleted = await s.admin.delete(`/passwords/${id}.json`);
  const gone = deleted.response !== undefined && deleted.response.status >= 200 && deleted.response.status < 300;
  // Decision: only the id this test deleted is known not to exist; a 2XX for the guessed id is
  // recorded, not held against the server.
  const cases = [...(gone ? [{ label: 'deleted id', id, known: true }] : []), { label: 'never-used id', id: UNKNOWN_ID, known: false }];
  const replies: Record<string, unknown> = {};
  for (const c of cases) {
    const ex = await s.admin.get(`/passwords/${c.id}.json`);
    expectResponse(ex);
    const { status } = ex.response;
    const body = ex.json as { type?: unknown; message?: unknown } | undefined;
    replies[c.label] = { id: c.id, status, type: body?.type, message: body?.message };
    t.observe('replies', replies);
    if (c.known && status >= 200 && status < 300) violation(ex, `an error for the ${c.label} ${c.id}`, `status ${status}`);
    if (status >= 400 && status < 500) expectClientError(ex);
  }
});
