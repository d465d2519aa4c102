import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

// ARCHITECTURE.md is the one statement of the layers: this test reads its numbered list under
// "## Layers" and checks every relative import of the tree against it.

const ROOT = resolve(import.meta.dirname, '../..');
const ARCHITECTURE = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');

interface Layer {
  rank: number;
  folders: string[];
}

function layersOf(markdown: string): Layer[] {
  const section = markdown.split(/^## Layers$/m)[1]?.split(/^## /m)[0] ?? '';
  const layers: Layer[] = [];
  for (const m of section.matchAll(/^(\d+)\. ((?:`[^`]+\/`(?:, )?)+):/gm)) {
    layers.push({ rank: Number(m[1]), folders: [...m[2]!.matchAll(/`([^`]+)`/g)].map((f) => f[1]!) });
  }
  return layers;
}

const LAYERS = layersOf(ARCHITECTURE);

/** The layer of a path: its longest listed folder prefix. */
function layerOf(path: string): { rank: number; folder: string } | undefined {
  let best: { rank: number; folder: string } | undefined;
  for (const l of LAYERS) {
    for (const folder of l.folders) {
      if (path.startsWith(folder) && (!best || folder.length > best.folder.length)) best = { rank: l.rank, folder };
    }
  }
  return best;
}

const isProjectTest = (path: string) => /(^|\/)test\//.test(path) || /\/bench\//.test(path);

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sources(path, out);
    else if (/\.(ts|js|mjs)$/.test(name)) out.push(path);
  }
  return out;
}

interface Import {
  from: string;
  to: string;
}

function relativeImports(): Import[] {
  const found: Import[] = [];
  const tops = LAYERS.flatMap((l) => l.folders.map((f) => f.split('/')[0]!));
  for (const top of new Set(tops)) {
    for (const file of sources(join(ROOT, top))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(
        /(?:^|\n)\s*(?:import|export)\b[^'"]*?(?:from\s*)?['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g,
      )) {
        const spec = m[1] ?? m[2]!;
        found.push({ from: relative(ROOT, file), to: relative(ROOT, resolve(dirname(file), spec)) });
      }
    }
  }
  return found;
}

describe('layers (ARCHITECTURE.md, "## Layers")', () => {
  test('the list names seven layers, each folder once, and every folder exists', () => {
    expect(LAYERS.map((l) => l.rank)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const folders = LAYERS.flatMap((l) => l.folders);
    expect(new Set(folders).size).toBe(folders.length);
    for (const f of folders) expect(statSync(join(ROOT, f)).isDirectory(), f).toBe(true);
  });

  test('every source file outside the project tests belongs to a layer', () => {
    const tops = new Set(LAYERS.flatMap((l) => l.folders.map((f) => f.split('/')[0]!)));
    const unplaced = [...tops]
      .flatMap((t) => sources(join(ROOT, t)))
      .map((f) => relative(ROOT, f))
      .filter((f) => !isProjectTest(f) && !layerOf(f));
    expect(unplaced).toEqual([]);
  });

  test('no import points up a layer', () => {
    const upward = relativeImports()
      .filter((i) => !isProjectTest(i.from))
      .flatMap((i) => {
        const from = layerOf(i.from);
        const to = layerOf(i.to);
        if (!from || !to || to.rank <= from.rank) return [];
        return [`${i.from} (layer ${from.rank}) imports ${i.to} (layer ${to.rank})`];
      });
    expect(upward).toEqual([]);
  });

  test('core/ imports nothing of the project outside core/', () => {
    const out = relativeImports().filter((i) => i.from.startsWith('core/') && !isProjectTest(i.from) && !i.to.startsWith('core/'));
    expect(out).toEqual([]);
  });

  test('the check sees an upward import (a planted one fails it)', () => {
    const from = layerOf('core/redact.ts');
    const to = layerOf('bin/cli/run.ts');
    expect(from && to && to.rank > from.rank).toBe(true);
    expect(layersOf('## Layers\n\n1. `a/`: x\n2. `b/`, `c/`: y\n\n## Next').map((l) => l.folders)).toEqual([['a/'], ['b/', 'c/']]);
  });
});

// ARCHITECTURE.md quotes paths and interfaces; both must still be true of the tree.
describe('ARCHITECTURE.md matches the tree', () => {
  const TOPS = /^(?:core|suites|fixtures|targets|reporters|load|clients|bin|\.ci)\//;

  test('every path it names exists', () => {
    const named = new Set<string>();
    for (const m of ARCHITECTURE.matchAll(/`([^`\s]+)`/g)) {
      const path = m[1]!.replace(/[),.:;]+$/, '');
      if (TOPS.test(path) && !/[*<>{}]/.test(path)) named.add(path);
    }
    for (const m of ARCHITECTURE.matchAll(/^([a-z.][\w./-]*\/[\w./-]*)\s{2,}/gm)) if (TOPS.test(m[1]!) && !/[*<>{}]/.test(m[1]!)) named.add(m[1]!);
    expect(named.size).toBeGreaterThan(20);
    const missing = [...named].filter((p) => {
      try {
        statSync(join(ROOT, p));
        return false;
      } catch {
        return true;
      }
    });
    expect(missing).toEqual([]);
  });

  test("every declaration in its TypeScript blocks exists, with its members, in the file named on the block's first line", () => {
    const problems: string[] = [];
    const blocks = [...ARCHITECTURE.matchAll(/```ts\n([\s\S]*?)```/g)];
    expect(blocks.length).toBeGreaterThan(2);
    for (const block of blocks) {
      const file = /^\/\/ (\S+\.ts)\n/.exec(block[1]!)?.[1];
      if (!file) {
        problems.push(`the ts block at offset ${block.index} does not begin with "// <file>.ts"`);
        continue;
      }
      const source = readFileSync(join(ROOT, file), 'utf8');
      for (const d of block[1]!.matchAll(/export (?:async )?(interface|function|type|class|const) (\w+)/g)) {
        if (!new RegExp(`export (?:async )?${d[1]} ${d[2]}\\b`).test(source)) problems.push(`${file}: no exported ${d[1]} ${d[2]}`);
      }
      for (const i of block[1]!.matchAll(/export interface (\w+)[^{]*\{([\s\S]*?)\n\}/g)) {
        const body = new RegExp(`export interface ${i[1]}\\b[^{]*\\{([\\s\\S]*?)\\n\\}`).exec(source)?.[1] ?? '';
        for (const member of i[2]!.matchAll(/^\s+(\w+)\??[:(]/gm)) {
          if (!new RegExp(`^\\s+(?:readonly )?${member[1]}\\??[:(]`, 'm').test(body)) problems.push(`${file}: interface ${i[1]} has no member ${member[1]}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
