import type { TestProject } from 'vitest/node';
import { startEmbeddedTarget } from '../../targets/embedded.ts';
import { isDepth } from '../harness/config.ts';

// `npm test` runs the conformance project against the embedded reference server, with the
// property tests at PMV6_DEPTH (quick, standard or deep; .ci/run sets deep).
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const depth = process.env['PMV6_DEPTH'];
  const embedded = await startEmbeddedTarget(depth !== undefined && isDepth(depth) ? { depth } : {});
  project.provide('pmv6', embedded.config);
  return () => embedded.close();
}
