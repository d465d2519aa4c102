import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadScenario, parseThreshold, SCENARIO_DIR, scenarioNames, validateScenario } from '../engine/scenario.ts';
import { ITERATIONS, absolute, links } from '../k6/lib/iterations.js';

describe('scenario files', () => {
  it('every scenario file is valid against the schema, names its iteration and gives each threshold a reason', () => {
    expect(scenarioNames()).toEqual(['hmac', 'large-pages', 'mixed', 'page-sizes']);
    for (const name of scenarioNames()) {
      const s = loadScenario(name);
      expect(validateScenario(s)).toEqual([]);
      expect(Object.keys(ITERATIONS)).toContain(s.iteration);
      expect(Object.keys(s.thresholds).sort()).toEqual(['checks', 'http_req_duration', 'http_req_failed']);
      for (const specs of Object.values(s.thresholds)) for (const t of specs) expect(t.why.length).toBeGreaterThan(10);
    }
    expect(loadScenario('page-sizes').pageSizes).toEqual([5, 20, 100, 500, 1000]);
    expect(loadScenario('mixed').iteration).toBe('mixed');
  });

  it('the schema rejects a threshold without a reason, an unknown iteration, a page size outside 5-1000 and unknown keys', () => {
    const good = JSON.parse(readFileSync(join(SCENARIO_DIR, 'large-pages.json'), 'utf8'));
    const noWhy = structuredClone(good);
    delete noWhy.thresholds.checks[0].why;
    expect(validateScenario(noWhy).join()).toMatch(/\/thresholds\/checks\/0 must have required property 'why'/);
    expect(validateScenario({ ...good, iteration: 'browse' }).join()).toMatch(/\/iteration must be equal to one of the allowed values/);
    expect(validateScenario({ ...good, pageSizes: [4] }).join()).toMatch(/\/pageSizes\/0 must be >= 5/);
    expect(validateScenario({ ...good, extra: 1 }).join()).toMatch(/must NOT have additional properties/);
    expect(validateScenario({ ...good, thresholds: { vus: [{ threshold: 'value<1', why: 'no such metric' }] } }).length).toBeGreaterThan(0);
    expect(() => parseThreshold('http_req_duration', 'p95<1')).toThrow(/bad threshold/);
  });
});

describe('links(): the Link parser both engines use', () => {
  it('maps each relation to the first URL that carries it, quoted or not, several per rel, any case', () => {
    expect(links('<a>; rel="self", <b>; rel=next, <c>;rel="prev  First"')).toEqual({ self: 'a', next: 'b', prev: 'c', first: 'c' });
    expect(links('<x,y>; title="a, b; rel=no"; rel="last"')).toEqual({ last: 'x,y' });
    expect(links('<u>; REL=Next, <v>; rel="next"')).toEqual({ next: 'u' });
    expect(links('<a> ; type=text ; rel = "next"')).toEqual({ next: 'a' });
    expect(links('<a>;rel="self";rel="next"')).toEqual({ self: 'a' });
  });

  it('finds nothing where there is no rel', () => {
    expect(links(undefined)).toEqual({});
    expect(links('')).toEqual({});
    expect(links('garbage, more garbage')).toEqual({});
    expect(links('<a>; title="self", <b>')).toEqual({});
  });

  it('absolute(): a Link target relative to the origin or the API base', () => {
    const api = 'https://tpm.example.com/index.php/api/v6';
    expect(absolute('https://other.example/x', api)).toBe('https://other.example/x');
    expect(absolute('/index.php/api/v6/passwords/page/2.json', api)).toBe('https://tpm.example.com/index.php/api/v6/passwords/page/2.json');
    expect(absolute('passwords/page/2.json', api)).toBe(`${api}/passwords/page/2.json`);
  });
});
