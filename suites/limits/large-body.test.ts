import { expectClientError, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { lazy, useCreations } from '../resources/resource-helpers.ts';

const s = useSession();
const create = useCreations(s);
const project = lazy(() => s.fixtures.createProject());

const MIB = 1024 * 1024;

// "Maximum request body size: not shown." Recorded: the reply to a 2 MiB name. Decision: any
// answer is acceptable except a server error; a refusal must be a 4XX with the error object, and
// a connection closed without a reply is recorded, not held against the server.
clauseTest('LIM-03', 'record the reply to a large request body', async (t) => {
  const name = `${s.fixtures.name('large')}-${'x'.repeat(2 * MIB)}`;
  const ex = await create('password', { name, project_id: await project() });
  if (!ex.response) {
    t.observe('2 MiB name', `no response: ${ex.error ?? 'unknown'}`);
    return;
  }
  const { status } = ex.response;
  const body = ex.json as { message?: unknown } | undefined;
  t.observe('2 MiB name', { bodyBytes: Buffer.byteLength(ex.request.body ?? ''), status, message: status >= 400 ? body?.message : undefined });
  if (status >= 500) violation(ex, 'no server error for a 2 MiB body', `status ${status}`);
  if (status >= 400) expectClientError(ex);
});
