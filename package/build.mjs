#!/usr/bin/env node
// npm run build (and prepack): the package's JavaScript in dist/, the same tree as the checkout.
// tsc compiles the runtime sources (tsconfig.build.json: no tests, no benches); this script then
// copies every other file those folders hold that the runtime or a user reads (JSON schemas and
// scenarios, the k6 scripts verbatim), and writes dist/package.json, which the CLI and the
// reference server read for the version and Node for "type": "module".
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
// The folders tsconfig.build.json compiles (package/test/checkout-build.test.ts holds the two alike), also those of the checkout's compiled tree.
import { RUNTIME } from './checkout-build.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
// Decision: the project's own tests and benches, the folders' READMEs, the spec's copy and the
// image build scripts are not part of the tool; TypeScript is compiled, not copied.
const SKIP_DIR = new Set(['test', 'bench', 'node_modules', 'spec', 'container']);
const SKIP_FILE = /\.(ts|md|sh)$|^tsconfig\.json$/;

function copyData(dir, out = []) {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIR.has(entry.name)) copyData(path, out);
    } else if (entry.isFile() && !SKIP_FILE.test(entry.name)) {
      mkdirSync(join(DIST, dir), { recursive: true });
      copyFileSync(join(ROOT, path), join(DIST, path));
      out.push(path);
    }
  }
  return out;
}

const started = Date.now();
rmSync(DIST, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit', cwd: ROOT });
// Plain JavaScript (core/signed-uri.js, load/k6/) is copied over tsc's output: k6 runs it as written.
const copied = RUNTIME.flatMap((d) => copyData(d));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
writeFileSync(join(DIST, 'package.json'), `${JSON.stringify({ name: pkg.name, version: pkg.version, type: 'module', private: true }, null, 2)}\n`);
// Last, over the finished tree: the suite inventory's index (suites/runner/inventory.ts), which
// `run --list`, a run's --only and the kill matrix read instead of importing every suite file.
// Its fingerprint covers every file of dist/, so a later change to one makes it stale, never wrong.
const inventory = pathToFileURL(join(DIST, 'suites', 'runner', 'inventory.js')).href;
const writeIndex = `const m = await import(${JSON.stringify(inventory)}); await m.inventory();
if (!m.readInventory(${JSON.stringify(DIST)})) throw new Error(m.INVENTORY_FILE + ' was not written');`;
execFileSync(process.execPath, ['--input-type=module', '-e', writeIndex], { stdio: 'inherit', cwd: ROOT });
process.stdout.write(`dist/ built in ${((Date.now() - started) / 1000).toFixed(1)} s: ${copied.length} data files copied (${relative(ROOT, DIST)}/)\n`);
