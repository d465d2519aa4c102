import fc from 'fast-check';
import { basicAuthorization } from '../../core/signers.ts';
import { expectErrorObject } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { checkProperty } from '../harness/property.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();
const b64 = (text: string | Uint8Array) => Buffer.from(text).toString('base64');
// Header values must stay printable ASCII on the wire.
const token = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 });
const anyText = fc.string({ unit: 'grapheme', maxLength: 30 });

// Scheme names are case-insensitive (RFC 7617), so no case variant of "Basic" is among them.
const OTHER_SCHEMES = ['Bearer', 'Digest', 'Token', 'Negotiate', 'Basix', 'BasicX', 'Basic-', 'XBasic'];

/**
 * Authorization header values that carry no valid credentials, each with its kind so the
 * counterexample says what was sent. Only the other schemes carry the real pair, as base64 of
 * `user:password`, which the redaction knows.
 */
function wrongCredentials(user: string, password: string) {
  return fc.oneof(
    fc.record({ kind: fc.constant('unknown user'), value: fc.tuple(anyText, anyText).map(([u, p]) => basicAuthorization(`pmv6-nobody-${u}`, p)) }),
    fc.record({
      kind: fc.constant("the Admin's name, another password"),
      value: anyText.filter((p) => p !== password).map((p) => basicAuthorization(user, p)),
    }),
    fc.record({ kind: fc.constant('random bytes'), value: fc.uint8Array({ maxLength: 48 }).map((bytes) => `Basic ${b64(bytes)}`) }),
    fc.record({
      kind: fc.constant('no colon'),
      value: anyText.map((t) => `Basic ${b64(`${user}${t}`.replaceAll(':', ''))}`),
    }),
    fc.record({ kind: fc.constant('not base64'), value: token.map((t) => `Basic ${t}!*`) }),
    fc.record({ kind: fc.constant('another scheme'), value: fc.tuple(fc.constantFrom(...OTHER_SCHEMES), token).map(([scheme, t]) => `${scheme} ${t}`) }),
    fc.record({
      kind: fc.constant("another scheme, the Admin's own pair"),
      value: fc.constantFrom(...OTHER_SCHEMES).map((scheme) => `${scheme} ${b64(`${user}:${password}`)}`),
    }),
  );
}

clauseTest('AUTH-12', 'answer any wrong or malformed Authorization header with 401 and type "Unauthorized"', async (t) => {
  const { user, password } = s.config;
  const valid = await s.admin.get('/version.json');
  if (valid.response?.status !== 200) t.unverifiable(`the Admin's own credentials were not accepted (status ${valid.response?.status ?? valid.error})`);
  const property = fc.asyncProperty(wrongCredentials(user, password), fc.constantFrom('/version.json', '/passwords.json'), async ({ value }, path) => {
    const ex = await s.admin.withAuth({ kind: 'raw', headers: { Authorization: value } }).get(path);
    expectErrorObject(ex, { status: 401, type: 'Unauthorized' });
  });
  const pair = b64(`${user}:${password}`);
  await checkProperty(t, property, {
    numRuns: 50,
    examples: ['BasicX', 'Basix', 'Bearer'].map((scheme) => [{ kind: "another scheme, the Admin's own pair", value: `${scheme} ${pair}` }, '/version.json']),
  });
});
