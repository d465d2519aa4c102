// bench:load's k6 run: the walk iteration of load/k6/lib/iterations.js (the same code the
// scenarios run) at one page size, for PMV6_VUS virtual users during PMV6_DURATION.
import { scenarioScript } from '../k6/lib/pmv6.js';

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
const script = scenarioScript(scenario);

export const options = script.options;
export const setup = script.setup;
export const handleSummary = script.handleSummary;
export default script.run;
