import { state } from './state.js';

export function check(value, sets, tags = {}) {
  let all = true;
  for (const [name, fn] of Object.entries(sets)) {
    let pass;
    try {
      pass = typeof fn === 'function' ? Boolean(fn(value)) : Boolean(fn);
    } catch {
      pass = false;
    }
    state.checks.push({ name, pass, tags });
    all = all && pass;
  }
  return all;
}

export function fail(message) {
  throw new Error(message);
}

export function group(_name, fn) {
  return fn();
}

export function sleep() {}

export default { check, fail, group, sleep };
