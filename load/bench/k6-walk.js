// bench:load's k6 run: the walk iteration of load/k6/lib/iterations.js (the same code the
// scenarios run) at one page size, for PMV6_VUS virtual users during PMV6_DURATION.
import { iterate, k6Options, preflight, summary, target } from '../k6/lib/pmv6.js';

/** @type {import('../k6/lib/iterations.js').Scenario} */
const scenario = {
  name: 'bench',
  description: 'bench:load',
  iteration: 'walk',
  auth: 'basic',
  pageSizes: [Number(__ENV['PMV6_PAGE_SIZE'] || 20)],
  load: { executor: 'constant-vus', vus: 1, duration: '1s' },
  thresholds: {},
};
const t = target(scenario);

export const options = k6Options(scenario);

export function setup() {
  return preflight(t);
}

/** @param {{ runTag: string }} data */
export default async function (data) {
  await iterate(scenario, t, data);
}

/** @param {any} data */
export function handleSummary(data) {
  return summary(scenario, data);
}
