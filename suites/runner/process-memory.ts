import { readdirSync, readFileSync } from 'node:fs';

// The memory of a process tree on Linux, from /proc: the CLI, any worker it forks and any
// helper (tsx's esbuild service). Decision: the tree's peak is the sum of each process's own peak
// (VmHWM), an upper bound of the tree's peak that a sampling interval cannot miss.

export interface ProcessPeak {
  command: string;
  /** Peak resident set size (VmHWM), bytes. */
  peak: number;
}

export interface TreeMemory {
  /** Sum of the peaks of every process seen in the tree, bytes. */
  peak: number;
  processes: Map<number, ProcessPeak>;
}

function statusOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return '';
  }
}

/** `root` and every process below it, from the parent pids in /proc. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = Number(/^PPid:\s+(\d+)/m.exec(statusOf(Number(entry)))?.[1] ?? 0);
    if (parent > 0) children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const tree: number[] = [];
  for (const pending = [root]; pending.length > 0; ) {
    const pid = pending.pop()!;
    tree.push(pid);
    pending.push(...(children.get(pid) ?? []));
  }
  return tree;
}

function commandOf(pid: number, status: string): string {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const cli = argv.findIndex((a) => a.endsWith('pmv6.js'));
    if (cli >= 0) return `pmv6 ${argv[cli + 1] ?? ''}`.trim();
    return argv[0]?.split('/').pop() ?? '?';
  } catch {
    return /^Name:\s+(\S+)/m.exec(status)?.[1] ?? '?';
  }
}

/**
 * Samples the peak RSS of every process of the tree below `root` every `everyMs` (looking for new
 * processes every fifth time) until stopped.
 */
export function watchTreeMemory(root: number, everyMs = 100): { stop(): TreeMemory } {
  const processes = new Map<number, ProcessPeak>();
  let tree = [root];
  let samples = 0;
  const sample = () => {
    if (samples++ % 5 === 0) tree = processTree(root);
    for (const pid of tree) {
      const status = statusOf(pid);
      const peak = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
      if (peak === 0) continue;
      const known = processes.get(pid);
      if (known) known.peak = Math.max(known.peak, peak);
      else processes.set(pid, { command: commandOf(pid, status), peak });
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return { peak: [...processes.values()].reduce((sum, p) => sum + p.peak, 0), processes };
    },
  };
}

export const megabytes = (bytes: number): string => `${Math.round(bytes / 2 ** 20)} MB`;

/** "212 MB (pmv6 run 195 MB, esbuild 17 MB)" */
export function treeMemoryText(memory: TreeMemory): string {
  return `${megabytes(memory.peak)} (${[...memory.processes.values()].map((p) => `${p.command} ${megabytes(p.peak)}`).join(', ')})`;
}
