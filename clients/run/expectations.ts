/**
 * What a client's command must do under each scenario (`pmv6 clients run`), and the judgements
 * that read it from the command's exit, its output and the requests it sent.
 */
import { scrub } from '../../core/redact.ts';
import type { ScenarioName } from '../scenarios.ts';

/**
 * - `succeeds`: exit 0, no crash trace, and every list it read walked to its last page;
 * - `fails-cleanly`: a non-zero exit with the server's message in its output, no crash trace
 *   (an error is not an empty result, nor a stack trace);
 * - `gives-up`: ends before the deadline (its own timeout fired), whatever its exit;
 * - `any`: only the checks of every scenario (no secret printed, no hang, no request loop).
 */
export type Expectation = 'succeeds' | 'fails-cleanly' | 'gives-up' | 'any';
export const EXPECTATIONS: readonly Expectation[] = ['succeeds', 'fails-cleanly', 'gives-up', 'any'];

export const DEFAULT_EXPECTATIONS: Readonly<Record<ScenarioName, Expectation>> = {
  normal: 'succeeds',
  'one-page': 'succeeds',
  'exact-fill': 'succeeds',
  'page-too-high': 'fails-cleanly',
  maintenance: 'fails-cleanly',
  'api-off': 'fails-cleanly',
  unauthorized: 'fails-cleanly',
  'unsupported-media-type': 'fails-cleanly',
  'server-error': 'fails-cleanly',
  slow: 'gives-up',
  'page-size-refused': 'any',
  'proxy-502': 'fails-cleanly',
  'proxy-503': 'fails-cleanly',
  'proxy-504': 'fails-cleanly',
  'error-extra-fields': 'fails-cleanly',
  'connection-closed': 'fails-cleanly',
};

/** How long `slow` holds each reply in a run: past the deadline, so a client with no timeout of its own is still waiting when judged. */
export const slowHoldMs = (deadlineMs: number) => deadlineMs + 5_000;

/** What each expectation asks, in the words of the reports. */
export const EXPECTATION_TEXT: Readonly<Record<Expectation, string>> = {
  succeeds: 'exits 0 with no crash trace, having read every page of each list it read',
  'fails-cleanly': "exits non-zero with a message (the server's, or the status of a page that is not the API's), no crash trace, no hang",
  'gives-up': 'gives up on a held reply by a timeout of its own, and ends',
  any: 'only the checks of every scenario',
};

/** The checks of a scenario, in the order of the report's columns. */
export const CHECKS = {
  exit: 'exit',
  message: 'message',
  crash: 'no crash',
  walk: 'every page',
  hang: 'timeout',
  'max-time': 'ends',
  loop: 'no loop',
  secret: 'no secret',
  clauses: 'clauses',
} as const;
export type CheckId = keyof typeof CHECKS;

/** The scenarios a run goes through when none are named. */
export const DEFAULT_SCENARIOS: readonly ScenarioName[] = [
  'normal',
  'one-page',
  'exact-fill',
  'maintenance',
  'api-off',
  'unauthorized',
  'server-error',
  'proxy-502',
  'proxy-503',
  'proxy-504',
  'error-extra-fields',
  'connection-closed',
  'slow',
];

/**
 * Decision: this many identical requests in one scenario is a request loop. Identical is the
 * whole request: method, URL and body (its digest; for a body the kit answered before reading,
 * its length), so creating many different objects is no loop.
 */
export const LOOP_THRESHOLD = 30;

/**
 * Stack traces of the common runtimes: Python, Node.js, Go, Java/Kotlin, Ruby, .NET, PHP. A client
 * that fails cleanly prints a message, not one of these.
 */
const TRACES: ReadonlyArray<[string, RegExp]> = [
  ['Python traceback', /^Traceback \(most recent call last\):/m],
  ['Node.js stack', /^\s+at (?:.+ \()?(?:file:\/\/|node:|\/|[A-Za-z]:\\).+:\d+:\d+\)?$/m],
  ['Go panic', /^panic: |^goroutine \d+ \[running\]:/m],
  ['Java stack', /^\s+at [\w.$<>]+\([\w$]+\.(?:java|kt):\d+\)$/m],
  ['Ruby backtrace', /^\s*from .+\.rb:\d+:in /m],
  ['.NET stack', /^\s+at [\w.`<>]+\(.*\) in .+:line \d+$/m],
  ['PHP fatal error', /^PHP (?:Fatal error|Stack trace):/m],
];

/** The first kind of crash trace in the output: its name and the pattern of its first line. */
export function crashTrace(output: string): { name: string; re: RegExp } | undefined {
  const found = TRACES.find(([, re]) => re.test(output));
  return found ? { name: found[0], re: found[1] } : undefined;
}

/** One GET of a list page the kit answered 200, as the walk check needs it. */
export interface ListRead {
  /** The list: its API path without `/page/N` and `.json` (e.g. `/passwords`). */
  list: string;
  page: number;
  /** The last page its Link header named (1 when it named none). */
  last: number;
}

const LIST_PAGE = /^(.*?)(?:\/page\/(\d+))?\.json$/;

/**
 * A list read from an answered GET: a JSON array body of an API path that is a list (not a
 * count, not a single object). The last page is the page number of Link's rel="last".
 */
export function listRead(apiPath: string, status: number | null, headers: Record<string, string> | undefined, body: string | undefined): ListRead | undefined {
  if (status !== 200 || apiPath.endsWith('/count.json') || body === undefined || !body.trimStart().startsWith('[')) return undefined;
  const m = LIST_PAGE.exec(apiPath);
  if (!m) return undefined;
  const link = headers?.link ?? '';
  const last = /<[^>]*?\/page\/(\d+)\.json[^>]*>\s*;\s*rel="?last"?/i.exec(link)?.[1];
  return { list: m[1]!, page: m[2] === undefined ? 1 : Number(m[2]), last: last === undefined ? 1 : Number(last) };
}

/** Lists the command read some page of but not every page up to the last: "reads every item". */
export function unwalkedLists(reads: readonly ListRead[]): Array<{ list: string; read: number[]; last: number }> {
  const by = new Map<string, { pages: Set<number>; last: number }>();
  for (const r of reads) {
    const e = by.get(r.list) ?? { pages: new Set<number>(), last: 1 };
    e.pages.add(r.page);
    e.last = Math.max(e.last, r.last);
    by.set(r.list, e);
  }
  const out: Array<{ list: string; read: number[]; last: number }> = [];
  for (const [list, e] of by) {
    const missing = [...Array(e.last).keys()].map((i) => i + 1).some((p) => !e.pages.has(p));
    if (missing) out.push({ list, read: [...e.pages].sort((a, b) => a - b), last: e.last });
  }
  return out;
}

/**
 * A credential written as a key and its value in the command's output, in a form that proves it
 * is one: a quoted value beside a credential key (`"password": "…"`, `'password': '…'`,
 * `password='…'`, `Password:"…"`) or a form or query value (`password=…` after `?`, `&`, a space
 * or the line's start). Free text (`failed to find password: This installation…`), an unquoted
 * struct dump (`Password: ExpiryDate:…`) and an empty value prove nothing; nothing spans a line.
 * A value the kit never saw (a body it refused before reading it, as the error scenarios do) is
 * still a secret the client printed.
 */
const KEYS = 'password|new_password|password_confirm|private_key|privatekey|x-request-hash|token|secret';
const QUOTED = new RegExp(`(\\\\?["']?)\\b(${KEYS})\\1([ \\t]*[:=][ \\t]*)(\\\\?["'])([^"'\\\\\\n]{4,})(?=\\\\?["'])`, 'gi');
const FORM = new RegExp(`(^|[?&\\s])(${KEYS})(=)([^\\s"'&,;)}\\]]{4,})`, 'gim');
/** Values that stand in for a credential rather than being one. */
const PLACEHOLDER = /^(?:\*+|•+|x{4,}|null|none|nil|undefined|redacted|hidden|secret|«.*)$/i;

/** The output with every secret hidden: the kit's registered secrets and credentials in a provable form. */
export function hideSecrets(text: string): string {
  return scrub(text)
    .replace(QUOTED, (m, q: string, key: string, sep: string, open: string, value: string) =>
      PLACEHOLDER.test(value) ? m : `${q}${key}${q}${sep}${open}«redacted»`,
    )
    .replace(FORM, (m, lead: string, key: string, sep: string, value: string) => (PLACEHOLDER.test(value) ? m : `${lead}${key}${sep}«redacted»`));
}

/** The lines of `text` that hold a secret (1-based numbers), each as the report shows it (redacted). */
export function secretLines(text: string): Array<{ n: number; text: string }> {
  const out: Array<{ n: number; text: string }> = [];
  text.split('\n').forEach((line, i) => {
    const hidden = hideSecrets(line);
    if (hidden !== line) out.push({ n: i + 1, text: hidden });
  });
  return out;
}
