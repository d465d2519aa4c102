import { iterate, k6Options, preflight, summary, target } from './lib/pmv6.js';

/** @type {import('./lib/iterations.js').Scenario} */
const scenario = JSON.parse(open('../scenarios/large-pages.json'));
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
