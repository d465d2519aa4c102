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
import { checkPage, type Io, ITERATIONS, links, type Method, type Reply, resolveLink, type SendOptions } from '../k6/lib/iterations.js';

describe('scenario files', () => {
  it('every scenario file is valid against the schema, names its iteration and gives each threshold a reason', () => {
    expect(scenarioNames()).toEqual(['hmac', 'large-pages', 'mixed', 'page-sizes', 'ramp']);
    for (const name of scenarioNames()) {
      const s = loadScenario(name);
      expect(validateScenario(s)).toEqual([]);
      expect(Object.keys(ITERATIONS)).toContain(s.iteration);
      // Every scenario holds the four metrics; some hold one endpoint or page size besides.
      expect(Object.keys(s.thresholds).filter((k) => !k.includes('{'))).toEqual(['http_req_duration', 'http_req_failed', 'dropped_iterations', 'checks']);
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
      'thresholds.vus is not a metric both engines compute (http_req_duration, http_req_failed, checks, dropped_iterations), or one of the first two narrowed by tags as k6 writes it: http_req_duration{name:passwords/count,page_size:5} (tags method, name, page_size)',
      'thresholds.vus[0].threshold is "value<1", not a k6 threshold (p(95)<2000, rate<0.01, count<1)',
    ]);
    expect(() => parseThreshold('http_req_duration', 'p95<1')).toThrow(/bad threshold/);
  });

  it('a threshold narrowed by tags is parsed as k6 writes it, and must select some request of the scenario', () => {
    const t = parseThreshold('http_req_duration{name:passwords/page/{n},page_size:1000}', 'p(95)<500');
    expect(t).toMatchObject({
      metric: 'http_req_duration',
      key: 'http_req_duration{name:passwords/page/{n},page_size:1000}',
      tags: { name: 'passwords/page/{n}', page_size: '1000' },
    });
    expect(() => parseThreshold('checks{name:x}', 'rate>0.9')).toThrow(/takes no tags/);
    expect(() => parseThreshold('http_req_duration{url:x}', 'p(95)<1')).toThrow(/bad tag "url:x"/);
    expect(() => parseThreshold('http_req_duration{}', 'p(95)<1')).toThrow(/bad selector/);
    const good = JSON.parse(readFileSync(join(SCENARIO_DIR, 'large-pages.json'), 'utf8'));
    const why = 'a reason long enough';
    expect(validateScenario({ ...good, thresholds: { 'http_req_duration{name:passwords/count,page_size:1000}': [{ threshold: 'p(95)<9', why }] } })).toEqual(
      [],
    );
    expect(validateScenario({ ...good, thresholds: { 'http_req_duration{name:passwords-list}': [{ threshold: 'p(95)<9', why }] } })).toEqual([
      "thresholds.http_req_duration{name:passwords-list}: selects none of the scenario's requests",
    ]);
    expect(validateScenario({ ...good, thresholds: { 'http_req_duration{page_size:20}': [{ threshold: 'p(95)<9', why }] } })).toEqual([
      "thresholds.http_req_duration{page_size:20}: selects none of the scenario's requests",
    ]);
  });

  it('ramping models: stages of whole targets with k6 durations, each field checked', () => {
    const ramp = loadScenario('ramp');
    expect(ramp.load.executor).toBe('ramping-arrival-rate');
    const load = { executor: 'ramping-vus', startVUs: 0, stages: [{ duration: '10s', target: 5 }] };
    expect(validateScenario({ ...ramp, load })).toEqual([]);
    expect(validateScenario({ ...ramp, load: { ...load, stages: [{ duration: '10s', target: 1.5 }] } })).toEqual([
      'load.stages[0].target must be integer (it is 1.5)',
    ]);
    expect(validateScenario({ ...ramp, load: { ...load, stages: [] } })).toEqual(['load.stages must NOT have fewer than 1 items (it is [])']);
    expect(validateScenario({ ...ramp, load: { ...load, stages: [{ duration: '10', target: 1 }] } })).toEqual([
      'load.stages[0].duration is "10", not a k6 duration (30s, 2m, 1m30s, 500ms)',
    ]);
    expect(validateScenario({ ...ramp, load: { ...load, duration: '10s' } })).toEqual(['load.duration is not a field the schema knows']);
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
    const rampingRateFields: Record<keyof Extract<Scenario['load'], { executor: 'ramping-arrival-rate' }>, true> = {
      executor: true,
      startRate: true,
      timeUnit: true,
      stages: true,
      preAllocatedVUs: true,
      maxVUs: true,
    };
    const rampingVusFields: Record<keyof Extract<Scenario['load'], { executor: 'ramping-vus' }>, true> = { executor: true, startVUs: true, stages: true };
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
    for (const [i, fields] of [rampingRateFields, rampingVusFields].entries()) {
      expect(Object.keys(branches[i + 2].properties).sort()).toEqual(Object.keys(fields).sort());
      expect([...branches[i + 2].required].sort()).toEqual(Object.keys(fields).sort());
    }
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

  it('resolveLink(): a Link target resolved against the URL of the page that carried it (RFC 3986 §5.2)', () => {
    const page = 'https://tpm.example.com/index.php/api/v6/passwords/page/2.json';
    expect(resolveLink('https://other.example/x', page)).toBe('https://other.example/x');
    expect(resolveLink('/index.php/api/v6/passwords/page/3.json', page)).toBe('https://tpm.example.com/index.php/api/v6/passwords/page/3.json');
    expect(resolveLink('3.json', page)).toBe('https://tpm.example.com/index.php/api/v6/passwords/page/3.json');
    expect(resolveLink('../../passwords.json', page)).toBe('https://tpm.example.com/index.php/api/v6/passwords.json');
    expect(resolveLink('./page/3.json', 'https://tpm.example.com/index.php/api/v6/passwords.json')).toBe(
      'https://tpm.example.com/index.php/api/v6/page/3.json',
    );
    expect(resolveLink('//mirror.example/a/./b/../c.json', page)).toBe('https://mirror.example/a/c.json');
    expect(resolveLink('?x=1', page)).toBe(`${page}?x=1`);
    expect(resolveLink('', `${page}?q=1#f`)).toBe(`${page}?q=1`);
  });

  it('resolveLink() gives what the WHATWG URL parser gives on the references of RFC 3986 §5.4', () => {
    const base = 'http://a/b/c/d;p?q';
    for (const ref of [
      'g',
      './g',
      'g/',
      '/g',
      '//g',
      '?y',
      'g?y',
      '#s',
      'g#s',
      ';x',
      'g;x',
      '',
      '.',
      './',
      '..',
      '../',
      '../g',
      '../..',
      '../../',
      '../../g',
      '../../../g',
      '/./g',
      '/../g',
      'g.',
      '.g',
      'g..',
      '..g',
      './../g',
      './g/.',
      'g/./h',
      'g/../h',
      'g;x=1/./y',
      'g;x=1/../y',
    ])
      expect(resolveLink(ref, base), ref).toBe(new URL(ref, base).href.replace('http://g/', 'http://g'));
  });
});

/** An Io that answers from `answer` and records what was sent and checked. */
function fakeIo(answer: (method: Method, url: string) => Reply) {
  const sent: string[] = [];
  const checks: Record<string, boolean[]> = {};
  const io: Io = {
    api: 'http://127.0.0.1:1/index.php/api/v6',
    runTag: 't',
    send: (method: Method, url: string, _o: SendOptions) => {
      sent.push(`${method} ${url.replace('http://127.0.0.1:1/index.php/api/v6', '')}`);
      return answer(method, url);
    },
    check: (name, ok) => {
      (checks[name] ??= []).push(ok);
      return ok;
    },
    sampleBody: () => true,
  };
  return {
    io,
    sent,
    checks,
    failed: () =>
      Object.entries(checks)
        .filter(([, v]) => v.includes(false))
        .map(([k]) => k),
  };
}

describe('the iterations on lawful and faulty answers', () => {
  const mixed = loadScenario('mixed');
  const created = (id: number): Reply => ({ status: 201, link: undefined, body: JSON.stringify({ id }) });
  const list: Reply = { status: 200, link: '<x>; rel="self"', body: '[]' };

  it('walk follows relative Link references from the page that carried them', async () => {
    const { io, sent, failed } = fakeIo((_m, url) => {
      if (url.endsWith('/count.json')) return { status: 200, link: undefined, body: JSON.stringify({ num_items: 3, num_items_per_page: 1, num_pages: 3 }) };
      const page = url.endsWith('/passwords.json') ? 1 : Number(/page\/(\d+)\.json$/.exec(url)?.[1]);
      const rel = [`<${page}.json>; rel="self"`];
      if (page > 1) rel.push(`<${page - 1}.json>; rel="prev"`);
      if (page < 3) rel.push(page === 1 ? '<passwords/page/2.json>; rel="next"' : `<${page + 1}.json>; rel="next"`);
      return { status: 200, link: rel.join(', '), body: '[{}]' };
    });
    await ITERATIONS.walk(io, { ...loadScenario('large-pages'), pageSizes: [1] }, 0);
    expect(sent).toEqual(['GET /passwords/count.json', 'GET /passwords.json', 'GET /passwords/page/2.json', 'GET /passwords/page/3.json']);
    expect(failed()).toEqual([]);
  });

  it('an empty list: its one page holds an empty array, and every check passes', async () => {
    const { io, failed, checks } = fakeIo((_m, url) =>
      url.endsWith('/count.json')
        ? { status: 200, link: undefined, body: JSON.stringify({ num_items: 0, num_items_per_page: 1000, num_pages: 1 }) }
        : { status: 200, link: '<passwords.json>; rel="self"', body: '[]' },
    );
    await ITERATIONS.walk(io, loadScenario('large-pages'), 0);
    expect(failed()).toEqual([]);
    expect(checks['page: JSON array no longer than X-Page-Size']).toEqual([true]);
    const longer = fakeIo(() => list);
    checkPage(longer.io, { status: 200, link: '<a>; rel="self"', body: '[1,2,3]' }, 1, 1, 2);
    expect(longer.failed()).toEqual(['page: JSON array no longer than X-Page-Size']);
  });

  it('mixed: PUT and DELETE answered 200 with the record pass, as 204 does (§4 "that return no content")', async () => {
    for (const done of [
      { status: 204, link: undefined, body: '' },
      { status: 200, link: undefined, body: '{"id":7,"name":"x"}' },
    ]) {
      const { io, failed } = fakeIo((m, url) => {
        if (m === 'POST') return created(url.endsWith('/projects.json') ? 5 : 7);
        if (m === 'GET') return url.endsWith('/7.json') ? { status: 200, link: undefined, body: JSON.stringify({ name: 'pmv6-load-t-0' }) } : list;
        return done;
      });
      await ITERATIONS.mixed(io, mixed, 0);
      expect(failed(), String(done.status)).toEqual([]);
    }
    const empty200 = fakeIo((m, url) =>
      m === 'POST' ? created(url.endsWith('/projects.json') ? 5 : 7) : m === 'GET' ? list : { status: 200, link: undefined, body: '' },
    );
    await ITERATIONS.mixed(empty200.io, mixed, 0);
    expect(empty200.failed()).toContain('update password: 204, or 200 with content');
  });

  it('mixed deletes what it created when a check failed: a password created with 200, a show that answered 500', async () => {
    const { io, sent, failed } = fakeIo((m, url) => {
      if (m === 'POST') return url.endsWith('/projects.json') ? created(5) : { status: 200, link: undefined, body: '{"id":7}' };
      if (m === 'GET') return { status: 500, link: undefined, body: '' };
      return { status: 204, link: undefined, body: '' };
    });
    await ITERATIONS.mixed(io, mixed, 0);
    expect(failed()).toContain('create password: 201 with an integer id');
    expect(sent.filter((s) => s.startsWith('DELETE'))).toEqual(['DELETE /passwords/7.json', 'DELETE /projects/5.json']);
  });
});
