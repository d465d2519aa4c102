import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  loadScenario,
  parseThreshold,
  readScenarioFile,
  SCENARIO_DIR,
  SCENARIO_SCHEMA_FILE,
  type Scenario,
  scenarioNames,
  validateScenario,
} from '../engine/scenario.ts';
import { absolute, ITERATIONS, links } from '../k6/lib/iterations.js';

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

  it('the schema rejects a threshold without a reason, an unknown iteration, a page size outside 5-1000 and unknown keys, naming the field', () => {
    const good = JSON.parse(readFileSync(join(SCENARIO_DIR, 'large-pages.json'), 'utf8'));
    const noWhy = structuredClone(good);
    delete noWhy.thresholds.checks[0].why;
    expect(validateScenario(noWhy)).toEqual(['thresholds.checks[0].why is missing']);
    expect(validateScenario({ ...good, iteration: 'browse' })).toEqual(['iteration is "browse", not one of walk, mixed']);
    expect(validateScenario({ ...good, pageSizes: [4] })).toEqual(['pageSizes[0] must be >= 5 (it is 4)']);
    expect(validateScenario({ ...good, extra: 1 })).toEqual(['extra is not a field the schema knows']);
    expect(validateScenario({ ...good, load: { ...good.load, rate: 0 } })).toEqual(['load.rate must be > 0 (it is 0)']);
    expect(validateScenario({ ...good, load: { ...good.load, executor: 'constant-vus' } })).toEqual([
      'load.vus is missing',
      'load.rate is not a field the schema knows',
      'load.timeUnit is not a field the schema knows',
      'load.preAllocatedVUs is not a field the schema knows',
      'load.maxVUs is not a field the schema knows',
    ]);
    expect(validateScenario({ ...good, load: { ...good.load, duration: '30x' } })).toEqual([
      'load.duration is "30x", not a k6 duration (30s, 2m, 1m30s, 500ms)',
    ]);
    expect(validateScenario({ ...good, thresholds: { vus: [{ threshold: 'value<1', why: 'no such metric' }] } })).toEqual([
      'thresholds.vus is not one of http_req_duration, http_req_failed, checks, dropped_iterations',
      'thresholds.vus[0].threshold is "value<1", not a k6 threshold (p(95)<2000, rate<0.01, count<1)',
    ]);
    expect(() => parseThreshold('http_req_duration', 'p95<1')).toThrow(/bad threshold/);
  });

  it('a bad scenario file fails in one line naming the file and every bad field; a file that is not JSON names the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pmv6-scenario-'));
    try {
      const good = JSON.parse(readFileSync(join(SCENARIO_DIR, 'mixed.json'), 'utf8'));
      const bad = join(dir, 'bad.json');
      writeFileSync(bad, JSON.stringify({ ...good, auth: 'token', pageSizes: [] }));
      expect(() => readScenarioFile(bad)).toThrow(`${bad}: auth is "token", not one of basic, hmac; pageSizes must NOT have fewer than 1 items (it is [])`);
      const broken = join(dir, 'broken.json');
      writeFileSync(broken, '{ "name": ');
      expect(() => readScenarioFile(broken)).toThrow(new RegExp(`^${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not a JSON file \\(`));
      for (const file of [bad, broken]) {
        try {
          readScenarioFile(file);
        } catch (e) {
          expect((e as Error).message).not.toContain('\n');
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the Scenario type (load/k6/lib/iterations.js, the one definition both engines use) and the schema name the same fields', () => {
    // A field added to or dropped from the typedef fails tsc here; one added to or dropped from the schema fails the test.
    const scenarioFields: Record<keyof Scenario, 'required' | 'optional'> = {
      name: 'required',
      description: 'required',
      iteration: 'required',
      auth: 'required',
      pageSizes: 'required',
      maxPages: 'optional',
      load: 'required',
      thresholds: 'required',
    };
    const arrivalRateFields: Record<keyof Extract<Scenario['load'], { executor: 'constant-arrival-rate' }>, true> = {
      executor: true,
      rate: true,
      timeUnit: true,
      duration: true,
      preAllocatedVUs: true,
      maxVUs: true,
    };
    const constantVusFields: Record<keyof Extract<Scenario['load'], { executor: 'constant-vus' }>, true> = { executor: true, vus: true, duration: true };
    const schema = JSON.parse(readFileSync(SCENARIO_SCHEMA_FILE, 'utf8'));
    const properties = Object.keys(schema.properties).filter((k) => k !== '$schema');
    expect(properties.sort()).toEqual(Object.keys(scenarioFields).sort());
    expect([...schema.required].sort()).toEqual(
      Object.keys(scenarioFields)
        .filter((k) => scenarioFields[k as keyof Scenario] === 'required')
        .sort(),
    );
    const branches = schema.properties.load.allOf.map((b: { then: { properties: object; required: string[] } }) => b.then);
    expect(Object.keys(branches[0].properties).sort()).toEqual(Object.keys(arrivalRateFields).sort());
    expect(Object.keys(branches[1].properties).sort()).toEqual(Object.keys(constantVusFields).sort());
    expect([...branches[0].required].sort()).toEqual(Object.keys(arrivalRateFields).sort());
    expect([...branches[1].required].sort()).toEqual(Object.keys(constantVusFields).sort());
  });
});

describe('links(): the Link parser both engines use', () => {
  it('maps each relation to the first URL that carries it, quoted or not, several per rel, any case', () => {
    expect(links('<a>; rel="self", <b>; rel=next, <c>;rel="prev  First"')).toEqual({ self: 'a', next: 'b', prev: 'c', first: 'c' });
    expect(links('<x,y>; title="a, b; rel=no"; rel="last"')).toEqual({ last: 'x,y' });
    expect(links('<u>; REL=Next, <v>; rel="next"')).toEqual({ next: 'u' });
    expect(links('<a> ; type=text ; rel = "next"')).toEqual({ next: 'a' });
    expect(links('<a>;rel="self";rel="next"')).toEqual({ self: 'a' });
    expect(links('<a>; rel="SELF", <b>; rel=Last, <c>; rel="fIRST", <d>; rel="nexts", <e>; rel="nope", <f>; rel="PREV next"')).toEqual({
      self: 'a',
      last: 'b',
      first: 'c',
      nexts: 'd',
      nope: 'e',
      prev: 'f',
      next: 'f',
    });
    expect(links('<a>; rel="ſelf", <b>; rel')).toEqual({ ſelf: 'a' });
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
