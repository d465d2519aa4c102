// Start-up (issue 38): what a command imports before it has read its flags. `--help`, `run --list`
// and a refused flag must not load the HTTP client (undici), the schema validator (ajv), the
// fixtures' generator (faker), fast-check, the reference server (fastify, SQLite) or testcontainers:
// each of those is imported where the command uses it (an `await import` after the flags are
// checked). This follows the static imports (not `import type`, not `await import`) from each
// command's module, as Node loads them.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const HEAVY = ['undici', 'ajv', 'ajv-formats', '@faker-js/faker', 'fast-check', 'fastify', 'better-sqlite3', 'hdr-histogram-js', 'testcontainers'];

/** The packages a module loads through its static imports, each with the chain of our modules that reaches it. */
function staticPackages(entry: string): Map<string, string> {
  const from = new Map<string, string | undefined>([[entry, undefined]]);
  const packages = new Map<string, string>();
  const queue = [entry];
  const chain = (file: string) => {
    const out: string[] = [];
    for (let f: string | undefined = file; f; f = from.get(f)) out.unshift(relative(ROOT, f));
    return out.join(' > ');
  };
  while (queue.length > 0) {
    const file = queue.shift()!;
    const source = readFileSync(file, 'utf8').replace(/^\s*\/\/.*$/gm, '');
    for (const m of source.matchAll(/^\s*(?:import|export)\s+(?!type\b)(?:[^'"]*?\bfrom\s*)?['"]([^'"]+)['"]/gm)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec);
        if (existsSync(target) && !from.has(target)) {
          from.set(target, file);
          queue.push(target);
        }
      } else if (!spec.startsWith('node:')) {
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
        if (!packages.has(name)) packages.set(name, chain(file));
      }
    }
  }
  return packages;
}

describe('what a command loads before it reads its flags', () => {
  test.each(['main', 'run', 'cleanup', 'mutants', 'clauses', 'variants', 'clients', 'report'])('bin/cli/%s.ts loads no heavy package statically', (command) => {
    const heavy = [...staticPackages(resolve(ROOT, `bin/cli/${command}.ts`))].filter(([name]) => HEAVY.includes(name));
    expect(heavy.map(([name, via]) => `${name} (through ${via})`)).toEqual([]);
  });

  test('the reading of the imports finds a heavy package where there is one', () => {
    expect([...staticPackages(resolve(ROOT, 'suites/harness/client.ts')).keys()]).toEqual(expect.arrayContaining(['undici', 'ajv']));
  });
});
