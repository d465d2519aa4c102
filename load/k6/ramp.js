import { scenarioScript } from './lib/pmv6.js';

/** One scenario of load/scenarios/, run by k6 (v0.48 or later) as its file says. */
const script = scenarioScript(JSON.parse(open('../scenarios/ramp.json')));

export const options = script.options;
export const setup = script.setup;
export const teardown = script.teardown;
export const handleSummary = script.handleSummary;
export default script.run;
