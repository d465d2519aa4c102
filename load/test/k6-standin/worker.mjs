import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { workerData, parentPort } from 'node:worker_threads';
import { state } from './modules/state.js';

const { script, scriptDir, env, iterations, port, signal, scenarioName } = workerData;
state.port = port;
state.signal = new Int32Array(signal);
globalThis.__ENV = env;
globalThis.__VU = 0;
globalThis.__ITER = 0;
globalThis.open = (path, mode) => {
  const data = readFileSync(isAbsolute(path) ? path : resolve(scriptDir, path));
  return mode === 'b' ? data.buffer.slice(data.byteOffset, data.byteOffset + data.length) : data.toString('utf8');
};

const result = { checks: state.checks, files: {}, options: undefined, setupData: undefined, error: undefined };
try {
  const mod = await import(pathToFileURL(script).href);
  result.options = JSON.parse(JSON.stringify(mod.options ?? {}));
  state.exec.scenario.name = scenarioName;
  state.exec.test.options = result.options;
  globalThis.__VU = 0;
  const data = typeof mod.setup === 'function' ? mod.setup() : undefined;
  result.setupData = data;
  globalThis.__VU = 1;
  for (let i = 0; i < iterations; i++) {
    globalThis.__ITER = i;
    state.exec.scenario.iterationInTest = i;
    state.exec.scenario.iterationInInstance = i;
    state.exec.vu.iterationInScenario = i;
    state.exec.vu.iterationInInstance = i;
    mod.default(data);
  }
  if (typeof mod.teardown === 'function') mod.teardown(data);
  if (typeof mod.handleSummary === 'function') result.files = mod.handleSummary({ metrics: {}, root_group: {}, options: result.options, state: {} });
} catch (e) {
  result.error = e instanceof Error ? `${e.message}\n${e.stack}` : String(e);
}
parentPort.postMessage(result);
