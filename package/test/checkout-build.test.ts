// The checkout's compiled tree (package/checkout-build.mjs): what bin/pmv6.js runs in the checkout
// instead of going through tsx. A tree made of a small fake checkout: imports rewritten as tsc's
// rewriteRelativeImportExtensions would, data linked, and a change to a source compiled again.
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { compiledCheckout, RUNTIME, rewriteImports } from '../checkout-build.mjs';

const ROOT = resolve(import.meta.dirname, '../..');
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

describe('rewriteImports', () => {
  test('relative .ts specifiers of imports, re-exports and import() become .js; other strings stay', () => {
    const js = [
      'import { a } from "./a.ts";',
      "import b from '../x/b.ts';",
      'export { c } from "./c.ts";',
      'import "./side.ts";',
      'const d = await import("../../d.ts");',
      'import e from "pkg/e.ts";',
      'const f = new URL("./field-child.ts", import.meta.url);',
      'const g = "suites/version/version.test.ts";',
    ].join('\n');
    expect(rewriteImports(js).split('\n')).toEqual([
      'import { a } from "./a.js";',
      "import b from '../x/b.js';",
      'export { c } from "./c.js";',
      'import "./side.js";',
      'const d = await import("../../d.js");',
      'import e from "pkg/e.ts";',
      'const f = new URL("./field-child.ts", import.meta.url);',
      'const g = "suites/version/version.test.ts";',
    ]);
  });
});

describe('RUNTIME', () => {
  test('names the folders tsconfig.build.json compiles into dist/: the checkout runs what the package ships', () => {
    const text = readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8').replace(/^\s*\/\/.*$/gm, '');
    const include: string[] = JSON.parse(text).include;
    expect(include.map((glob) => glob.replace(/\/\*\*\/\*$/, '')).sort()).toEqual([...RUNTIME].sort());
  });
});

describe('compiledCheckout', () => {
  test('compiles every TypeScript source to JavaScript beside links to the data, and compiles again what changed', async () => {
    const root = mkdtempSync(join(tmpdir(), 'pmv6-checkout-build-'));
    made.push(root);
    for (const dir of RUNTIME) mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'fake', version: '9.9.9', type: 'module' }));
    writeFileSync(join(root, 'tsconfig.json'), readFileSync(join(ROOT, 'tsconfig.json')));
    writeFileSync(join(root, 'core/a.ts'), "import { b } from './b.ts';\nexport const a = (x: number): number => b + x;\n");
    writeFileSync(join(root, 'core/b.ts'), 'export const b: number = 2;\n');
    writeFileSync(join(root, 'core/data.json'), '{"x":1}');
    mkdirSync(join(root, 'core/test'));
    writeFileSync(join(root, 'core/test/a.test.ts'), 'export {};\n');

    const out = await compiledCheckout(root);
    expect(out).toBeDefined();
    const load = async (n: number) => (await import(`${pathToFileURL(join(out!, 'core/a.js')).href}?n=${n}`)) as { a: (x: number) => number };
    expect((await load(1)).a(1)).toBe(3);
    expect(lstatSync(join(out!, 'core/data.json')).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(join(out!, 'package.json'), 'utf8'))).toMatchObject({ version: '9.9.9', type: 'module' });
    expect(() => statSync(join(out!, 'core/test/a.test.js'))).toThrow();

    // Up to date: nothing is written again.
    const written = statSync(join(out!, 'core/b.js')).mtimeMs;
    expect(await compiledCheckout(root)).toBe(out);
    expect(statSync(join(out!, 'core/b.js')).mtimeMs).toBe(written);

    // A change (a new time and size) is compiled again; a source removed loses its JavaScript.
    writeFileSync(join(root, 'core/b.ts'), 'export const b: number = 40;\n');
    utimesSync(join(root, 'core/b.ts'), new Date(), new Date(Date.now() + 5_000));
    await compiledCheckout(root);
    expect(readFileSync(join(out!, 'core/b.js'), 'utf8')).toContain('40');
    rmSync(join(root, 'core/data.json'));
    await compiledCheckout(root);
    expect(() => lstatSync(join(out!, 'core/data.json'))).toThrow();
  });
});
