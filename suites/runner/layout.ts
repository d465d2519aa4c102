import { fileURLToPath } from 'node:url';

/** The checkout (or installed package) root: where the runner finds the suite files. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

// Decision: the installed package runs the JavaScript built into dist/ (package/README.md), where
// every module has its source's name with .js. Suite files keep their source names
// (suites/version/version.test.ts) in selections, reports and results, so a run of the package
// and a run of the checkout are named alike; only loading a file or starting a worker uses the
// built name.
/** Whether this is the built package (dist/*.js) rather than the TypeScript checkout. */
export const BUILT = import.meta.url.endsWith('.js');
/** A module's name on disk: `x.ts` in the checkout, `x.js` in the built package. */
export const onDisk = (file: string): string => (BUILT ? file.replace(/\.ts$/, '.js') : file);
/** The source name of a file found on disk. */
export const sourceName = (file: string): string => (BUILT ? file.replace(/\.js$/, '.ts') : file);
/** Node's options for a child process that runs one of our modules (tsx in the checkout only). */
export const CHILD_EXEC_ARGV: readonly string[] = BUILT ? [] : ['--import', 'tsx'];

// Which files are conformance suites: everything under suites/<area>/, never the harness,
// the catalogue, the runner or a folder's test/ (those hold the project's own tests).
export const CONFORMANCE_INCLUDE = ['suites/*/**/*.test.ts'];
export const CONFORMANCE_EXCLUDE = ['suites/harness/**', 'suites/catalogue/**', 'suites/runner/**', 'suites/*/test/**', '**/node_modules/**'];
