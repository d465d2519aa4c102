#!/usr/bin/env node
// Entry of the pmv6 CLI. Decision: in the checkout (bin/cli/main.ts beside this file) it runs the
// TypeScript sources compiled once into node_modules/.cache/pmv6/ (package/checkout-build.mjs;
// through tsx where that cannot be, or with PMV6_TSX=1); the installed package ships no TypeScript and
// runs the JavaScript built into dist/ at pack time (package/README.md). A dist/ that `npm pack`
// left in the checkout is never used there.
// Decision: `pmv6 --version` answers here, before any module of the CLI loads (the start-up target
// of package/README.md); the version's one source is package.json beside bin/, in the package and
// the checkout alike. Keep this first: a flag added to the start-up below must not slow it.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The commands that run until they are stopped or have cleaned up: where a signal matters. */
const LONG_RUNNING = new Set(['run', 'serve', 'load', 'clients']);

const first = process.argv[2];
if (first === '--version' || first === '-v') {
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
} else {
  // Decision: under npx (npm exec), a signal sent to npx alone (`npx pmv6 serve & kill -TERM $!`)
  // ends npx (SIGTERM: and the shell it started; SIGINT: the shell waits on), never this process,
  // which would be left running, orphaned. So, started by npm exec, pmv6 treats the loss of its
  // parent, or of the npm above the shell that is its parent, as SIGTERM: the command's own
  // handler stops it and cleans up (serve closes, run deletes what it created).
  //
  // Measured with npm 11.19 and Debian's dash (bin/test/npx-signals.test.ts): npm exec runs
  // `sh -c 'pmv6 …'`, and npm passes SIGINT and SIGTERM on to that shell only. dash keeps waiting
  // on a SIGINT (the run goes on to its end) and dies of a SIGTERM, so npx exits at once while pmv6
  // cleans up after it. bash execs a lone command: with `--script-shell=bash`, pmv6 is npx's own
  // child, gets both signals and npx waits for it. Said in one line when a shell stands between.
  if (process.env.npm_command === 'exec') {
    const parent = process.ppid;
    const shell = procField(parent, 'comm');
    const npm = /^(sh|dash|bash|ash|zsh)$/.test(shell) ? procField(parent, 'ppid') : '';
    if (npm && LONG_RUNNING.has(first ?? ''))
      process.stderr.write(
        `pmv6: started by npx through ${shell}, which stays between them: a SIGINT sent to npx alone does not reach pmv6, and on SIGTERM npx exits before pmv6 has cleaned up; start it with npx --script-shell=bash (or npm_config_script_shell=bash) so that npx passes both on and waits\n`,
      );
    const watch = setInterval(() => {
      if (process.ppid === parent && (!npm || procField(parent, 'ppid') === npm)) return;
      clearInterval(watch);
      process.kill(process.pid, 'SIGTERM');
    }, 250).unref();
  }
  const source = new URL('./cli/main.ts', import.meta.url);
  let main;
  if (existsSync(source)) {
    // In the checkout: its JavaScript compiled once and kept up to date (package/checkout-build.mjs);
    // through tsx where that cannot be, or with PMV6_TSX=1.
    const { compiledCheckout } = await import('../package/checkout-build.mjs');
    const compiled = process.env.PMV6_TSX === '1' ? undefined : await compiledCheckout(fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, ''));
    if (compiled) ({ main } = await import(pathToFileURL(`${compiled}/bin/cli/main.js`).href));
    else {
      const { register } = await import('tsx/esm/api');
      register();
      ({ main } = await import(source.href));
    }
  } else {
    ({ main } = await import('../dist/bin/cli/main.js'));
  }
  process.exitCode = await main(process.argv.slice(2));
}

/** A process's command name or parent pid from Linux's /proc; '' elsewhere or when it is gone. */
function procField(pid, field) {
  try {
    if (field === 'comm') return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    return /\) \S+ (\d+)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1] ?? '';
  } catch {
    return '';
  }
}
