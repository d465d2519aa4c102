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

describe('count pairing (CLI-06)', () => {
  test('a count with the size of the list before it agrees', () => {
    expect(run([['/passwords.json', '50'], ['/passwords/count.json', '50']])).toEqual([{ count: '/index.php/api/v6/passwords/count.json', finding: undefined }]);
  });

  test('a count before its list agrees with the next request of the list', () => {
    expect(run([['/passwords/count.json', '50'], ['/passwords.json', '50'], ['/passwords/page/2.json', '50']])).toEqual([{ count: '/index.php/api/v6/passwords/count.json', finding: undefined }]);
  });

  test('a count whose size matches neither the list before nor the list after is a finding', () => {
    expect(run([['/passwords.json', undefined], ['/passwords/count.json', '50'], ['/passwords/page/2.json', '20']])[0]?.finding).toBe('CLI-06');
    expect(run([['/passwords/count.json', undefined], ['/passwords.json', '50']])[0]?.finding).toBe('CLI-06');
  });

  test('a count that differs from the list before but matches the list after agrees (count first, then page)', () => {
    expect(run([['/passwords.json', undefined], ['/passwords/count.json', '5'], ['/passwords/page/1.json', '5']])[0]?.finding).toBeUndefined();
  });

  test('lists, clients and methods are kept apart; a count never followed by its list is not judged', () => {
    const p = new CountPairing();
    expect(run([['/projects.json', '50'], ['/passwords/count.json', '10']], 'c1', p)).toEqual([]);
    expect(run([['/passwords.json', '50']], 'c2', p)).toEqual([]);
    expect(run([['/projects/3/passwords/count.json', '5'], ['/projects/3/passwords.json', '5']], 'c1', p)).toEqual([{ count: '/index.php/api/v6/projects/3/passwords/count.json', finding: undefined }]);
    expect(new CountPairing().observe('c', { ...get('/passwords/count.json'), method: 'POST' }, '/passwords/count.json', '5')).toBeUndefined();
  });
});
