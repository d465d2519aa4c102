import { describe, expect, test } from 'vitest';
import { CountPairing } from '../count-pairing.ts';
import type { ReceivedRequest } from '../request.ts';

let seq = 0;
const get = (path: string): ReceivedRequest => ({
  seq: ++seq,
  at: 0,
  method: 'GET',
  rawUrl: `/index.php/api/v6${path}`,
  origin: 'http://x',
  headers: {},
  body: undefined,
});

function run(steps: Array<[string, string | undefined]>, client = 'c1', pairing = new CountPairing()) {
  const out = [];
  for (const [path, size] of steps) {
    const r = pairing.observe(client, get(path), path, size);
    if (r) out.push({ count: r.count.rawUrl, finding: r.finding?.clause });
  }
  return out;
}

const COUNT = '/index.php/api/v6/passwords/count.json';
const OK = [{ count: COUNT, finding: undefined }];

describe('count pairing (CLI-06)', () => {
  test('count, then pages with the same X-Page-Size agrees', () => {
    expect(
      run([
        ['/passwords/count.json', '50'],
        ['/passwords.json', '50'],
        ['/passwords/page/2.json', '50'],
      ]),
    ).toEqual(OK);
    expect(
      run([
        ['/passwords/count.json', undefined],
        ['/passwords/page/3.json', undefined],
      ]),
    ).toEqual(OK);
  });

  test('pages, then a count with the same X-Page-Size agrees at once', () => {
    expect(
      run([
        ['/passwords.json', '6'],
        ['/passwords/page/2.json', '6'],
        ['/passwords/count.json', '6'],
      ]),
    ).toEqual(OK);
  });

  test("a count paged by with another X-Page-Size, or without the list's, is a finding", () => {
    expect(
      run([
        ['/passwords/count.json', undefined],
        ['/passwords.json', '50'],
        ['/passwords/page/2.json', '50'],
      ]),
    ).toEqual([{ count: COUNT, finding: 'CLI-06' }]);
    expect(
      run([
        ['/passwords.json', '20'],
        ['/passwords/count.json', '50'],
        ['/passwords/page/2.json', '20'],
      ])[0]?.finding,
    ).toBe('CLI-06');
  });

  test('a count never paged by is not judged; the first page alone is no paging', () => {
    expect(
      run([
        ['/passwords/count.json', '5'],
        ['/passwords.json', undefined],
        ['/passwords/page/1.json', '1000'],
      ]),
    ).toEqual([]);
  });

  test('a walk, its count, then the next walk with another size: no finding (property tests do this)', () => {
    expect(
      run([
        ['/passwords.json', '6'],
        ['/passwords/page/2.json', '6'],
        ['/passwords/count.json', '6'],
        ['/passwords.json', '8'],
        ['/passwords/page/2.json', '8'],
        ['/passwords/count.json', '8'],
      ]),
    ).toEqual([OK[0], OK[0]]);
  });

  test("of several counts before a page, one with the page's size is enough", () => {
    expect(
      run([
        ['/passwords/count.json', undefined],
        ['/passwords/count.json', '5'],
        ['/passwords/page/2.json', '5'],
      ]),
    ).toEqual(OK);
    expect(
      run([
        ['/passwords/count.json', '5'],
        ['/passwords/count.json', undefined],
        ['/passwords/page/2.json', '5'],
      ]),
    ).toEqual(OK);
    expect(
      run([
        ['/passwords/count.json', '7'],
        ['/passwords/count.json', undefined],
        ['/passwords/page/2.json', '5'],
      ])[0]?.finding,
    ).toBe('CLI-06');
  });

  test('lists, clients and methods are kept apart', () => {
    const p = new CountPairing();
    expect(run([['/passwords/count.json', '10']], 'c1', p)).toEqual([]);
    expect(
      run(
        [
          ['/projects/page/2.json', '50'],
          ['/passwords/page/2.json', '50'],
        ],
        'c2',
        p,
      ),
    ).toEqual([]);
    expect(run([['/passwords/page/2.json', '10']], 'c1', p)).toEqual(OK);
    expect(new CountPairing().observe('c', { ...get('/passwords/count.json'), method: 'POST' }, '/passwords/count.json', '5')).toBeUndefined();
  });
});

test('the first page alone before a count is enough for page-then-count', () => {
  expect(
    run([
      ['/passwords.json', '6'],
      ['/passwords/count.json', '6'],
    ]),
  ).toEqual(OK);
});

test('a count held from before an earlier walk still counts; a judged count is not judged again', () => {
  expect(
    run([
      ['/passwords/count.json', '5'],
      ['/passwords/page/2.json', '5'],
      ['/passwords/count.json', undefined],
      ['/passwords/page/2.json', '5'],
      ['/passwords/page/3.json', '7'],
    ]),
  ).toEqual([OK[0], OK[0]]);
});
