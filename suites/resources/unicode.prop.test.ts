import fc from 'fast-check';
import { SetupError, ViolationError, expectSchema, expectStatus, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { lazy, showPassword, stringsIn, useCreations } from './support.ts';

const s = useSession();
const create = useCreations(s);
const project = lazy(() => s.fixtures.createProject());

const NUM_RUNS = 25;

// Any code point, astral planes included; lone surrogates are not text, so they are left out.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const text = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((v) => v.length > 0 && !LONE_SURROGATE.test(v));

/**
 * Decision: fast-check's report (seed, path, counterexample, shrinks) becomes the `actual` of the
 * violation, so the failure still carries the exchange of the shrunk counterexample and can be
 * replayed with `--seed <seed>` (fast-check's `path` narrows it to the failing case).
 */
function rethrow(e: unknown): never {
  const report = e instanceof Error ? e.message : String(e);
  const cause = (e as { cause?: unknown } | null)?.cause;
  if (cause instanceof ViolationError) {
    throw new ViolationError({ expected: cause.expected, actual: `${cause.actual}\n\n${report}`, ...(cause.exchange ? { exchange: cause.exchange } : {}) });
  }
  if (cause instanceof SetupError) throw new SetupError(`${cause.message}\n\n${report}`);
  throw e;
}

clauseTest('LIM-01', 'return random Unicode text, astral planes included, byte for byte in name, username, access_info and password', async (t) => {
  const property = fc.asyncProperty(
    fc.record({ name: text, username: text, access_info: text, password: text }),
    async (sent) => {
      // The run's label keeps the name recognisable for cleanup; the random part follows it.
      const fields = { ...sent, name: `${s.fixtures.name('prop')} ${sent.name}` };
      const ex = await create('password', { ...fields, project_id: await project() });
      expectStatus(ex, 201);
      const { id } = expectSchema(ex, 'created') as { id: number };
      const shown = await showPassword(s.admin, id);
      if (shown.ex.response?.validUtf8 === false) violation(shown.ex, 'a response body in valid UTF-8', 'invalid UTF-8 bytes');
      const strings = stringsIn(shown.body);
      for (const [field, value] of Object.entries(fields)) {
        if (!strings.includes(value)) {
          const bytes = Buffer.from(value, 'utf8').toString('hex');
          violation(shown.ex, `the ${field} sent back byte for byte: ${JSON.stringify(value)} (UTF-8 ${bytes})`, 'absent from the show body');
        }
      }
    },
  );
  try {
    await fc.assert(property, { seed: t.config.seed, numRuns: NUM_RUNS, interruptAfterTimeLimit: 20_000 });
  } catch (e) {
    rethrow(e);
  }
});
