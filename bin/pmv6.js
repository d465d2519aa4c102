#!/usr/bin/env node
// Entry of the pmv6 CLI. Decision: in the checkout (bin/cli/main.ts beside this file) it loads the
// TypeScript sources through tsx, as it always did; the installed package ships no TypeScript and
// runs the JavaScript built into dist/ at pack time (package/README.md). A dist/ that `npm pack`
// left in the checkout is never used there.
// Decision: `pmv6 --version` answers here, before any module of the CLI loads (the start-up target
// of package/README.md); the version's one source is package.json beside bin/, in the package and
// the checkout alike. Keep this first: a flag added to the start-up below must not slow it.
import { existsSync, readFileSync } from 'node:fs';

const first = process.argv[2];
if (first === '--version' || first === '-v') {
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
} else {
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
}
