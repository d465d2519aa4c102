// Preloaded by bench:startup (`node --import this bin/pmv6.js run`): notes when the embedded
// server receives the run's first request (the control settings read at the run's start) and its
// first request of a suite file (any API request but version.json), prints both in ms since the
// process started on stderr, and ends the process there: what comes after is the run, not its
// start-up; with the CPU time (user and system) the process had used by then, which a busy
// machine inflates less than the wall time. It reads the server side through Node's diagnostics channel, so it measures any
// checkout's pmv6 (another tree given with --trees) without a change to it.
import { subscribe } from 'node:diagnostics_channel';

let first;
subscribe('http.server.request.start', ({ request }) => {
  const at = performance.now();
  first ??= at;
  if (request.url.includes('/__control') || request.url.endsWith('/version.json')) return;
  const { user, system } = process.cpuUsage();
  process.stderr.write(`pmv6-first-request ${first.toFixed(1)} ${at.toFixed(1)} ${((user + system) / 1000).toFixed(1)}\n`);
  process.exit(0);
});
