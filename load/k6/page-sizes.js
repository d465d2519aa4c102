import { k6Options, preflight, summary, target, walkPasswords } from './lib/pmv6.js';

/** @type {import('./lib/pmv6.js').Scenario} */
const scenario = JSON.parse(open('../scenarios/page-sizes.json'));
const t = target(scenario);

export const options = k6Options(scenario);

export function setup() {
  return preflight(t);
}

export default function () {
  walkPasswords(scenario, t);
}

/** @param {any} data */
export function handleSummary(data) {
  return summary(scenario, data);
}
