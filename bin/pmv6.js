#!/usr/bin/env node
// Entry of the pmv6 CLI. Decision: in the checkout (bin/cli/main.ts beside this file) it loads the
// TypeScript sources through tsx, as it always did; the installed package ships no TypeScript and
// runs the JavaScript built into dist/ at pack time (package/README.md). A dist/ that `npm pack`
// left in the checkout is never used there.
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

// Decision: a run's heap grows at most twice its live size between full collections, not V8's
// default of up to four times: replies of 1 MB (a hostile target's) die young but wait in the heap
// for its next full collection, and a run stays under 300 MB (issue 24; npm run bench:memory).
if (process.argv[2] === 'run') setFlagsFromString('--optimize-for-size');

const source = new URL('./cli/main.ts', import.meta.url);
let main;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import(source.href));
} else {
  ({ main } = await import('../dist/bin/cli/main.js'));
}
process.exitCode = await main(process.argv.slice(2));
