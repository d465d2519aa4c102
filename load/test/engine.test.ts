import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../bin/cli/main.ts';
import { mutantById } from '../../fixtures/mutants/index.ts';
import type { ReferenceServer } from '../../fixtures/reference-server/src/index.ts';
import { type SeededTarget, startSeededTarget } from '../../targets/seeded.ts';
import { compareResults, mannWhitney } from '../engine/compare.ts';
import type { LoadResults } from '../engine/engine.ts';

const dir = mkdtempSync(join(tmpdir(), 'pmv6-load-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(...argv: string[]): Promise<number> {
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    return await main(['load', ...argv]);
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

function results(file: string): LoadResults {
  return JSON.parse(readFileSync(file, 'utf8')) as LoadResults;
}

/** `pmv6 load` against a target of the test's own (its admin credentials), written to DIR/NAME.json. */
async function loadAgainst(t: SeededTarget, name: string, ...args: string[]): Promise<{ code: number; r: LoadResults }> {
  const out = join(dir, `${name}.json`);
  const c = t.config;
  const code = await cli('--target', c.target, '--user', c.user, `--password=${c.password}`, ...args, '--out', out, '--quiet');
  return { code, r: results(out) };
}

/** Delays every list page asked for at X-Page-Size 1000 by 20 ms: a slowed server for the baseline comparison. */
function slowLargePages(server: ReferenceServer): void {
  server.app.addHook('onRequest', async (req) => {
    if (req.headers['x-page-size'] === '1000' && /\/api\/v6\/passwords(\/page\/\d+)?\.json/.test(req.url)) await sleep(20);
  });
}

describe('pmv6 load against the embedded reference server', () => {
  it('large-pages for 3 s exits 0 and writes percentiles per endpoint and page size', async () => {
    const out = join(dir, 'large.json');
    expect(await cli('--scenario', 'large-pages', '--duration', '3s', '--seed-passwords', '5000', '--out', out, '--quiet')).toBe(0);
    const r = results(out);
    expect(r.pass).toBe(true);
    expect(r.checks.fails).toBe(0);
    expect(r.checks.byName['walk: rel="next" reaches every page of the count']?.passes).toBeGreaterThan(0);
    const pages = r.endpoints['GET passwords/page/{n} [1000]'];
    expect(pages?.count).toBeGreaterThanOrEqual(8);
    expect(pages?.p50).toBeGreaterThan(0);
    expect(pages!.p99).toBeGreaterThanOrEqual(pages!.p95);
    expect(pages!.p95).toBeGreaterThanOrEqual(pages!.p50);
    expect(r.requests.failed).toBe(0);
    expect(r.thresholds.map((t) => `${t.metric} ${t.expr}`)).toContain('http_req_duration p(95)<2000');
  });

  it('large-pages on an empty installation passes: the one page of an empty list holds an empty array', async () => {
    const out = join(dir, 'large-empty.json');
    expect(await cli('--scenario', 'large-pages', '--duration', '1s', '--seed-passwords', '0', '--out', out, '--quiet')).toBe(0);
    const r = results(out);
    expect(r.checks.fails).toBe(0);
    expect(r.checks.byName['page: JSON array no longer than X-Page-Size']?.passes).toBeGreaterThan(0);
  });

  it('an impossible threshold exits 1', async () => {
    const out = join(dir, 'impossible.json');
    expect(await cli('--scenario', 'mixed', '--duration', '1s', '--seed-passwords', '50', '--threshold', 'p(95)<0.001', '--out', out, '--quiet')).toBe(1);
    const r = results(out);
    expect(r.checks.fails).toBe(0);
    expect(r.thresholds.find((t) => t.expr === 'p(95)<0.001')?.ok).toBe(false);
  });

  it('the hmac scenario signs every request and passes', async () => {
    const out = join(dir, 'hmac.json');
    expect(await cli('--scenario', 'hmac', '--duration', '2s', '--seed-passwords', '2500', '--out', out, '--quiet')).toBe(0);
    const r = results(out);
    expect(r.auth).toBe('hmac');
    expect(r.requests.total).toBeGreaterThan(4);
    expect(r.requests.failed).toBe(0);
  });

  it('a server that breaks a pagination rule fails the checks threshold (exit 1)', async () => {
    const broken = await startSeededTarget({ passwords: 2_100, mutate: (s) => mutantById('link-prev-on-first-page')!.apply(s) });
    try {
      const out = join(dir, 'broken.json');
      const c = broken.config;
      expect(
        await cli('--scenario', 'large-pages', '--target', c.target, '--user', c.user, `--password=${c.password}`, '--duration', '1s', '--out', out, '--quiet'),
      ).toBe(1);
      const r = results(out);
      expect(r.checks.byName['page: rel="prev" absent on the first page, present after it']?.fails).toBeGreaterThan(0);
      expect(r.thresholds.find((t) => t.metric === 'checks')?.ok).toBe(false);
    } finally {
      await broken.close();
    }
  });

  it('a run that drops iterations fails its dropped-iterations threshold (exit 1), whatever its latencies', async () => {
    // Every reply takes 400 ms: at 40 iterations/s the scenario's 30 VUs are soon all busy.
    const slow = await startSeededTarget({
      passwords: 50,
      mutate: (s) =>
        s.app.addHook('onRequest', async (req) => {
          if (req.url.includes('/api/v6/')) await sleep(400);
        }),
    });
    try {
      const { code, r } = await loadAgainst(slow, 'dropped', '--scenario', 'mixed', '--rate', '40', '--duration', '2s');
      expect(r.iterations.dropped).toBeGreaterThan(0);
      expect(r.thresholds.find((t) => t.metric === 'dropped_iterations')).toMatchObject({ expr: 'rate<0.1', ok: false });
      expect(code).toBe(1);
    } finally {
      await slow.close();
    }
  }, 60_000);

  it('a server that answers creates without an id: the iterations cannot delete, the sweep at the end does, and says so', async () => {
    const noId = await startSeededTarget({
      passwords: 10,
      mutate: (s) =>
        s.app.addHook('onSend', async (req, reply, payload) => {
          const sent = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : JSON.stringify(req.body ?? '');
          if (req.method !== 'POST' || !/\/projects\.json$/.test(req.url) || reply.statusCode !== 201 || sent.includes('pmv6-load-seed')) return payload;
          reply.code(200);
          return '{"created":true}';
        }),
    });
    try {
      const { code, r } = await loadAgainst(noId, 'no-id', '--scenario', 'mixed', '--rate', '5', '--duration', '1s');
      expect(code).toBe(1);
      const c = noId.config;
      expect(r.swept?.found).toBeGreaterThan(0);
      expect(r.swept?.deleted).toBe(r.swept?.found);
      const left = await fetch(`${c.target}/index.php/api/v6/projects/search/pmv6-load.json`, {
        headers: { authorization: `Basic ${Buffer.from(`${c.user}:${c.password}`).toString('base64')}`, 'content-type': 'application/json; charset=utf-8' },
      });
      const found = (await left.json()) as unknown;
      expect(found, JSON.stringify(found)).toBeInstanceOf(Array);
      expect((found as Array<{ name: string }>).filter((p) => p.name !== 'pmv6-load-seed')).toEqual([]);
    } finally {
      await noId.close();
    }
  }, 60_000);

  it('a server that fails every other search and project delete: the sweep tries again, deletes everything and says what is left by a search (issue 36)', async () => {
    let n = 0;
    const flaky = await startSeededTarget({
      passwords: 10,
      mutate: (s) =>
        s.app.addHook('onRequest', async (req, reply) => {
          if (!((req.method === 'DELETE' && req.url.includes('/projects/')) || req.url.includes('/search/pmv6-load-'))) return;
          n++;
          if (n % 2 === 1) return reply.code(500).header('content-type', 'application/json').send('{"error":true,"type":"Internal","message":"flaky"}');
        }),
    });
    try {
      const { r } = await loadAgainst(flaky, 'flaky', '--scenario', 'mixed', '--rate', '5', '--duration', '1s');
      expect(r.swept?.found, `${n} ${JSON.stringify(r.swept)} ${JSON.stringify(r.checks)}`).toBeGreaterThan(0);
      expect(r.swept).toMatchObject({ left: 0 });
      expect(r.swept?.deleted).toBe(r.swept?.found);
    } finally {
      await flaky.close();
    }
  }, 60_000);

  it('a count one above its list is caught by a whole walk at a size it does not divide (pages by ceiling agree)', async () => {
    // 2,100 passwords, counted 2,101: at 1000 a page both make 3 pages, so only the items tell.
    const off = await startSeededTarget({ passwords: 2_100, mutate: (s) => mutantById('count-items-off-by-one')!.apply(s) });
    try {
      const { r } = await loadAgainst(off, 'count-off', '--scenario', 'large-pages', '--duration', '1s', '--body-sample', '1');
      expect(r.checks.byName['walk: rel="next" reaches every page of the count']?.fails).toBe(0);
      expect(r.checks.byName['walk: the pages hold as many items as the count']?.fails).toBeGreaterThan(0);
      expect(r.checks.byName['walk: no item on two pages']?.fails).toBe(0);
    } finally {
      await off.close();
    }
  }, 60_000);

  it('items repeated across pages are caught by a whole walk', async () => {
    // Page 2 at 1000 a page answers what page 1 holds.
    const repeats = await startSeededTarget({
      passwords: 2_100,
      mutate: (s) =>
        s.app.addHook('onRequest', async (req) => {
          if (req.headers['x-page-size'] === '1000' && req.raw.url?.endsWith('/passwords/page/2.json'))
            req.raw.url = req.raw.url.replace('/page/2.json', '/page/1.json');
        }),
    });
    try {
      const { r } = await loadAgainst(repeats, 'repeats', '--scenario', 'large-pages', '--duration', '1s', '--body-sample', '1');
      expect(r.checks.byName['walk: no item on two pages']?.fails).toBeGreaterThan(0);
    } finally {
      await repeats.close();
    }
  }, 60_000);

  it('usage and target errors exit 2', async () => {
    expect(await cli('--scenario', 'nope')).toBe(2);
    expect(await cli('--scenario', 'mixed', '--rate', '5', '--vus', '2')).toBe(2);
    expect(await cli('--scenario', 'mixed', '--duration', '11m')).toBe(2);
    expect(await cli('--scenario', 'mixed', '--target', 'http://127.0.0.1:9/', '--user', 'a', '--password', 'b', '--quiet')).toBe(2);
  });
});

describe('pmv6 load --baseline', () => {
  let server: SeededTarget;
  let slowed: SeededTarget;
  const base = join(dir, 'base.json');
  beforeAll(async () => {
    [server, slowed] = await Promise.all([startSeededTarget({ passwords: 4000 }), startSeededTarget({ passwords: 4000, mutate: slowLargePages })]);
  });
  afterAll(async () => {
    await server?.close();
    await slowed?.close();
  });
  const args = (t: SeededTarget) => [
    '--scenario',
    'large-pages',
    '--target',
    t.config.target,
    '--user',
    t.config.user,
    `--password=${t.config.password}`,
    '--duration',
    '3s',
    '--quiet',
  ];

  it('a second run of the same server is within noise; a server that delays large pages by 20 ms is a regression', async () => {
    expect(await cli(...args(server), '--out', base)).toBe(0);
    const again = join(dir, 'again.json');
    expect(await cli(...args(server), '--out', again, '--baseline', base, '--budget', '50', '--budget-ms', '10')).toBe(0);
    expect(compareResults(results(base), results(again), { budget: 0.5, minMs: 10, alpha: 0.01 }).regressions).toEqual([]);
    const slow = join(dir, 'slow.json');
    const page = join(dir, 'slow.html');
    expect(await cli(...args(slowed), '--out', slow, '--baseline', base, '--budget', '50', '--budget-ms', '10', '--report', page)).toBe(1);
    const html = readFileSync(page, 'utf8');
    expect(html).toMatch(/<h2>GET passwords\/page\/\{n\} \[1000\] <span class="verdict bad">regression<\/span>/);
    expect(html.match(/<polyline class="before"/g)?.length).toBeGreaterThan(0);
    expect(html.match(/<polyline class="after"/g)?.length).toBe(html.match(/<polyline class="before"/g)?.length);
    expect(html).not.toMatch(/(src|href)=["']?https?:|@import|url\(/);
    const c = compareResults(results(base), results(slow), { budget: 0.5, minMs: 10, alpha: 0.01 });
    expect(c.regressions).toContain('GET passwords/page/{n} [1000]');
    expect(c.regressions).not.toContain('GET passwords/count [1000]');
  }, 30_000);

  it('a tail-only slowdown is a p95 regression; two runs alike are within noise (synthetic samples)', () => {
    // 2,000 latencies of 10-20 ms; after: the slowest 8% take 60 ms more, the median does not move.
    const before = Array.from({ length: 2000 }, (_, i) => 10 + ((i * 7919) % 1000) / 100);
    const after = before.map((v) => (v > 19.2 ? v + 60 : v));
    const result = (samples: number[]): LoadResults => {
      const sorted = [...samples].sort((x, y) => x - y);
      const at = (q: number) => sorted[Math.ceil(q * sorted.length) - 1]!;
      const e = { key: 'GET passwords [20]', count: samples.length, p50: at(0.5), p95: at(0.95), p99: at(0.99), rps: 100, samples };
      return { scenario: 'x', endpoints: { [e.key]: e } } as unknown as LoadResults;
    };
    const same = compareResults(result(before), result([...before].reverse()));
    expect(same.regressions).toEqual([]);
    expect(same.endpoints[0]!.verdict).toBe('within noise');
    const tail = compareResults(result(before), result(after));
    expect(tail.endpoints[0]!.change!.p50).toBe(0);
    expect(tail.endpoints[0]!.pValue).toBeGreaterThan(0.01);
    expect(tail.endpoints[0]!).toMatchObject({ verdict: 'regression', regressed: ['p95', 'p99'] });
    expect(tail.endpoints[0]!.tailPValues!.p95).toBeLessThan(0.001);
  });

  it('Mann-Whitney: equal samples give p = 1, a clear shift gives a small p', () => {
    const a = Array.from({ length: 50 }, (_, i) => 10 + (i % 7));
    expect(mannWhitney(a, a).p).toBeCloseTo(1, 5);
    const shifted = mannWhitney(
      a,
      a.map((v) => v + 20),
    );
    expect(shifted.p).toBeLessThan(1e-6);
    expect(shifted.ps).toBe(1);
  });
});
