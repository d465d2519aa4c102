import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { parseLinkHeader, relMap } from '../link.ts';

const base = 'http://127.0.0.1:8080/index.php/api/v6/passwords/page';

describe('parseLinkHeader: well-formed values', () => {
  test('the five v6 relations, comma-separated', () => {
    const value = [
      `<${base}/2.json>; rel="self"`,
      `<${base}/1.json>; rel="prev"`,
      `<${base}/3.json>; rel="next"`,
      `<${base}/1.json>; rel="first"`,
      `<${base}/5.json>; rel="last"`,
    ].join(', ');
    const { entries, errors } = parseLinkHeader(value);
    expect(errors).toEqual([]);
    expect(entries.map((e) => [e.rels, e.url])).toEqual([
      [['self'], `${base}/2.json`],
      [['prev'], `${base}/1.json`],
      [['next'], `${base}/3.json`],
      [['first'], `${base}/1.json`],
      [['last'], `${base}/5.json`],
    ]);
    const map = relMap(entries);
    expect(map.get('first')).toEqual([`${base}/1.json`]);
    expect([...map.keys()]).toEqual(['self', 'prev', 'next', 'first', 'last']);
  });

  test('undefined gives nothing and no error', () => {
    expect(parseLinkHeader(undefined)).toEqual({ entries: [], errors: [] });
  });

  test('token rel, several rels in one value, case folded, extra params kept', () => {
    const { entries, errors } = parseLinkHeader('<a.json>;rel=next, <b.json> ; REL="First  LAST" ; title="Page \\"one\\"" ; anchor=x');
    expect(errors).toEqual([]);
    expect(entries[0]).toEqual({ url: 'a.json', rels: ['next'], params: { rel: 'next' } });
    expect(entries[1]).toEqual({ url: 'b.json', rels: ['first', 'last'], params: { rel: 'First  LAST', title: 'Page "one"', anchor: 'x' } });
    expect(relMap(entries).get('last')).toEqual(['b.json']);
  });

  test('commas inside <> and inside quotes are not separators', () => {
    const { entries, errors } = parseLinkHeader('<http://h/a,b.json?x=1,2>; rel="next"; title="a, b; c", <http://h/c.json>; rel="last"');
    expect(errors).toEqual([]);
    expect(entries.map((e) => e.url)).toEqual(['http://h/a,b.json?x=1,2', 'http://h/c.json']);
    expect(entries[0]?.params['title']).toBe('a, b; c');
  });

  test('multiple header lines are all read', () => {
    const { entries, errors } = parseLinkHeader(['<p1.json>; rel="self"', '<p2.json>; rel="next", <p9.json>; rel="last"']);
    expect(errors).toEqual([]);
    expect([...relMap(entries).entries()]).toEqual([
      ['self', ['p1.json']],
      ['next', ['p2.json']],
      ['last', ['p9.json']],
    ]);
  });

  test('a repeated rel relation collects every url; a second rel parameter is ignored (RFC 8288 §3.3)', () => {
    const { entries, errors } = parseLinkHeader('<a>; rel="next", <b>; rel="next"; rel="prev"');
    expect(errors).toEqual([]);
    expect(relMap(entries).get('next')).toEqual(['a', 'b']);
    expect(relMap(entries).has('prev')).toBe(false);
  });

  test('parameter without value, whitespace around "=" and tabs', () => {
    const { entries, errors } = parseLinkHeader('<a>\t;\trel = "self" ; crossorigin');
    expect(errors).toEqual([]);
    expect(entries[0]?.params).toEqual({ rel: 'self', crossorigin: '' });
  });
});

describe('parseLinkHeader: malformed values are reported, never thrown', () => {
  const cases: Array<[string, string | string[], RegExp, number]> = [
    ['missing <>', 'http://h/a.json; rel="next"', /expected "<"/, 0],
    ['missing rel', '<a.json>; title="x"', /missing rel/, 1],
    ['empty rel', '<a.json>; rel=""', /empty rel/, 1],
    ['unterminated quote', '<a.json>; rel="next, <b.json>; rel=last', /unterminated quoted string/, 0],
    ['unterminated <', '<a.json; rel="next"', /missing ">"/, 0],
    ['empty entry between commas', '<a>; rel="self",, <b>; rel="next"', /empty entry/, 2],
    ['trailing comma', '<a>; rel="self", ', /empty entry/, 1],
    ['empty header', '', /empty Link header/, 0],
    ['junk after url', '<a> rel="next", <b>; rel="last"', /expected ";" or ","/, 1],
    ['junk after quoted value', '<a>; rel="next" x, <b>; rel="last"', /expected ";" or ","/, 1],
    ['dangling semicolon', '<a>; rel="next";', /empty parameter/, 1],
    ['parameter without a name', '<a>; ="next", <b>; rel=last', /invalid parameter name/, 1],
    ['parameter with "=" but no value', '<a>; rel=', /has no value/, 1],
    ['escape at end of value', '<a>; rel="next\\', /unterminated/, 0],
    ['error on the second line only', ['<a>; rel="self"', 'garbage'], /line 2, link-value 1: expected "<"/, 1],
  ];
  test.each(cases)('%s', (_name, value, error, entryCount) => {
    const result = parseLinkHeader(value);
    expect(
      result.errors.some((e) => error.test(e)),
      result.errors.join(' | '),
    ).toBe(true);
    expect(result.entries).toHaveLength(entryCount);
  });

  test('a bad entry does not hide the good ones after it', () => {
    const { entries, errors } = parseLinkHeader('nonsense, <b.json>; rel="next", <c.json>; rel="last"');
    expect(errors).toHaveLength(1);
    expect(entries.map((e) => e.url)).toEqual(['b.json', 'c.json']);
  });

  test('any string: never throws, errors are strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('<', '>', ',', ';', '"', '\\', '=', ' ', 'a', 'r', 'e', 'l') }), (s) => {
        const result = parseLinkHeader(s);
        expect(result.errors.every((e) => typeof e === 'string')).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  test('round trip: serialised entries parse back to themselves', () => {
    const rel = fc.constantFrom('self', 'prev', 'next', 'first', 'last');
    const url = fc.webUrl().filter((u) => !u.includes('>'));
    fc.assert(
      fc.property(fc.array(fc.record({ url, rels: fc.uniqueArray(rel, { minLength: 1, maxLength: 3 }) }), { minLength: 1, maxLength: 6 }), (links) => {
        const header = links.map((l) => `<${l.url}>; rel="${l.rels.join(' ')}"`).join(', ');
        const { entries, errors } = parseLinkHeader(header);
        expect(errors).toEqual([]);
        expect(entries.map((e) => ({ url: e.url, rels: e.rels }))).toEqual(links);
      }),
      { numRuns: 50 },
    );
  });
});
