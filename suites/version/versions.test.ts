import { clip } from '../../core/redact.ts';
import { expectResponse, expectSchema, expectStatus, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { API_PREFIX } from '../harness/client.ts';
import { useSession } from '../harness/session.ts';

// Its requests to other API versions and to the log are where a target that hangs on some paths
// hangs; beside other files their deadlines land together, which the hang bound counts as one
// wait (suites/runner/run-suites.ts), so it runs beside the others.
const s = useSession();

// "This interface is API version 6 (v6)." Whether an installation also serves earlier versions is
// not said; the product serves some in parallel (product facts §1). Recorded: the status of
// GET version.json at v1 to v5, and api_version where one answers 200.
clauseTest('VER-03', 'record which other API versions the installation serves', async (t) => {
  const served: Record<string, unknown> = {};
  for (const v of [1, 2, 3, 4, 5]) {
    const url = s.admin.apiUrl('/version.json').replace(API_PREFIX, `/index.php/api/v${v}`);
    const ex = await s.admin.get('', { url });
    expectResponse(ex);
    const { status } = ex.response;
    served[`v${v}`] = status === 200 ? { status, api_version: (ex.json as { api_version?: unknown } | undefined)?.api_version } : status;
    t.observe('GET /index.php/api/vN/version.json', served);
    if (status >= 500) violation(ex, `a reply other than a server error for API version ${v}`, `status ${status}`);
  }
});

// "the log is a resource": its path is not shown; the product's is GET log.json, paginated
// (product facts §6). A 404 or 405 there is unverifiable, never a violation (catalogue README).
clauseTest('VER-08', 'serve the action log as a resource that can be queried', async (t) => {
  const list = await s.admin.get('/log.json');
  const status = list.response?.status;
  if (status === 404 || status === 405) t.unverifiable(`GET /log.json (the product's log path) answered ${status}`);
  expectStatus(list, 200);
  if (!Array.isArray(list.json)) violation(list, 'a JSON array of log entries', clip(JSON.stringify(list.json), 200) ?? 'a body that is not JSON');
  t.observe('entries on the first page', list.json.length);
  const count = await s.admin.get('/log/count.json');
  t.observe('GET /log/count.json', count.response?.status ?? count.error);
  if (count.response?.status === 200) expectSchema(count, 'count');
  const page = await s.admin.get('/log/page/1.json', { headers: { 'X-Page-Size': '5' } });
  t.observe('GET /log/page/1.json', page.response?.status ?? page.error);
  if (page.response?.status === 200 && !Array.isArray(page.json))
    violation(page, 'a JSON array of log entries', clip(JSON.stringify(page.json), 200) ?? 'a body that is not JSON');
});
