// What the lazy-loading fake suites did, in order: when each was imported and when its test ran.
const key = Symbol.for('pmv6.lazy-loading.timeline');
const g = globalThis as unknown as Record<symbol, string[]>;

export function timeline(): string[] {
  g[key] ??= [];
  return g[key];
}
