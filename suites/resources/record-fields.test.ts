import type { Exchange } from '../../core/exchange.ts';
import { clip } from '../../core/redact.ts';
import { expectStatus, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { showPassword } from './resource-helpers.ts';

const s = useSession();

const keysOf = (value: unknown): string[] | string =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value).sort() : `not an object: ${clip(JSON.stringify(value), 80)}`;

/** The list item with this id on the first page of up to 1000, else the first item. */
function itemOf(ex: Exchange, id: number): unknown {
  if (!Array.isArray(ex.json)) return undefined;
  const items = ex.json as Array<{ id?: unknown }>;
  return items.find((item) => item?.id === id) ?? items[0];
}

// "Fields of the project and password records as returned by list and show: not shown." The
// password list and show are in the endpoint table and must answer 200 with an array and an
// object; the project list and show are the product's paths, recorded whatever they answer.
clauseTest('RES-17', 'record the fields of project and password records returned by list and show', async (t) => {
  const project = await s.fixtures.createProject();
  const password = await s.fixtures.createPassword(project);
  const headers = { 'X-Page-Size': '1000' };
  const list = await s.admin.get('/passwords.json', { headers });
  expectStatus(list, 200);
  if (!Array.isArray(list.json)) violation(list, 'a JSON array', clip(JSON.stringify(list.json), 200) ?? 'a body that is not JSON');
  t.observe('password list item', keysOf(itemOf(list, password)));
  t.observe('password show', keysOf((await showPassword(s.admin, password)).body));

  const projects = await s.admin.get('/projects.json', { headers });
  t.observe(
    'project list item',
    projects.response?.status === 200 ? keysOf(itemOf(projects, project)) : `GET /projects.json answered ${projects.response?.status ?? projects.error}`,
  );
  const shown = await s.admin.get(`/projects/${project}.json`);
  t.observe('project show', shown.response?.status === 200 ? keysOf(shown.json) : `GET /projects/<id>.json answered ${shown.response?.status ?? shown.error}`);
});
