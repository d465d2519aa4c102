// What the side-by-side fake suites did, in order: shared between their module instances.
const key = Symbol.for('pmv6.side-by-side.timeline');
const g = globalThis as unknown as Record<symbol, string[]>;

export function timeline(): string[] {
  g[key] ??= [];
  return g[key];
}

/**
 * Records the start and end of a test that waits `ms`, or, with `until`, waits for that event
 * (at most `ms`): a rendezvous makes "these two overlap" independent of the machine's speed, and
 * a runner that does not run them side by side still ends (the event never comes in time).
 */
export async function mark(name: string, ms = 30, until?: string): Promise<void> {
  timeline().push(`${name} start`);
  const deadline = Date.now() + ms;
  do await new Promise((resolve) => setTimeout(resolve, until ? 5 : ms));
  while (until && !timeline().includes(until) && Date.now() < deadline);
  timeline().push(`${name} end`);
}
