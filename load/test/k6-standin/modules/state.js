import { receiveMessageOnPort } from 'node:worker_threads';

export const state = {
  /** @type {import('node:worker_threads').MessagePort | undefined} */
  port: undefined,
  /** @type {Int32Array | undefined} */
  signal: undefined,
  /** @type {Array<{ name: string, pass: boolean, tags: Record<string, string> }>} */
  checks: [],
  exec: {
    scenario: { name: '', executor: '', startTime: 0, progress: 0, iterationInInstance: 0, iterationInTest: 0 },
    instance: { iterationsCompleted: 0, iterationsInterrupted: 0, vusActive: 1, vusInitialized: 1, currentTestRunDuration: 0 },
    vu: { idInInstance: 1, idInTest: 1, iterationInInstance: 0, iterationInScenario: 0, tags: {}, metrics: { tags: {}, metadata: {} } },
    test: { options: {}, abort: (/** @type {string} */ m) => { throw new Error(`test.abort: ${m}`); } },
  },
};

/** Sends one request to the parent thread and blocks until it answers. */
export function syncRequest(/** @type {unknown} */ req) {
  if (!state.port || !state.signal) throw new Error('k6 stand-in: no parent port');
  Atomics.store(state.signal, 0, 0);
  state.port.postMessage(req);
  Atomics.wait(state.signal, 0, 0, 60_000);
  for (let i = 0; i < 1000; i++) {
    const got = receiveMessageOnPort(state.port);
    if (got) return got.message;
    Atomics.wait(state.signal, 0, 1, 1);
  }
  throw new Error('k6 stand-in: no answer from the parent thread');
}
