import { expectClientError, expectSchema, expectStatus, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { useCreations } from './resource-helpers.ts';

const s = useSession();
const create = useCreations(s);

/**
 * Decision: a project record's fields are "not shown", so root-ness is checked only where the
 * server's show (the product's GET /projects/<id>.json) exposes the product's own fields: a
 * numeric parent_id must then be 0 (or null) and a parents list must be empty.
 */
async function expectRootWhereShown(id: number): Promise<Record<string, unknown> | undefined> {
  const ex = await s.admin.get(`/projects/${id}.json`);
  if (ex.response?.status !== 200 || ex.json === null || typeof ex.json !== 'object') return undefined;
  const body = ex.json as Record<string, unknown>;
  const parent = body['parent_id'];
  if (typeof parent === 'number' && parent !== 0) violation(ex, 'a root project: parent_id 0', `parent_id ${parent}`);
  const parents = body['parents'];
  if (Array.isArray(parents) && parents.length > 0) violation(ex, 'a root project: no parents', `parents ${JSON.stringify(parents)}`);
  return body;
}

clauseTest('RES-01', 'refuse to create a project without name, with or without parent_id', async () => {
  for (const body of [{ parent_id: 0 }, {}, { tags: s.fixtures.name('no-name') }]) {
    expectClientError(await create('project', body));
  }
});

clauseTest('RES-02', 'create a root project when parent_id is 0', async (t) => {
  const ex = await create('project', { name: s.fixtures.name('root-project'), parent_id: 0 });
  expectStatus(ex, 201);
  const { id } = expectSchema(ex, 'created') as { id: number };
  const shown = await expectRootWhereShown(id);
  t.observe('show of the new project', shown === undefined ? 'not available' : { parent_id: shown['parent_id'], parents: shown['parents'] });
});

clauseTest('RES-03', 'create a project when parent_id is omitted', async (t) => {
  const ex = await create('project', { name: s.fixtures.name('no-parent-project') });
  expectStatus(ex, 201);
  const { id } = expectSchema(ex, 'created') as { id: number };
  const shown = await s.admin.get(`/projects/${id}.json`);
  const body = shown.json as Record<string, unknown> | undefined;
  t.observe(
    'parent of a project created without parent_id',
    shown.response?.status === 200 ? { parent_id: body?.['parent_id'], parents: body?.['parents'] } : `show answered ${shown.response?.status ?? shown.error}`,
  );
});

clauseTest(['EP-08', 'RES-04'], 'answer POST /projects.json with 201 Created and an object with an integer id', async () => {
  const ids: number[] = [];
  for (const label of ['project-a', 'project-b']) {
    const ex = await create('project', { name: s.fixtures.name(label), parent_id: 0 });
    expectStatus(ex, 201);
    const { id } = expectSchema(ex, 'created') as { id: number };
    if (ids.includes(id)) violation(ex, 'a new id for each new project', `id ${id} again`);
    ids.push(id);
  }
});
