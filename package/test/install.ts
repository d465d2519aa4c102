import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');

interface LockEntry {
  dev?: boolean;
  [key: string]: unknown;
}

function run(cmd: string, args: string[], cwd: string, timeoutMs: number): Promise<string> {
  return new Promise((done, fail) => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'NODE_OPTIONS'));
    execFile(cmd, args, { cwd, env, timeout: timeoutMs, maxBuffer: 32 << 20 }, (err, stdout, stderr) =>
      err ? fail(new Error(`${cmd} ${args.join(' ')} failed: ${String(stderr).slice(-2000) || err.message}`)) : done(stdout),
    );
  });
}

export interface Installed {
  tarball: string;
  /** the tarball's files, relative to the package */
  files: string[];
  size: number;
  packMs: number;
  installMs: number;
  /** packages under node_modules */
  packages: number;
}

/**
 * `npm pack` of the checkout (prepack builds dist/), then the tarball installed into the empty
 * folder `dir` without the network.
 *
 * Decision: the machines that run the tests reach no registry. `npm install --offline <tarball>`
 * needs each dependency's registry document, and npm's cache holds the tarballs `npm ci` fetched,
 * not those documents. So the folder gets the lock npm itself would write: the tarball, plus the
 * repository lock's production entries (package-lock.json marks the rest `dev`), installed by
 * `npm ci --offline`. A dependency the tarball declares and the lock lacks fails the install.
 * better-sqlite3's install script builds or downloads its native binding (minutes, or a network);
 * the install skips scripts and takes the binding `npm ci` built for this checkout's Node.
 */
export async function installFromTarball(dir: string): Promise<Installed> {
  let started = Date.now();
  const out = await run('npm', ['pack', '--json', '--pack-destination', dir], ROOT, 240_000);
  // The prepack script's lines come first on the same stdout.
  const packed = JSON.parse(out.slice(out.search(/^\[/m))) as {
    filename: string;
    size: number;
    files: { path: string }[];
  }[];
  const packMs = Date.now() - started;
  const { filename, size, files } = packed[0]!;
  const tarball = join(dir, filename);
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const spec = `file:${filename}`;
  const packages: Record<string, unknown> = {
    '': { dependencies: { pmv6: spec } },
    'node_modules/pmv6': {
      version: pkg['version'],
      resolved: spec,
      integrity: `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`,
      license: pkg['license'],
      dependencies: pkg['dependencies'],
      peerDependencies: pkg['peerDependencies'],
      peerDependenciesMeta: pkg['peerDependenciesMeta'],
      bin: pkg['bin'],
      engines: pkg['engines'],
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) if (path !== '' && !entry.dev) packages[path] = entry;
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'pmv6-user', private: true, dependencies: { pmv6: spec } }, null, 2)}\n`);
  writeFileSync(join(dir, 'package-lock.json'), `${JSON.stringify({ name: 'pmv6-user', lockfileVersion: 3, requires: true, packages }, null, 2)}\n`);
  started = Date.now();
  await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], dir, 240_000);
  const binding = join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
  mkdirSync(join(dir, binding, '..'), { recursive: true });
  copyFileSync(join(ROOT, binding), join(dir, binding));
  const installMs = Date.now() - started;
  const count = (await run('npm', ['ls', '--all', '--parseable'], dir, 60_000)).split('\n').filter(Boolean).length - 1;
  return { tarball, files: files.map((f) => f.path), size, packMs, installMs, packages: count };
}
