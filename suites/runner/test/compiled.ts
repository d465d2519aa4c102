import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compiledCheckout } from '../../../package/checkout-build.mjs';

// Decision (runtime, issue 38): the kill matrix and the lawful variants run from the checkout's
// compiled JavaScript (package/checkout-build.mjs), as bin/pmv6.js runs the CLI: their worker
// processes then start, and import every run's suite files, without tsx's loader hooks (0.93 and
// 0.95 of the CPU on 39 mutants, two runs each, alternating). Through tsx where that tree cannot
// be made.
const ROOT = resolve(import.meta.dirname, '../../..');
const compiled = await compiledCheckout(ROOT);

/** The module at `path` (from the checkout's root, as `x.ts`): compiled where it can be, else the source. */
export function checkoutModule<T>(path: string): Promise<T> {
  const file = compiled ? join(compiled, path.replace(/\.ts$/, '.js')) : join(ROOT, path);
  return import(pathToFileURL(file).href) as Promise<T>;
}
