import { k6Options, mixedRound, preflight, summary, target } from './lib/pmv6.js';

/** @type {import('./lib/pmv6.js').Scenario} */
const scenario = JSON.parse(open('../scenarios/mixed.json'));
const t = target(scenario);

export const options = k6Options(scenario);

export function setup() {
  return preflight(t);
}

/** @param {{ runTag: string }} data */
export default function (data) {
  mixedRound(t, data.runTag);
}

/** @param {any} data */
export function handleSummary(data) {
  return summary(scenario, data);
}
