// The checkout's compiled JavaScript (issue 38): bin/pmv6.js runs the TypeScript sources of the
// checkout as JavaScript compiled here, kept in node_modules/.cache/pmv6/ and brought up to date at
// each start, instead of compiling them through tsx's loader hooks in every process (a worker
// thread of its own, a message round trip per module: half of a run's 3.2-3.6 s start-up, and
// 35 MB of its peak memory). The tree is dist/'s (package/build.mjs): the runtime folders, each
// `x.ts` as `x.js` with its imports of `./y.ts` rewritten to `./y.js`, every other file of those
// folders linked, and a package.json with the version and `"type": "module"`; so everything that
// tells the package from the checkout (suites/runner/layout.ts BUILT, onDisk) holds here too.
//
// Decision: up to date means the same modification time and size of every source as when its
// JavaScript was written (a manifest); a change compiles only the files that changed, with esbuild
// (a devDependency, as tsx's own compiler) under the checkout's tsconfig.json, and deletes what
// lost its source. Processes that start together (the CLI tests) compile once: the first takes a
// lock folder, the others wait for it. Whatever fails here (no esbuild, a read-only checkout)
// returns undefined and bin/pmv6.js falls back to tsx, as does PMV6_TSX=1 (stack traces then name
// the TypeScript lines).
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The folders the runtime loads from; package/build.mjs builds the same ones into dist/. */
export const RUNTIME = ['core', 'targets', 'bin/cli', 'clients', 'suites', 'fixtures', 'reporters', 'load'];
/** Never part of what a command runs: the project's own tests and benches. */
const SKIP_DIR = new Set(['test', 'bench', 'node_modules']);
const LOCK_WAIT_MS = 60_000;
const LOCK_STALE_MS = 60_000;

/** Where the compiled tree of the checkout at `root` is kept. */
export function compiledDir(root) {
  return join(root, 'node_modules', '.cache', 'pmv6', createHash('sha256').update(root).digest('hex').slice(0, 16));
}

/** The compiled tree of the checkout at `root` (made up to date), or undefined where it cannot be. */
export async function compiledCheckout(root) {
  try {
    // One tree per checkout: a folder that links another's node_modules (bench:memory's ref:) gets its own.
    const out = compiledDir(root);
    if (upToDate(root, out)) return out;
    mkdirSync(out, { recursive: true });
    const lock = join(out, '.lock');
    if (!(await acquire(lock))) return undefined;
    try {
      await update(root, out);
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
    return out;
  } catch (e) {
    if (process.env.PMV6_DEBUG) process.stderr.write(`pmv6: the checkout's compiled tree is not usable (${e?.message ?? e}); running through tsx\n`);
    return undefined;
  }
}

/** Every runtime file of the checkout: its path relative to the root, and its identity (mtime, size). */
function sources(root) {
  const files = new Map();
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIP_DIR.has(entry.name)) walk(path);
      } else if (entry.isFile()) {
        const st = statSync(join(root, path));
        files.set(path, `${st.mtimeMs}:${st.size}`);
      }
    }
  };
  for (const dir of RUNTIME) walk(dir);
  const pkg = statSync(join(root, 'package.json'));
  files.set('package.json', `${pkg.mtimeMs}:${pkg.size}`);
  const tsconfig = statSync(join(root, 'tsconfig.json'));
  files.set('tsconfig.json', `${tsconfig.mtimeMs}:${tsconfig.size}`);
  return files;
}

function readManifest(out) {
  try {
    return new Map(Object.entries(JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'))));
  } catch {
    return new Map();
  }
}

function upToDate(root, out) {
  const now = sources(root);
  const was = readManifest(out);
  if (now.size !== was.size) return false;
  for (const [path, id] of now) if (was.get(path) !== id) return false;
  return true;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function acquire(lock) {
  const until = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      return true;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    try {
      // A lock left by a process that died while compiling.
      if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
    } catch {}
    if (Date.now() > until) return false;
    await sleep(50);
  }
}

/** Atomic: a process that starts meanwhile reads the old file or the new, never half of one. */
function put(path, content) {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, content);
  renameSync(temporary, path);
}

const builtName = (path) => (path.endsWith('.ts') ? `${path.slice(0, -3)}.js` : path);

/** `./x.ts` and `../y/z.ts` in import and export statements and in import(): `.js`, as tsc's rewriteRelativeImportExtensions. */
export function rewriteImports(js) {
  return js.replace(/((?:\bfrom|\bimport)\s*\(?\s*)(["'])(\.\.?\/[^"'\n]*?)\.ts\2/g, '$1$2$3.js$2');
}

async function update(root, out) {
  // Another process may have finished while this one waited for the lock.
  const now = sources(root);
  const was = readManifest(out);
  const changed = [...now].filter(([path, id]) => was.get(path) !== id).map(([path]) => path);
  for (const path of was.keys()) {
    if (now.has(path)) continue;
    rmSync(join(out, builtName(path)), { force: true });
  }
  // A changed tsconfig.json may change every file's JavaScript.
  const compile = changed.includes('tsconfig.json') ? [...now.keys()].filter((p) => p.endsWith('.ts')) : changed.filter((p) => p.endsWith('.ts'));
  if (compile.length > 0) {
    const { transform, stop } = await import('esbuild');
    const tsconfigRaw = readFileSync(join(root, 'tsconfig.json'), 'utf8');
    let compiled;
    try {
      compiled = await Promise.all(
        compile.map(async (path) => {
          const source = readFileSync(join(root, path), 'utf8');
          const { code } = await transform(source, { loader: 'ts', format: 'esm', target: 'node20', sourcefile: path, tsconfigRaw });
          return [path, rewriteImports(code)];
        }),
      );
    } finally {
      // esbuild's service is a process of its own: not kept for the rest of the command.
      await stop();
    }
    for (const [path, code] of compiled) put(join(out, builtName(path)), code);
  }
  for (const path of changed) {
    if (path.endsWith('.ts') || path === 'tsconfig.json') continue;
    if (path === 'package.json') {
      const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
      put(join(out, 'package.json'), `${JSON.stringify({ name: pkg.name, version: pkg.version, type: 'module', private: true }, null, 2)}\n`);
      continue;
    }
    // Data (schemas, scenarios, k6 scripts, core/signed-uri.js): a link to the checkout's file.
    const target = join(out, path);
    mkdirSync(dirname(target), { recursive: true });
    if (lstatSync(target, { throwIfNoEntry: false })) unlinkSync(target);
    // Absolute: node_modules may itself be a link (bench:memory's exported trees link this one's).
    symlinkSync(join(root, path), target);
  }
  if (!existsSync(join(out, 'package.json'))) throw new Error('no package.json in the compiled tree');
  put(join(out, 'manifest.json'), JSON.stringify(Object.fromEntries(now)));
}
