import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface DeclaredTest {
  file: string;
  ids: string[];
  behaviour: string;
}

const SKIP_DIRS = new Set(['harness', 'catalogue', 'runner', 'node_modules']);
const CALL = /(?:clauseTest|oracleTest)\(\s*(\[[^\]]*\]|'[^']*'|"[^"]*")\s*,\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`)/g;
const ID = /['"]([A-Z]+-\d{2})['"]/g;

// The tests the suites declare, read from the source without running it: `pmv6 run --list`
// and the self-checks (every clause has a test, every test cites a known clause) use it.
export function declaredTests(suitesDir: string): DeclaredTest[] {
  const out: DeclaredTest[] = [];
  for (const file of testFiles(suitesDir)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(CALL)) {
      const ids = [...(m[1] ?? '').matchAll(ID)].map((x) => x[1]!);
      out.push({ file: relative(join(suitesDir, '..'), file), ids, behaviour: (m[2] ?? '').slice(1, -1).replace(/\\(.)/g, '$1') });
    }
  }
  return out;
}

// Suites live in area folders below suites/; the harness, catalogue and runner hold the
// project's own tests, not conformance tests.
export function testFiles(suitesDir: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir)
      .sort()
      .flatMap((name) => {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : walk(path);
        return name.endsWith('.test.ts') ? [path] : [];
      });
  return readdirSync(suitesDir)
    .sort()
    .filter((name) => !SKIP_DIRS.has(name) && statSync(join(suitesDir, name)).isDirectory())
    .flatMap((name) => walk(join(suitesDir, name)));
}
