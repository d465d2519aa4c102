// The suite inventory's index (suites/runner/inventory.ts): stale as soon as any file of its tree
// differs, equal to what importing the suite files collects, and a file passed over from it
// declares what the imported file declares. What users see: `run --list` and a run's tests with
// --only read from the index alike, and a run of the checkout's compiled tree reports the same
// tests, outcomes and notes as one through tsx that imports every file.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { compiledCheckout } from '../../../package/checkout-build.mjs';
import { type RunConfig, setRunConfig } from '../../harness/config.ts';
import { collect, fingerprint, INVENTORY_FILE, type Inventory, leavesOut, passedOver, readInventory, writeInventory } from '../inventory.ts';
import { loadSuiteFile } from '../suite-runner.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
const temporary = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pmv6-inventory-'));
  made.push(dir);
  return dir;
};

const plain = (inventory: Inventory) => Object.fromEntries(inventory);

describe('the index of a built tree', () => {
  test('is read while every file of the tree is as it was written, and stale after any change, addition or removal', () => {
    const root = temporary();
    const outside = temporary();
    mkdirSync(join(root, 'suites/version'), { recursive: true });
    mkdirSync(join(root, 'core'));
    writeFileSync(join(root, 'suites/version/version.test.js'), 'export const a = 1;\n');
    writeFileSync(join(root, 'core/catalogue.js'), 'export const level = "MUST";\n');
    writeFileSync(join(outside, 'schema.json'), '{"a":1}');
    symlinkSync(join(outside, 'schema.json'), join(root, 'core/schema.json'));
    const inventory: Inventory = new Map([
      ['suites/version/version.test.ts', [{ file: 'suites/version/version.test.ts', ids: ['VER-01'], level: 'MUST', behaviour: 'b', runs: true }]],
    ]);
    writeInventory(root, inventory);
    expect(readInventory(root)).toEqual(inventory);

    const edited = (change: () => void, undo: () => void) => {
      change();
      expect(readInventory(root)).toBeUndefined();
      undo();
      expect(readInventory(root)).toEqual(inventory);
    };
    // Same size, same time of day: the content is what counts (npm gives installed files its own times).
    edited(
      () => writeFileSync(join(root, 'core/catalogue.js'), 'export const level = "INFO";\n'),
      () => writeFileSync(join(root, 'core/catalogue.js'), 'export const level = "MUST";\n'),
    );
    edited(
      () => writeFileSync(join(root, 'suites/version/new.test.js'), ''),
      () => unlinkSync(join(root, 'suites/version/new.test.js')),
    );
    edited(
      () => unlinkSync(join(root, 'suites/version/version.test.js')),
      () => writeFileSync(join(root, 'suites/version/version.test.js'), 'export const a = 1;\n'),
    );
    // A linked data file is read through its link.
    edited(
      () => writeFileSync(join(outside, 'schema.json'), '{"a":2}'),
      () => writeFileSync(join(outside, 'schema.json'), '{"a":1}'),
    );
    // What is not part of the tree: the compiled tree's manifest and lock, a file being written.
    writeFileSync(join(root, 'manifest.json'), '{}');
    mkdirSync(join(root, '.lock'));
    writeFileSync(join(root, 'suites/inventory.json.123.tmp'), 'x');
    expect(readInventory(root)).toEqual(inventory);
    const before = fingerprint(root);
    writeFileSync(join(root, INVENTORY_FILE), 'not json');
    expect(readInventory(root)).toBeUndefined();
    expect(fingerprint(root)).toBe(before);
  });

  test("the checkout's compiled tree: its index holds what importing the TypeScript suites collects, and is written when missing", async () => {
    const compiled = await compiledCheckout(ROOT);
    expect(compiled, 'the checkout could not be compiled (package/checkout-build.mjs)').toBeDefined();
    const built = (await import(pathToFileURL(join(compiled!, 'suites/runner/inventory.js')).href)) as typeof import('../inventory.ts');
    const sources = plain(await collect());
    expect(Object.keys(sources).length).toBeGreaterThan(40);
    // Whatever the tree held (an index from an earlier command, or none): read or collected, then current.
    expect(plain(await built.inventory())).toEqual(sources);
    expect(plain(built.readInventory(compiled!)!)).toEqual(sources);
    // Collected again by importing the built suite files, with no index: the same.
    rmSync(join(compiled!, INVENTORY_FILE), { force: true });
    expect(built.readInventory(compiled!)).toBeUndefined();
    expect(plain(await built.inventory())).toEqual(sources);
    expect(built.readInventory(compiled!)).toBeDefined();
  }, 120_000);
});

describe('a file passed over from the inventory', () => {
  const base: RunConfig = { target: 'http://127.0.0.1:9', user: 'u', password: 'p', runId: 'inventory', seed: 1, readOnly: false, timeoutMs: 1000 };
  const control = { url: 'http://127.0.0.1:9/__control', token: 't' };
  test.each([
    ['--only VER,AUTH, no control protocol, HMAC only', { ...base, selection: { only: ['VER', 'AUTH'] }, signIn: 'hmac' as const }],
    ['--skip PAG,GEN,ERR', { ...base, control, selection: { skip: ['PAG', 'GEN', 'ERR'] } }],
  ])(
    'declares what the imported file declares, and is passed over only when none of its tests would run (%s)',
    async (_, config) => {
      const inventory = await collect();
      expect(leavesOut(config)).toBe(true);
      let over = 0;
      setRunConfig(config);
      try {
        for (const file of inventory.keys()) {
          const imported = await loadSuiteFile(file);
          const fromIndex = passedOver(file, inventory, config);
          if (imported.tests.some((t) => t.body !== undefined)) expect(fromIndex, file).toBeUndefined();
          else {
            over++;
            expect(fromIndex, file).toEqual({ tests: imported.tests, beforeAll: [], afterAll: [] });
          }
        }
      } finally {
        setRunConfig(undefined);
      }
      expect(over).toBeGreaterThan(3);
    },
    120_000,
  );

  test('a run that leaves nothing out reads no inventory', () => {
    expect(leavesOut({ ...base, control })).toBe(false);
    expect(leavesOut({ ...base, control, selection: { only: [], skip: [] } })).toBe(false);
  });
});

describe('pmv6 run from the compiled tree and its index, against tsx importing every file', () => {
  const pmv6 = (args: string[], env: Record<string, string> = {}) => {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/pmv6.js'), ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    return r.stdout;
  };

  test('--list --only, and an embedded run --only VER: the same tests, outcomes and notes', () => {
    const list = ['run', '--list', '--only', 'VER,SIZE', '--skip', 'SIZE-03'];
    expect(pmv6(list)).toBe(pmv6(list, { PMV6_TSX: '1' }));
    const tests = (env: Record<string, string>) => {
      const dir = temporary();
      pmv6(['run', '--only', 'VER', '--quiet', '--report-dir', dir], env);
      const doc = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as {
        clauses: { id: string; outcome: string; tests: { title: string; file: string; outcome: string; note?: string }[] }[];
      };
      return doc.clauses.map((c) => [c.id, c.outcome, c.tests.map((t) => [t.title, t.file, t.outcome, t.note])]);
    };
    const compiled = tests({});
    expect(compiled.filter(([, outcome]) => outcome === 'disabled').length).toBeGreaterThan(100);
    expect(compiled).toEqual(tests({ PMV6_TSX: '1' }));
  }, 240_000);
});
