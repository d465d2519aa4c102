import type { Exchange } from '../../core/exchange.ts';
import { expectSchema, expectStatus, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';
import { lazy, showPassword, stringsIn, useCreations } from '../resources/resource-helpers.ts';

const s = useSession();
const create = useCreations(s);
const project = lazy(() => s.fixtures.createProject());

// Latin with diacritics, a decomposed é (e + U+0301; normalising it is LIM-04's to record), Greek,
// Cyrillic, Hebrew, Arabic, CJK, Hangul, and characters outside the BMP: emoji, an emoji ZWJ
// sequence with a skin tone, a flag, a musical symbol and a CJK Extension B ideograph.
const TEXT = ['Zoë Æsir façade', 'cafe\u0301', 'Ελληνικά Кириллица עברית العربية', '漢字かなカナ 한국어', '😀 \u{1F469}\u{1F3FD}\u200D\u{1F4BB} 🏳️‍🌈 𝄞 𠜎'];

const codePoints = (text: string) =>
  [...text]
    .filter((c) => c.codePointAt(0)! > 0x7e)
    .map((c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`)
    .join(' ');

function expectValidUtf8(ex: Exchange): void {
  if (ex.response?.validUtf8 === false) violation(ex, 'a response body in valid UTF-8', 'invalid UTF-8 bytes');
}

/**
 * Each field's text back as sent, compared in NFC: "Character set | UTF-8" does not speak of
 * normalisation, so a server that stores NFC passes; LIM-04 records whether it does.
 */
async function expectRoundTrip(id: number, sent: Record<string, string>): Promise<void> {
  const shown = await showPassword(s.admin, id);
  expectValidUtf8(shown.ex);
  const strings = stringsIn(shown.body).map((v) => v.normalize('NFC'));
  for (const [field, value] of Object.entries(sent)) {
    if (!strings.includes(value.normalize('NFC'))) {
      const sameField = shown.body[field];
      const actual = typeof sameField === 'string' ? `${JSON.stringify(sameField)} under "${field}" instead (${codePoints(sameField)})` : 'absent';
      violation(shown.ex, `the ${field} sent, ${JSON.stringify(value)}, back as sent`, actual);
    }
  }
}

// Text the spec's "UTF-8" says nothing about: what the server keeps, changes or refuses is recorded.
const UNSTATED: Array<[string, string]> = [
  ['decomposed é (e + U+0301)', 'cafe\u0301'],
  ['U+0000', 'a\u0000b'],
  ['C0 and C1 controls', 'a\u0001\u001f\u007f\u0085b'],
  ['noncharacters U+FDD0, U+FFFE, U+10FFFF', 'a\uFDD0\uFFFE\u{10FFFF}b'],
];

clauseTest('LIM-04', 'record what becomes of decomposed text, U+0000, controls and noncharacters in a password name', async (t) => {
  for (const [what, text] of UNSTATED) {
    const name = `${s.fixtures.name('unstated')} ${text}`;
    const ex = await create('password', { name, project_id: await project() });
    if (ex.response?.status !== 201) {
      t.observe(what, `refused: status ${ex.response?.status ?? ex.error}`);
      continue;
    }
    const { id } = expectSchema(ex, 'created') as { id: number };
    const shown = await showPassword(s.admin, id);
    const back = shown.body['name'];
    t.observe(
      what,
      back === name
        ? 'kept exactly'
        : typeof back === 'string' && back.normalize('NFC') === name.normalize('NFC')
          ? 'normalised to NFC'
          : typeof back === 'string'
            ? `changed: ${JSON.stringify(back.slice(back.lastIndexOf(' ') + 1))} for ${JSON.stringify(text)}`
            : 'no name in the show body',
    );
  }
});

clauseTest('LIM-01', 'return non-ASCII text, including characters outside the BMP, exactly as it was sent', async () => {
  const sent = {
    name: `${s.fixtures.name('unicode')} ${TEXT.join(' ')}`,
    username: TEXT[4]!,
    access_info: `https://example.org/${TEXT[3]!}`,
    password: `${TEXT[1]!}${TEXT[4]!}`,
    tags: '標籤😀',
  };
  const ex = await create('password', { ...sent, project_id: await project() });
  expectStatus(ex, 201);
  const { id } = expectSchema(ex, 'created') as { id: number };
  await expectRoundTrip(id, sent);
});

clauseTest('LIM-01', 'decode JSON escapes and escaped surrogate pairs in a request body to the same text', async () => {
  const name = `${s.fixtures.name('escaped')} ${TEXT[4]!} ${TEXT[1]!}`;
  const username = TEXT[3]!;
  // JSON with every non-ASCII character written as \uXXXX, astral ones as surrogate pairs.
  const escapeNonAscii = (text: string) => JSON.stringify(text).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const rawBody = `{"name":${escapeNonAscii(name)},"project_id":${await project()},"username":${escapeNonAscii(username)}}`;
  const ex = await create('password', rawBody);
  expectStatus(ex, 201);
  const { id } = expectSchema(ex, 'created') as { id: number };
  await expectRoundTrip(id, { name, username });
});

clauseTest('LIM-01', 'keep a non-ASCII project name exactly as it was sent', async (t) => {
  const name = `${s.fixtures.name('unicode-project')} ${TEXT.join(' ')}`;
  const ex = await create('project', { name, parent_id: 0 });
  expectStatus(ex, 201);
  const { id } = expectSchema(ex, 'created') as { id: number };
  // The project show is the product's path (the spec shows none): unverifiable where absent.
  const shown = await s.admin.get(`/projects/${id}.json`);
  const status = shown.response?.status;
  if (status === 404 || status === 405) t.unverifiable(`GET /projects/<id>.json (the product's path) answered ${status}`);
  expectStatus(shown, 200);
  expectValidUtf8(shown);
  if (!stringsIn(shown.json).includes(name)) violation(shown, `the project name ${JSON.stringify(name)} back exactly`, 'absent');
});
