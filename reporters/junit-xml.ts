import { attrs, xmlAttr } from './xml-text.ts';

// The frame of every junit.xml pmv6 writes (reporters/schema/junit.xsd): the document, its
// testsuites with their counts and properties. What goes into a testcase stays with each reporter.

export interface JunitCounts {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
}

/** A duration in the format's seconds, to the millisecond. */
export const junitSeconds = (ms: number) => (ms / 1000).toFixed(3);

export const noCounts = (): JunitCounts => ({ tests: 0, failures: 0, errors: 0, skipped: 0 });

/** Adds `n` to `totals`. */
export function addCounts(totals: JunitCounts, n: JunitCounts): void {
  for (const k of ['tests', 'failures', 'errors', 'skipped'] as const) totals[k] += n[k];
}

/** One <testsuite> (lines indented as the documents are), its properties first when there are any. */
export function junitSuite(
  head: JunitCounts & { name: string; timeMs: number; timestamp: string; hostname: string; id: number },
  properties: Record<string, string> | undefined,
  cases: readonly string[],
): string[] {
  const { name, tests, failures, errors, skipped, timeMs, timestamp, hostname, id } = head;
  return [
    `  <testsuite${attrs({ name, tests, failures, errors, skipped, time: junitSeconds(timeMs), timestamp, hostname, id })}>`,
    ...(properties
      ? ['    <properties>', ...Object.entries(properties).map(([k, v]) => `      <property name="${xmlAttr(k)}" value="${xmlAttr(v)}"/>`), '    </properties>']
      : []),
    ...cases,
    '  </testsuite>',
  ];
}

/** The whole document: its <testsuites> with the totals, then the suites' lines. */
export function junitDocument(name: string, totals: JunitCounts, timeMs: number, timestamp: string, suites: readonly string[]): string {
  const { tests, failures, errors, skipped } = totals;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attrs({ name, tests, failures, errors, skipped, time: junitSeconds(timeMs), timestamp })}>`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}
