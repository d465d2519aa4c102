#!/usr/bin/env node
// Entry of the pmv6 CLI. Decision: in the checkout (bin/cli/main.ts beside this file) it loads the
// TypeScript sources through tsx, as it always did; the installed package ships no TypeScript and
// runs the JavaScript built into dist/ at pack time (package/README.md). A dist/ that `npm pack`
// left in the checkout is never used there.
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

// Decision: `pmv6 run` is V8's memory-favouring mode (its heap grows at most twice its live size
// between full collections, not up to four times): replies of 1 MB (a hostile target's) die young
// but wait for the next full collection, and a run stays under 300 MB (issue 24). Side by side
// (npm run bench:memory): peaks of 160-177 MB against 230-330 MB, also under the narrower
// --heap-growing-percent, for a plain run's time within the machine's noise.
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
