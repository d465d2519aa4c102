/**
 * The outcomes of a test and of a clause, and how every report shows each one: the only place
 * they are declared. The runner, the verdict and every reporter read this table; the key is the
 * value written to results.json (reporters/schema/results.schema.json lists the same keys, and a
 * test holds the two together). This module imports nothing of the project.
 *
 * The order of the keys is the order the console and summary.md list outcomes in.
 */

/** What an outcome does to the run's verdict. */
export type VerdictEffect =
  /** a violation: the run is NOT CONFORMANT (exit 1) */
  | 'violation'
  /** a violation under --strict when the clause is a SHOULD; otherwise noted only */
  | 'violation-under-strict'
  /** the run could not judge the server: INCONCLUSIVE (exit 3) when nothing was violated */
  | 'inconclusive'
  | 'none';

/**
 * How a testcase of this outcome is written to junit.xml (see reporters/junit.ts):
 * `success` an empty (passed) testcase; `observation` a passed testcase with what was observed in
 * <system-out>; `failure` a <failure>; `failure-under-strict` a <failure> for a SHOULD under
 * --strict, otherwise a passed testcase with the text in <system-out>; `error` an <error>;
 * `skipped` a <skipped> whose message starts with the outcome's label.
 */
export type JunitMapping = 'success' | 'observation' | 'failure' | 'failure-under-strict' | 'error' | 'skipped';

export type ConsoleColour = 'green' | 'red' | 'yellow' | 'cyan' | 'magenta' | 'gray';

export interface OutcomeView {
  /** What the outcome says about the server (or about pmv6), one line. */
  meaning: string;
  /** A clause takes the weightiest outcome of its tests. */
  weight: number;
  verdict: VerdictEffect;
  /** The test reached a judgement of the server: a clause whose dependency did not hold is then unverifiable instead. */
  judged: boolean;
  /** A clause with this outcome holds for the clauses that depend on it (and for --expectations: the deviation is gone). */
  holds: boolean;
  /** Needs a reader's attention: listed with its tests in the console, open in the HTML report. */
  problem: boolean;
  /** The words of summary.md, report.html and the messages of junit.xml. */
  label: string;
  console: {
    /** Column head of the area table, per-file progress counts, heading of a listed problem. */
    word: string;
    /** Its part of the verdict line ("95/117 clauses passed, 0 failed, 22 observed, …"); outcomes with the same tally are added up; none: not in the line. */
    tally?: string;
    /** On a terminal only. */
    colour: ConsoleColour;
  };
  html: { className: string; background: string; ink: string };
  junit: JunitMapping;
}

// Weights, decisions: a shown violation outweighs a harness error in another test of the same
// clause, which outweighs a pass; a clause passes when some of its tests passed and the others
// could not be verified on this target. An INFO clause with some tests passed and some observed
// is `info`; `info` never outranks fail, warn, harness-error or setup-failed.
const TABLE = {
  pass: {
    meaning: 'every check held',
    weight: 3,
    verdict: 'none',
    judged: true,
    holds: true,
    problem: false,
    label: 'pass',
    console: { word: 'ok', tally: 'passed', colour: 'green' },
    html: { className: 'o-pass', background: '#1a7f37', ink: '#fff' },
    junit: 'success',
  },
  fail: {
    meaning: 'a MUST is violated',
    weight: 8,
    verdict: 'violation',
    judged: true,
    holds: false,
    problem: true,
    label: 'fail',
    console: { word: 'FAIL', tally: 'failed', colour: 'red' },
    html: { className: 'o-fail', background: '#cf222e', ink: '#fff' },
    junit: 'failure',
  },
  info: {
    meaning: 'an INFO clause: what the server does was observed and recorded; not a pass, no requirement was checked',
    weight: 4,
    verdict: 'none',
    judged: true,
    holds: true,
    problem: false,
    label: 'observed',
    console: { word: 'observed', tally: 'observed', colour: 'cyan' },
    html: { className: 'o-info', background: '#1f6feb', ink: '#fff' },
    junit: 'observation',
  },
  warn: {
    meaning: 'a SHOULD or INFO expectation is not met',
    weight: 7,
    verdict: 'violation-under-strict',
    judged: true,
    holds: false,
    problem: true,
    label: 'warn',
    console: { word: 'warn', tally: 'warned', colour: 'yellow' },
    html: { className: 'o-warn', background: '#bf8700', ink: '#fff' },
    junit: 'failure-under-strict',
  },
  'skipped-unverifiable': {
    meaning: 'the run cannot check it: no control protocol, no HMAC keys, or a clause it depends on did not hold',
    weight: 2,
    verdict: 'none',
    judged: false,
    holds: false,
    problem: false,
    label: 'unverifiable',
    console: { word: 'unverifiable', tally: 'unverifiable', colour: 'gray' },
    html: { className: 'o-skipped-unverifiable', background: '#afb8c1', ink: '#1f2328' },
    junit: 'skipped',
  },
  disabled: {
    meaning: 'left out by --only / --skip (or by --read-only)',
    weight: 1,
    verdict: 'none',
    judged: false,
    holds: false,
    problem: false,
    label: 'disabled',
    console: { word: 'disabled', tally: 'disabled', colour: 'gray' },
    html: { className: 'o-disabled', background: '#eaeef2', ink: '#59636e' },
    junit: 'skipped',
  },
  'setup-failed': {
    meaning: 'creating the test data failed',
    weight: 5,
    verdict: 'inconclusive',
    judged: false,
    holds: false,
    problem: true,
    label: 'setup failed',
    console: { word: 'SETUP FAILED', tally: 'inconclusive', colour: 'yellow' },
    html: { className: 'o-setup-failed', background: '#bc4c00', ink: '#fff' },
    junit: 'error',
  },
  'harness-error': {
    meaning: 'pmv6 itself failed; never blamed on the server',
    weight: 6,
    verdict: 'inconclusive',
    judged: false,
    holds: false,
    problem: true,
    label: 'harness error',
    console: { word: 'HARNESS ERROR', tally: 'inconclusive', colour: 'magenta' },
    html: { className: 'o-harness-error', background: '#8250df', ink: '#fff' },
    junit: 'error',
  },
  untested: {
    meaning: 'no test of the clause ran (clauses only)',
    weight: 0,
    verdict: 'none',
    judged: false,
    holds: false,
    problem: false,
    label: 'untested',
    console: { word: 'untested', colour: 'gray' },
    html: { className: 'o-untested', background: '#fff', ink: '#59636e' },
    junit: 'skipped',
  },
} as const satisfies Record<string, OutcomeView>;

export type Outcome = keyof typeof TABLE;

export const OUTCOMES: Readonly<Record<Outcome, OutcomeView>> = TABLE;

/** Every outcome, in the table's order. */
export const OUTCOME_ORDER = Object.keys(OUTCOMES) as Outcome[];

export function isOutcome(value: unknown): value is Outcome {
  return typeof value === 'string' && Object.hasOwn(OUTCOMES, value);
}

export function outcomeView(outcome: Outcome): OutcomeView {
  return OUTCOMES[outcome];
}

/** The weightiest of some outcomes; `untested` when there are none. */
export function weightiest(outcomes: Iterable<Outcome>): Outcome {
  let best: Outcome = 'untested';
  for (const o of outcomes) if (OUTCOMES[o].weight > OUTCOMES[best].weight) best = o;
  return best;
}

/** Zero for every outcome. */
export function zeroCounts(): Record<Outcome, number> {
  return Object.fromEntries(OUTCOME_ORDER.map((o) => [o, 0])) as Record<Outcome, number>;
}

/** The outcomes in order of weight, weightiest first (the HTML legend and filter). */
export function byWeight(): Outcome[] {
  return [...OUTCOME_ORDER].sort((a, b) => OUTCOMES[b].weight - OUTCOMES[a].weight);
}
