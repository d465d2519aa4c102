import type { Exchange } from '../../core/exchange.ts';
import { expectErrorObject, expectStatus } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { saysCredentialsWrong } from '../oracle/oracle.ts';

const s = useSession();

clauseTest('AUTH-01', 'answer a request without credentials with 401 Unauthorized', async () => {
  expectStatus(await s.anonymous.get('/passwords.json'), 401);
  expectStatus(await s.anonymous.get('/version.json'), 401);
});

clauseTest('AUTH-02', "accept HTTP Basic authentication with the user's username and password", async () => {
  expectStatus(await s.admin.get('/passwords.json'), 200);
});

clauseTest('AUTH-12', 'answer a wrong password, an unknown user and missing credentials with 401 and type "Unauthorized"', async () => {
  const { user, password } = s.config;
  for (const auth of [
    { kind: 'basic' as const, user, password: `${password}x` },
    { kind: 'basic' as const, user: `${user}-pmv6-unknown`, password },
    { kind: 'none' as const },
  ]) {
    expectErrorObject(await s.admin.withAuth(auth).get('/version.json'), { status: 401, type: 'Unauthorized' });
  }
});

clauseTest('AUTH-12', 'answer a malformed Basic header with 401 and type "Unauthorized"', async () => {
  for (const authorization of ['Basic', 'Basic !!!not-base64!!!', `Basic ${Buffer.from('no-colon').toString('base64')}`, 'Bearer abc']) {
    const ex = await s.admin.withAuth({ kind: 'raw', headers: { Authorization: authorization } }).get('/version.json');
    expectErrorObject(ex, { status: 401, type: 'Unauthorized' });
  }
});

/** A wrong password, an unknown user and no credentials: the three ways HTTP Basic fails. */
async function failedBasic(): Promise<Exchange[]> {
  const { user, password } = s.config;
  const out: Exchange[] = [];
  for (const auth of [
    { kind: 'basic' as const, user, password: `${password}x` },
    { kind: 'basic' as const, user: `${user}-pmv6-unknown`, password },
    { kind: 'none' as const },
  ]) {
    out.push(await s.admin.withAuth(auth).get('/version.json'));
  }
  return out;
}

// §5 paraphrases the message ("a message saying…"): that there is one is MUST, its sense SHOULD.
clauseTest('AUTH-13', 'give a message with the 401 of a wrong password, an unknown user and missing credentials', async () => {
  for (const ex of await failedBasic()) expectErrorObject(ex, { status: 401, message: (m) => m.trim() !== '' });
});

clauseTest(
  'AUTH-14',
  'say in the 401 message of a wrong password, an unknown user and missing credentials that the username or password is incorrect or missing',
  async () => {
    for (const ex of await failedBasic()) expectErrorObject(ex, { status: 401, message: saysCredentialsWrong });
  },
);
