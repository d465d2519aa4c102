import { fileURLToPath } from 'node:url';

/** The checkout (or installed package) root: where the runner finds the suite files. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

// Which files are conformance suites: everything under suites/<area>/, never the harness,
// the catalogue, the runner or a folder's test/ (those hold the project's own tests).
export const CONFORMANCE_INCLUDE = ['suites/*/**/*.test.ts'];
export const CONFORMANCE_EXCLUDE = ['suites/harness/**', 'suites/catalogue/**', 'suites/runner/**', 'suites/*/test/**', '**/node_modules/**'];
