import { expectClientError, expectSchema, expectStatus, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();

clauseTest(['EP-10', 'VER-04'], 'answer GET /version.json with 200 OK and a version object without latest_version', async () => {
  const ex = await s.admin.get('/version.json');
  expectStatus(ex, 200);
  expectSchema(ex, 'version');
});

clauseTest('RES-12', 'return version as a string of dotted numbers', async () => {
  const body = expectSchema(await s.admin.get('/version.json'), 'version') as { version: string };
  if (!/^\d+(\.\d+)+$/.test(body.version)) violation(undefined, 'dotted numbers', body.version);
});

clauseTest('RES-13', 'return version_date as a YYYY-MM-DD date string', async () => {
  expectSchema(await s.admin.get('/version.json'), 'version');
});

clauseTest(['VER-01', 'VER-02'], 'report api_version "6" from GET /version.json and GET /version/check_latest.json', async () => {
  for (const path of ['/version.json', '/version/check_latest.json']) {
    const ex = await s.admin.get(path);
    const body = expectSchema(ex, path === '/version.json' ? 'version' : 'versionLatest') as { api_version: string };
    if (body.api_version !== '6') violation(ex, 'api_version "6"', `api_version ${JSON.stringify(body.api_version)}`);
  }
});

clauseTest(['EP-11', 'VER-05'], 'answer GET /version/check_latest.json for an Admin with 200 OK and latest_version as a string', async () => {
  const ex = await s.admin.get('/version/check_latest.json');
  expectStatus(ex, 200);
  expectSchema(ex, 'versionLatest');
});

clauseTest('VER-06', 'refuse GET /version/check_latest.json to Project manager, Normal user and Read only users', async () => {
  for (const role of ['project manager', 'normal user', 'read only'] as const) {
    const user = await s.user(role);
    const ex = await user.client.get('/version/check_latest.json');
    expectClientError(ex);
  }
});

clauseTest('VER-07', 'let an IT user call GET /version/check_latest.json', async () => {
  const it = await s.user('it');
  const ex = await it.client.get('/version/check_latest.json');
  expectStatus(ex, 200);
  expectSchema(ex, 'versionLatest');
});
