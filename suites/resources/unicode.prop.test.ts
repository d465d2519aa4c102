import fc from 'fast-check';
import { expectSchema, expectStatus, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { checkProperty } from '../harness/property.ts';
import { useSession } from '../harness/session.ts';
import { lazy, showPassword, stringsIn, useCreations } from './resource-helpers.ts';

const s = useSession();
const create = useCreations(s);
const project = lazy(() => s.fixtures.createProject());

const NUM_RUNS = 25;

// Printable text of any plane: LIM-01 promises UTF-8, which says nothing of what a server does
// with controls, U+0000, noncharacters or unassigned code points (LIM-04 records those), nor of
// Unicode normalisation, so text is compared in NFC.
const NOT_PRINTABLE = /[\p{Cc}\p{Cs}\p{Cn}\uFDD0-\uFDEF]|[\uFFFE\uFFFF]/u;
// Built from code points (fast-check's `unit: 'binary'` string costs about 80 MB of heap to set up).
const printable = fc.integer({ min: 0x20, max: 0x10ffff }).filter((c) => (c & 0xfffe) !== 0xfffe && !NOT_PRINTABLE.test(String.fromCodePoint(c)));
const text = fc.array(printable, { minLength: 1, maxLength: 40 }).map((codePoints) => String.fromCodePoint(...codePoints));
const nfc = (v: string) => v.normalize('NFC');

clauseTest('LIM-01', 'return random printable Unicode text, astral planes included, in name, username, access_info and password', async (t) => {
  const property = fc.asyncProperty(fc.record({ name: text, username: text, access_info: text, password: text }), async (sent) => {
    // The run's label keeps the name recognisable for cleanup; the random part follows it.
    const fields = { ...sent, name: `${s.fixtures.name('prop')} ${sent.name}` };
    const ex = await create('password', { ...fields, project_id: await project() });
    expectStatus(ex, 201);
    const { id } = expectSchema(ex, 'created') as { id: number };
    const shown = await showPassword(s.admin, id);
    if (shown.ex.response?.validUtf8 === false) violation(shown.ex, 'a response body in valid UTF-8', 'invalid UTF-8 bytes');
    const strings = stringsIn(shown.body).map(nfc);
    for (const [field, value] of Object.entries(fields)) {
      if (!strings.includes(nfc(value))) {
        const bytes = Buffer.from(value, 'utf8').toString('hex');
        violation(shown.ex, `the ${field} sent back byte for byte: ${JSON.stringify(value)} (UTF-8 ${bytes})`, 'absent from the show body');
      }
    }
  });
  // Decision (issue 38): every run, side by side (checkProperty), no time limit: with one, the
  // runs made depended on the schedule (through 100 ms, 9 of 25 once, the others waiting behind
  // the exclusive sections of other files), and so did the check's power.
  await checkProperty(t, property, { numRuns: NUM_RUNS });
});
