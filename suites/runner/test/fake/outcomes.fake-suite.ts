// A suite that exercises every outcome, run by runner.test.ts through the real runner: a harness
// crash must never be reported as a violation of the server.

import type { Exchange } from '../../../../core/exchange.ts';
import { SetupError, violation } from '../../../harness/assert.ts';
import { clauseTest } from '../../../harness/clause-test.ts';

const exchange = (password: string): Exchange => ({
  request: {
    method: 'POST',
    url: 'http://127.0.0.1:9/index.php/api/v6/passwords.json',
    headers: { Authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`, 'Content-Type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ name: 'n', project_id: 1, password }),
  },
  response: { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: '12', password }) },
  durationMs: 1,
});

clauseTest('PAG-03', 'pass', () => {});
clauseTest('PAG-04', 'fail with a violation that carries secrets', (t) => {
  violation(exchange(t.config.password), 'status 201', 'status 200');
});
clauseTest('PAG-05', 'crash in the harness', () => {
  (undefined as unknown as { x: number }).x;
});
clauseTest('PAG-07', 'fail during setup', () => {
  throw new SetupError('could not create the fixture');
});
clauseTest('ERR-04', 'need the control protocol', () => {});
clauseTest('ADDR-02', 'violate a SHOULD', () => {
  violation(undefined, 'https', 'http');
});
clauseTest('AUTH-03', 'fail the dependency of AUTH-04', () => {
  violation(undefined, 'HMAC accepted', '401');
});
clauseTest('AUTH-04', 'pass while the dependency fails', () => {});
// INFO: a test that ran to its end recorded what the server does; observed, never a pass.
clauseTest('GEN-02', 'record what the server does', (t) => {
  t.observe('PATCH /passwords.json', 405);
  t.observe('reply', { status: 405, type: 'Method Not Allowed' });
});
// A passed MUST test that also cites an INFO clause leaves that clause observed, not passed.
clauseTest(['RES-16', 'RES-17'], 'pass a MUST that also cites an INFO clause', () => {});
clauseTest('RES-17', 'record the fields of a record', (t) => {
  t.observe('password list item', ['id', 'name']);
});
// A deviation found by an INFO test still warns.
clauseTest('GEN-05', 'find a deviation in an INFO clause', () => {
  violation(undefined, 'a JSON body', 'form data');
});
