import { spawn } from 'node:child_process';
import { expect, test } from 'vitest';
import { watchTreeMemory } from '../process-memory.ts';

// A child that starts a grandchild and waits for it; the grandchild touches 96 MB and holds it for 1.5 s.
const GRANDCHILD = 'const b = Buffer.alloc(96 * 2 ** 20, 1); setTimeout(() => b.length, 1500);';
const CHILD = `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(GRANDCHILD)}], { stdio: 'inherit' });`;

test.runIf(process.platform === 'linux')('the memory of a process tree counts every process below the root, grandchildren included', async () => {
  const child = spawn(process.execPath, ['-e', CHILD], { stdio: 'ignore' });
  const memory = watchTreeMemory(child.pid!, 50);
  await new Promise((resolve) => child.on('close', resolve));
  const tree = memory.stop();
  const peaks = [...tree.processes.values()].map((p) => p.peak);
  expect(tree.processes.size, JSON.stringify([...tree.processes.values()])).toBe(2);
  expect(Math.max(...peaks)).toBeGreaterThan(96 * 2 ** 20);
  expect(tree.peak).toBe(peaks.reduce((a, b) => a + b, 0));
});
