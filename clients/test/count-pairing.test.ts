import { describe, expect, test } from 'vitest';
import { CountPairing } from '../count-pairing.ts';
import type { ReceivedRequest } from '../request.ts';

let seq = 0;
const get = (path: string): ReceivedRequest => ({ seq: ++seq, at: 0, method: 'GET', rawUrl: `/index.php/api/v6${path}`, origin: 'http://x', headers: {}, body: undefined });

function run(steps: Array<[string, string | undefined]>, client = 'c1', pairing = new CountPairing()) {
  const out = [];
  for (const [path, size] of steps) {
    const r = pairing.observe(client, get(path), path, size);
    if (r) out.push({ count: r.count.rawUrl, finding: r.finding?.clause });
  }
  return out;
}

const COUNT = '/index.php/api/v6/passwords/count.json';

describe('count pairing (CLI-06)', () => {
  test('a count paged by with the same X-Page-Size agrees', () => {
    expect(run([['/passwords/count.json', '50'], ['/passwords.json', '50'], ['/passwords/page/2.json', '50']])).toEqual([{ count: COUNT, finding: undefined }]);
    expect(run([['/passwords/count.json', undefined], ['/passwords/page/3.json', undefined]])).toEqual([{ count: COUNT, finding: undefined }]);
  });

  test('a count paged by with another X-Page-Size, or without the list\'s, is a finding', () => {
    expect(run([['/passwords/count.json', undefined], ['/passwords.json', '50'], ['/passwords/page/2.json', '50']])).toEqual([{ count: COUNT, finding: 'CLI-06' }]);
    expect(run([['/passwords/count.json', '20'], ['/passwords/page/2.json', '50']])[0]?.finding).toBe('CLI-06');
  });

  test('a count never paged by is not judged; the first page alone is no paging', () => {
    expect(run([['/passwords/count.json', '5'], ['/passwords.json', undefined], ['/passwords/page/1.json', '1000']])).toEqual([]);
  });

  test('of several counts before a page, one with the page\'s size is enough; lists, clients and methods are kept apart', () => {
    expect(run([['/passwords/count.json', undefined], ['/passwords/count.json', '5'], ['/passwords/page/2.json', '5']])).toEqual([{ count: COUNT, finding: undefined }]);
    expect(run([['/passwords/count.json', '5'], ['/passwords/count.json', undefined], ['/passwords/page/2.json', '5']])).toEqual([{ count: COUNT, finding: undefined }]);
    expect(run([['/passwords/count.json', '7'], ['/passwords/count.json', undefined], ['/passwords/page/2.json', '5']])[0]?.finding).toBe('CLI-06');
    const p = new CountPairing();
    expect(run([['/passwords/count.json', '10']], 'c1', p)).toEqual([]);
    expect(run([['/projects/page/2.json', '50'], ['/passwords/page/2.json', '50']], 'c2', p)).toEqual([]);
    expect(run([['/passwords/page/2.json', '10']], 'c1', p)).toEqual([{ count: COUNT, finding: undefined }]);
    expect(new CountPairing().observe('c', { ...get('/passwords/count.json'), method: 'POST' }, '/passwords/count.json', '5')).toBeUndefined();
  });
});
