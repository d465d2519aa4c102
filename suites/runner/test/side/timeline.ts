// What the side-by-side fake suites did, in order: shared between their module instances.
const key = Symbol.for('pmv6.side-by-side.timeline');
const g = globalThis as unknown as Record<symbol, string[]>;

export function timeline(): string[] {
  g[key] ??= [];
  return g[key];
}

/** Records the start and end of a test that waits `ms`. */
export async function mark(name: string, ms = 30): Promise<void> {
  timeline().push(`${name} start`);
  await new Promise((resolve) => setTimeout(resolve, ms));
  timeline().push(`${name} end`);
}
