#!/usr/bin/env node
// node package/install.mjs DIR: `npm pack` of this checkout (prepack builds dist/) into the empty
// folder DIR, then the tarball installed there, production dependencies only, without the network.
// Prints one JSON line: tarball, its files, size, times, installed packages. Used by
// package/test/package.test.ts and package/build-runner-image.sh.
//
// Decision: the machines that run the tests reach no registry. `npm install --offline <tarball>`
// needs each dependency's registry document, and npm's cache holds the tarballs `npm ci` fetched,
// not those documents. So DIR gets the lock npm itself would write: the tarball, plus the
// repository lock's production entries (package-lock.json marks the rest `dev`), installed by
// `npm ci --offline`. A dependency the tarball declares and the lock lacks fails the install.
// better-sqlite3's install script builds or downloads its native binding (minutes, or a network);
// the install skips scripts and takes the binding `npm ci` built for this checkout's Node.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = resolve(process.argv[2] ?? '');
if (!process.argv[2]) {
  process.stderr.write('usage: node package/install.mjs DIR\n');
  process.exit(2);
}
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'NODE_OPTIONS'));
const npm = (args, cwd) => execFileSync('npm', args, { cwd, env, encoding: 'utf8', maxBuffer: 32 << 20, stdio: ['ignore', 'pipe', 'inherit'] });

mkdirSync(dir, { recursive: true });
let started = Date.now();
const out = npm(['pack', '--json', '--pack-destination', dir], ROOT);
// The prepack script's lines come first on the same stdout.
const { filename, size, files } = JSON.parse(out.slice(out.search(/^\[/m)))[0];
const packMs = Date.now() - started;
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
const spec = `file:${filename}`;
const packages = {
  '': { dependencies: { pmv6: spec } },
  'node_modules/pmv6': {
    version: pkg.version,
    resolved: spec,
    integrity: `sha512-${createHash('sha512')
      .update(readFileSync(join(dir, filename)))
      .digest('base64')}`,
    license: pkg.license,
    dependencies: pkg.dependencies,
    peerDependencies: pkg.peerDependencies,
    peerDependenciesMeta: pkg.peerDependenciesMeta,
    bin: pkg.bin,
    engines: pkg.engines,
  },
};
for (const [path, entry] of Object.entries(lock.packages)) if (path !== '' && !entry.dev) packages[path] = entry;
writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'pmv6-user', private: true, dependencies: { pmv6: spec } }, null, 2)}\n`);
writeFileSync(join(dir, 'package-lock.json'), `${JSON.stringify({ name: 'pmv6-user', lockfileVersion: 3, requires: true, packages }, null, 2)}\n`);
started = Date.now();
npm(['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], dir);
const binding = join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
mkdirSync(join(dir, binding, '..'), { recursive: true });
copyFileSync(join(ROOT, binding), join(dir, binding));
const installMs = Date.now() - started;
const count = npm(['ls', '--all', '--parseable'], dir).split('\n').filter(Boolean).length - 1;
process.stdout.write(`${JSON.stringify({ tarball: join(dir, filename), files: files.map((f) => f.path), size, packMs, installMs, packages: count })}\n`);
