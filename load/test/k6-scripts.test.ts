import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mutantById } from '../../fixtures/mutants/index.ts';
import { hmacSign, signedUri } from '../../suites/harness/signers.ts';
import { startSeededTarget, type LoadTarget } from '../engine/embedded.ts';
import { runK6Script, type StandinResult } from './k6-standin/run.ts';

const K6 = join(dirname(fileURLToPath(import.meta.url)), '..', 'k6');
let target: LoadTarget;

beforeAll(async () => {
  target = await startSeededTarget({ passwords: 1_234 });
}, 30_000);
afterAll(() => target?.close());

function env(): Record<string, string> {
  const c = target.credentials;
  return {
    PMV6_TARGET: target.target,
    PMV6_USER: c.user,
    PMV6_PASSWORD: c.password,
    PMV6_HMAC_PUBLIC: c.hmac?.publicKey ?? '',
    PMV6_HMAC_PRIVATE: c.hmac?.privateKey ?? '',
    PMV6_SUMMARY: 'summary.json',
  };
}

function failedChecks(r: StandinResult): string[] {
  return r.checks.filter((c) => !c.pass).map((c) => c.name);
}

describe('k6 scripts under the test-only stand-in of the k6 modules', () => {
  it('large-pages: counts at 1000, walks every page by rel="next", groups page URLs, all checks pass', async () => {
    const r = await runK6Script(join(K6, 'large-pages.js'), { env: env(), iterations: 2 });
    expect(r.error).toBeUndefined();
    expect(failedChecks(r)).toEqual([]);
    expect(r.checks.some((c) => c.name.startsWith('walk:'))).toBe(true);
    const api = r.exchanges.filter((e) => e.tags['name'] !== 'version');
    expect(api.map((e) => `${e.method} ${e.url.replace(target.target, '')}`).slice(0, 4)).toEqual([
      'GET /index.php/api/v6/passwords/count.json',
      'GET /index.php/api/v6/passwords.json',
      'GET /index.php/api/v6/passwords/page/2.json',
      'GET /index.php/api/v6/passwords/count.json',
    ]);
    expect(api).toHaveLength(2 * (1 + 2));
    for (const e of api) {
      expect(e.headers['X-Page-Size']).toBe('1000');
      expect(e.headers['Content-Type']).toBe('application/json; charset=utf-8');
      expect(e.headers['Authorization']).toMatch(/^Basic /);
      expect(e.status).toBe(200);
    }
    expect(new Set(api.map((e) => e.tags['name']))).toEqual(new Set(['passwords/count', 'passwords', 'passwords/page/{n}']));
    const options = r.options;
    expect(options?.thresholds).toEqual(JSON.parse(readFileSync(join(K6, '../scenarios/large-pages.json'), 'utf8')).thresholds);
    expect(options?.scenarios?.['large-pages']?.['executor']).toBe('constant-arrival-rate');
    expect(JSON.parse(r.files['summary.json'] ?? '{}').scenario).toBe('large-pages');
  });

  it('page-sizes: successive iterations take 5, 20, 100, 500, 1000 and walk different stretches', async () => {
    const r = await runK6Script(join(K6, 'page-sizes.js'), { env: env(), iterations: 6 });
    expect(r.error).toBeUndefined();
    expect(failedChecks(r)).toEqual([]);
    const counts = r.exchanges.filter((e) => e.tags['name'] === 'passwords/count').map((e) => e.headers['X-Page-Size']);
    expect(counts).toEqual(['5', '20', '100', '500', '1000', '5']);
    const pages5 = r.exchanges.filter((e) => e.headers['X-Page-Size'] === '5' && e.tags['name'] !== 'passwords/count').map((e) => e.url);
    expect(pages5).toHaveLength(40);
    expect(new Set(pages5).size).toBe(40);
  });

  it('hmac: every request is signed with uri + timestamp + body, no Basic header, all 200', async () => {
    const r = await runK6Script(join(K6, 'hmac.js'), { env: env(), iterations: 2 });
    expect(r.error).toBeUndefined();
    expect(failedChecks(r)).toEqual([]);
    expect(r.exchanges.length).toBeGreaterThan(4);
    const privateKey = target.credentials.hmac!.privateKey;
    for (const e of r.exchanges) {
      expect(e.status).toBe(200);
      expect(e.headers['Authorization']).toBeUndefined();
      expect(e.headers['X-Public-Key']).toBe(target.credentials.hmac!.publicKey);
      const timestamp = e.headers['X-Request-Timestamp']!;
      expect(e.headers['X-Request-Hash']).toBe(hmacSign({ privateKey, uri: signedUri(e.url), timestamp, body: e.body }));
    }
  });

  it('mixed: creates, reads, updates, lists and deletes with unique names, leaving nothing behind', async () => {
    const r = await runK6Script(join(K6, 'mixed.js'), { env: env(), iterations: 3 });
    expect(r.error).toBeUndefined();
    expect(failedChecks(r)).toEqual([]);
    const seq = r.exchanges.filter((e) => e.tags['name'] !== 'version').map((e) => `${e.method} ${e.tags['name']} ${e.status}`);
    expect(seq.slice(0, 7)).toEqual([
      'POST projects 201',
      'POST passwords 201',
      'GET passwords/{id} 200',
      'PUT passwords/{id} 204',
      'GET passwords 200',
      'DELETE passwords/{id} 204',
      'DELETE projects/{id} 204',
    ]);
    const names = r.exchanges.filter((e) => e.method === 'POST' && e.tags['name'] === 'projects').map((e) => JSON.parse(e.body).name as string);
    expect(new Set(names).size).toBe(3);
    expect(names[0]).toMatch(/^pmv6-load-/);
  });

  it('a wrong password stops the run in setup() before any load', async () => {
    const r = await runK6Script(join(K6, 'large-pages.js'), { env: { ...env(), PMV6_PASSWORD: 'wrong' }, iterations: 2 });
    expect(r.error).toMatch(/version\.json answered 401/);
    expect(r.exchanges).toHaveLength(1);
  });

  it.each([
    ['link-prev-on-first-page', 'page: rel="prev" absent on the first page, present after it'],
    ['link-next-on-last-page', 'page: rel="next" absent on the last page, present before it'],
    ['page-size-ignored', 'count: num_items_per_page equals X-Page-Size'],
  ])('the checks catch the mutant %s', async (id, failing) => {
    const mutant = mutantById(id)!;
    const broken = await startSeededTarget({ passwords: 2_100, mutate: (s) => mutant.apply(s) });
    try {
      const r = await runK6Script(join(K6, 'large-pages.js'), {
        env: { ...env(), PMV6_TARGET: broken.target, PMV6_PASSWORD: broken.credentials.password },
        iterations: 1,
      });
      expect(r.error).toBeUndefined();
      expect(failedChecks(r)).toContain(failing);
    } finally {
      await broken.close();
    }
  });
});
