// The test inventory: the tests the suites declare, as the runner collects them. Collecting
// imports every suite file (no hook and no test body runs, so nothing is sent) and reads every
// test's clause IDs and level from the meta clauseTest gives it. `pmv6 run --list`, the
// self-checks and the kill matrix read it, and a run reads it to pass over the files none of
// whose tests it would run (--only, --skip, no control protocol) instead of importing them.
//
// Decision (issue 38: the suites loaded as the run needs them): a built tree (the package's
// dist/, the checkout's compiled tree of package/checkout-build.mjs) keeps what it collected in
// an index, INVENTORY_FILE, with a fingerprint of the content of every file of the tree (a suite
// file's declarations may depend on any module it imports, the catalogue's levels included). The
// index is used only while that fingerprint is the tree's: a file changed, added or removed
// makes it stale, and the inventory is collected again by importing, then written anew (best
// effort: a tree that cannot be written is collected each time, as before). package/build.mjs
// writes dist/'s when the package is built; the checkout's tree gets its own the first time a
// command collects (a compile does not pay for a collection that `serve` or `load` never needs).
// The TypeScript checkout (tsx, vitest) keeps no index and always collects.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLAUSES, clauseById, type Level } from '../catalogue/clauses.ts';
import { type RunConfig, setRunConfig } from '../harness/config.ts';
import { leftOut, testTitle } from '../harness/declare.ts';
import type { SuiteDeclarations } from '../harness/suite-api.ts';
import { BUILT, CONFORMANCE_EXCLUDE, CONFORMANCE_INCLUDE, PACKAGE_ROOT } from './layout.ts';
import { errorText, loadSuiteFile, suiteFiles } from './suite-runner.ts';

export interface DeclaredTest {
  /** the suite file, relative to the package root: suites/pagination/links.test.ts */
  file: string;
  ids: string[];
  level: Level;
  /** the test's title: the behaviour it checks */
  behaviour: string;
  /** whether it would run (false for a test declared as skipped) */
  runs: boolean;
}

/** Each conformance file (in path order) and its tests in the order declared. */
export type Inventory = Map<string, DeclaredTest[]>;

/** The index of a built tree, relative to its root. */
export const INVENTORY_FILE = 'suites/inventory.json';
const FORMAT = 1;

const COLLECT_CONFIG: RunConfig = {
  target: 'http://127.0.0.1:9',
  user: 'collect',
  password: 'collect',
  // With a control protocol, so that no test is left out for the lack of one.
  control: { url: 'http://127.0.0.1:9/__control', token: 'collect' },
  runId: 'list',
  seed: 0,
  readOnly: false,
  timeoutMs: 1,
};

/** Every test the conformance suites declare, in the order of the files and of their declarations. */
export async function declaredTests(): Promise<DeclaredTest[]> {
  return [...(await inventory()).values()].flat();
}

/** The inventory: the built tree's index while it is current, else collected (and the index written). */
export async function inventory(): Promise<Inventory> {
  if (!BUILT) return collect();
  const stored = readInventory(PACKAGE_ROOT);
  if (stored) return stored;
  const collected = await collect();
  try {
    writeInventory(PACKAGE_ROOT, collected);
  } catch {
    // A tree pmv6 may not write (an installed package owned by another user): collected each time.
  }
  return collected;
}

/** Imports every conformance file, nothing run, and reads what it declared. */
export async function collect(): Promise<Inventory> {
  const out: Inventory = new Map();
  setRunConfig(COLLECT_CONFIG);
  try {
    for (const file of suiteFiles(CONFORMANCE_INCLUDE, CONFORMANCE_EXCLUDE)) {
      let declared: SuiteDeclarations;
      try {
        declared = await loadSuiteFile(file);
      } catch (e) {
        throw new Error(`collecting ${file} failed: ${errorText(e)}`);
      }
      out.set(
        file,
        declared.tests.map((test) => ({ file, ids: test.meta.clauses, level: test.meta.level, behaviour: test.meta.behaviour, runs: test.body !== undefined })),
      );
    }
    return out;
  } finally {
    setRunConfig(undefined);
  }
}

/**
 * Whether a run with this configuration leaves any test out (--only, --skip, no control
 * protocol, HMAC only): if no clause is left out on its own, no test of any clauses is.
 */
export function leavesOut(config: RunConfig): boolean {
  return CLAUSES.some((c) => !c.retired && leftOut([c], config) !== undefined);
}

/**
 * What a file would declare in a run with this configuration when the run leaves every one of
 * its tests out (each declared without a body, with the outcome and note clauseTest gives it),
 * read from the inventory instead of importing the file; undefined when a test of it would run
 * or the inventory does not know the file (then the file is imported).
 */
export function passedOver(file: string, known: Inventory | undefined, config: RunConfig): SuiteDeclarations | undefined {
  const tests = known?.get(file);
  if (tests === undefined) return undefined;
  const cases: SuiteDeclarations['tests'] = [];
  for (const t of tests) {
    const clauses = t.ids.map((id) => clauseById(id));
    if (!t.runs || clauses.some((c) => c === undefined || c.retired)) return undefined;
    const reason = leftOut(clauses as NonNullable<(typeof clauses)[number]>[], config);
    if (reason === undefined) return undefined;
    cases.push({ title: testTitle(t.ids, t.level, t.behaviour), meta: { clauses: [...t.ids], level: t.level, behaviour: t.behaviour, ...reason } });
  }
  return { tests: cases, beforeAll: [], afterAll: [] };
}

/**
 * The fingerprint of a built tree: every file's path and content (the index itself, the
 * compiled tree's manifest and what starts with a dot or ends in .tmp left out), so that any
 * change to any module a suite file may import makes the index stale. Content, not times: an
 * installed package's files carry the times npm gives them, not the build's.
 */
export function fingerprint(root: string): string {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.name.startsWith('.') || entry.name.endsWith('.tmp') || entry.name === 'node_modules' || path === INVENTORY_FILE || path === 'manifest.json')
        continue;
      // The compiled tree links its data files to the checkout's.
      const directory = entry.isDirectory() || (entry.isSymbolicLink() && statSync(join(root, path)).isDirectory());
      if (directory) walk(path);
      else files.push(path);
    }
  };
  walk('');
  const hash = createHash('sha256');
  for (const path of files.sort())
    hash
      .update(`${path}\0`)
      .update(readFileSync(join(root, path)))
      .update('\0');
  return hash.digest('hex');
}

interface StoredInventory {
  format: number;
  fingerprint: string;
  files: Record<string, Omit<DeclaredTest, 'file'>[]>;
}

/** The tree's index, or undefined when it is missing, unreadable or stale. */
export function readInventory(root: string): Inventory | undefined {
  let stored: StoredInventory;
  try {
    stored = JSON.parse(readFileSync(join(root, INVENTORY_FILE), 'utf8')) as StoredInventory;
  } catch {
    return undefined;
  }
  if (stored?.format !== FORMAT || typeof stored.files !== 'object') return undefined;
  try {
    if (stored.fingerprint !== fingerprint(root)) return undefined;
  } catch {
    return undefined;
  }
  return new Map(Object.entries(stored.files).map(([file, tests]) => [file, tests.map((t) => ({ file, ...t }))]));
}

/** Writes the tree's index (atomically: a process that starts meanwhile reads the old one or the new). */
export function writeInventory(root: string, known: Inventory): void {
  const stored: StoredInventory = {
    format: FORMAT,
    fingerprint: fingerprint(root),
    files: Object.fromEntries([...known].map(([file, tests]) => [file, tests.map(({ file: _, ...t }) => t)])),
  };
  const path = join(root, INVENTORY_FILE);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(stored)}\n`);
  renameSync(temporary, path);
}
