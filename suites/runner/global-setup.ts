import type { TestProject } from 'vitest/node';
import { startEmbeddedTarget } from './embedded.ts';

// `npm test` runs the conformance project against the embedded reference server.
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const embedded = await startEmbeddedTarget();
  project.provide('pmv6', embedded.config);
  return () => embedded.close();
}
