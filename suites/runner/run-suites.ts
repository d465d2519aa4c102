import { setMaxListeners } from 'node:events';
import type { Outcome } from '../../core/outcomes.ts';
import { OUTCOMES } from '../../core/outcomes.ts';
import { CLAUSES, type Clause } from '../catalogue/clauses.ts';
import { API_PREFIX } from '../harness/client.ts';
import { inFlight, type RunConfig, setRunConfig } from '../harness/config.ts';
import { closeRunPools, openRunPools } from '../harness/connections.ts';
import { forgetShownSettings, lockSettings } from '../harness/control.ts';
import type { CleanupReport } from '../harness/fixtures.ts';
import { Gate, openGate } from '../harness/gate.ts';
import { inOrder } from '../harness/in-order.ts';
import { type Journal, journalAnswer, openJournal } from '../harness/journal/journal.ts';
import { asCleanup, exactId, Ledger, withLedger } from '../harness/ownership.ts';
import { clauseOutcome, type RunProgress, type TestResult } from '../harness/results.ts';
import type { SuiteDeclarations } from '../harness/suite-api.ts';
import { type Observed, onExchange, onSending, requestsSent } from '../harness/traffic.ts';
import { activateOracle, Oracle } from '../oracle/oracle.ts';
import { ALONE, CHAINS } from './chains.ts';
import { mergeCleanup, restoreSettings, type SettingsRestore, snapshotSettings, sweep, type Unknown, writesSettled } from './cleanup.ts';
import { type CollectedRun, Collector } from './collector.ts';
import { inventory, leavesOut, passedOver } from './inventory.ts';
import { BUILT, CONFORMANCE_EXCLUDE, CONFORMANCE_INCLUDE } from './layout.ts';
import { errorText, type FileRun, loadSuiteFile, runSuiteFile, suiteFiles, TargetStopped } from './suite-runner.ts';

/**
 * Decision, after an interrupt: the running file gets INTERRUPT_GRACE_MS to end and clean up after
 * itself; then the settings restore and the final sweep run with CLEANUP_REQUEST_MS per request and
 * CLEANUP_BUDGET_MS in all, so SIGINT or SIGTERM ends within 9 s whatever the target does (issue 36:
 * inside a CI runner's grace of 10 s before its SIGKILL; the journal's objects go side by side).
 */
export const INTERRUPT_GRACE_MS = 1_500;
export const CLEANUP_REQUEST_MS = 2_000;
export const CLEANUP_BUDGET_MS = 5_500;
/**
 * Decision (the hang bound): this many request deadlines (--timeout) in a row, with no answer
 * between them and each for a request sent after the one before had passed its deadline (requests
 * in flight together wait together), mean the target stopped answering. The run then stops like an interrupt: no test
 * starts, the rest are harness errors ("the target stopped answering"), and the cleanup runs
 * under the interrupt's limits. A run against a target that stops answering ends within
 * HANG_DEADLINES × --timeout after its last answer, plus INTERRUPT_GRACE_MS, CLEANUP_BUDGET_MS and
 * one CLEANUP_REQUEST_MS (with the default 10 s timeout: 30 s + 9 s).
 */
export const HANG_DEADLINES = 3;

/** How long a run takes to end after SIGINT or SIGTERM, at most (printed when the signal arrives). */
export function interruptBoundMs(): number {
  return INTERRUPT_GRACE_MS + CLEANUP_BUDGET_MS + CLEANUP_REQUEST_MS;
}

/**
 * Decision (issue 36: the hang bound holds against any target): besides the deadlines in a row, a
 * run in which no request ends, none is sent and no test ends for this long has stalled (a
 * harness wait that no answer will end, such as read-backs of ids a target gave to several
 * creations at once) and stops like a target that stopped answering. Never less than
 * STALL_FLOOR_MS: loading suite files sends nothing for seconds on a loaded machine.
 */
export const STALL_FLOOR_MS = 30_000;

export function stallMs(timeoutMs: number): number {
  return Math.max(HANG_DEADLINES * timeoutMs, STALL_FLOOR_MS);
}

/** The bound the hang rules give, in ms after the target's last answer (printed by pmv6 run). */
export function hangBoundMs(timeoutMs: number): number {
  return stallMs(timeoutMs) + INTERRUPT_GRACE_MS + CLEANUP_BUDGET_MS + CLEANUP_REQUEST_MS;
}
/**
 * Files side by side: this many for each request the gate lets be in flight. A file mostly
 * waits on one request at a time, and between two of them on its own work or on a section of
 * another file; a second file per slot keeps the slots busy (measured: bench:field).
 */
export const FILES_PER_REQUEST = 2;

/**
 * Decision (issue 38: no serial tail): with N > 1 the files start in this order. The files that
 * run alone (none today: every-list reads the lists every file writes to in a short section of
 * its own and the rest beside the others) run before any other starts, while the lanes' first files load, rather than after every other
 * file has ended; then every file by its measured chain of requests one after another
 * (chains.ts, written by bench:field), longest first, so the files the run waits for longest
 * start first and the others fill the slots beside them; then the files not measured, in path
 * order. The gate serves the chains in the same order (gate.ts `chains`).
 */
export const STARTED_FIRST: readonly string[] = [
  ...ALONE,
  ...Object.entries(CHAINS)
    .filter(([f]) => !ALONE.includes(f))
    .sort(([f, a], [g, b]) => b - a || (f < g ? -1 : 1))
    .map(([f]) => f),
];

export interface ClauseResult {
  clause: Clause;
  outcome: Outcome;
  tests: TestResult[];
  note?: string;
}

export interface RunResult {
  config: RunConfig;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  clauses: ClauseResult[];
  tests: TestResult[];
  harnessErrors: string[];
  /** What the run deleted again and what it left on the target (apart from the verdict); `unknown`: lists the sweep could not read. */
  cleanup?: CleanupReport & { unknown?: Unknown[] };
  /** Settings put back at the end (control protocol only). */
  settings?: SettingsRestore;
  /** The run was stopped (options.signal) before every file ran. */
  interrupted?: boolean;
  /** The run stopped because the target stopped answering (HANG_DEADLINES deadlines in a row). */
  stopped?: string;
  /** Requests sent to the target: the suite files' (API, control, oracle look-ups) and the runner's own. */
  requests?: number;
  /** Requests by suite file. */
  requestsByFile?: Record<string, number>;
  /** What the gate measured (N > 1 or not): each file's longest chain, the exclusive sections, the files that ran alone. */
  schedule?: {
    chains: Record<string, number>;
    sections: number;
    sectionMs: number;
    sectionsByFile: Record<string, { sections: number; ms: number; requests: number; joined: number }>;
    /** Sections that took the target over from the one before (gate.ts handOver). */
    handedOver: number;
    /** Sections that went next as the one before ended, before requests queued ahead of them. */
    backToBack: number;
    alone: string[];
  };
}

export interface RunSuitesOptions {
  onModuleDone?: (file: string, results: TestResult[]) => void;
  onTestDone?: (result: TestResult) => void;
  /** After each test and each file: requests sent, files done, time so far. */
  onProgress?: (progress: RunProgress) => void;
  /** Other suite files than the conformance suites (the runner's own tests use this). */
  files?: { include: string[]; exclude: string[] };
  /**
   * Aborting stops the run: no new test starts, the running one ends, the files' afterAll
   * cleanup runs, then the settings are put back and the final sweep deletes what is left.
   */
  signal?: AbortSignal;
  /**
   * The run's journal (suites/harness/journal/): the settings before any change, every change and
   * creation before it is sent, each answer's id and each deletion after it, the end.
   */
  journal?: Journal;
}

// Runs every conformance suite file against the configured target. The response oracle judges
// every exchange of the run.
//
// Decision (--concurrency N, suites/harness/gate.ts): at most N requests in flight. With N > 1
// the files that may run side by side do, 2N at once (FILES_PER_REQUEST, STARTED_FIRST first); a
// file that declares `runsAlone` runs with nothing else in flight: after them, in the order of
// their paths, or before them when it is one of STARTED_FIRST. A setting
// is changed only inside an exclusive section (`Session.withSettings`), so files side by side
// never see a changed setting. With N = 1 every file runs in turn, in the order of their paths,
// as one chain of requests.
export async function runSuites(config: RunConfig, options: RunSuitesOptions = {}): Promise<RunResult> {
  const started = Date.now();
  const sentBefore = requestsSent();
  forgetShownSettings();
  const snapshot = await snapshotSettings(config);
  const settingsBefore = snapshot.settings;
  const journal = options.journal;
  if (journal && settingsBefore) journal.write({ t: 'settings', before: { ...settingsBefore } }, true);
  openJournal(journal);
  const stopJournal = journal ? onExchange((o) => journalExchange(config, o)) : () => {};
  // A run that cannot read the settings changes none: nothing could be put back.
  const unread = snapshot.error;
  lockSettings(unread === undefined ? undefined : `the settings could not be read at the start of the run (${unread})`);
  const collector = new Collector(options.onModuleDone, options.onTestDone, options.onProgress);
  const signal = options.signal;
  let interrupted = signal?.aborted ?? false;
  let hung: string | undefined;
  // The ledger of what the run made (suites/harness/ownership.ts): every write is checked against
  // it, and the final sweep works from it.
  const ledger = new Ledger(config.runId);
  // The files' tests listen to the run's stop, every file running at once (the caller's signal
  // keeps one listener, not one per test in flight).
  const stopFiles = new AbortController();
  setMaxListeners(0, stopFiles.signal);
  let graceStart: (() => void) | undefined;
  const stop = (reason: unknown, why: string) => {
    if (stopFiles.signal.aborted) return;
    // From here on the files send nothing: what they would create, the sweep would not see.
    ledger.stop(why);
    stopFiles.abort(reason);
    graceStart?.();
  };
  if (signal?.aborted) stop(signal.reason, 'the run was interrupted');
  else signal?.addEventListener('abort', () => stop(signal.reason, 'the run was interrupted'), { once: true });
  const files = suiteFiles(options.files?.include ?? CONFORMANCE_INCLUDE, options.files?.exclude ?? CONFORMANCE_EXCLUDE);
  collector.runStart(files.length);
  // A file none of whose tests this run would run is reported from the inventory, not imported
  // (inventory.ts): in a built tree, where the inventory is an index read in milliseconds.
  const known = BUILT && leavesOut(config) ? await inventory().catch(() => undefined) : undefined;
  const loadFile = (file: string) => {
    const declared = passedOver(file, known, config);
    return declared ? Promise.resolve(declared) : loadSuiteFile(file);
  };
  // An error no test or hook caught (a rejection nobody awaited) is the harness's, never the server's.
  const unhandled = (e: unknown) => collector.harnessError(errorText(e));
  process.on('unhandledRejection', unhandled);
  const oracle = new Oracle(config);
  ledger.onForeign = (f) => oracle.foreignCreation(f);
  const stopObserving = onExchange((o) => oracle.observe(o));
  const stopHearing = onSending((s) => oracle.sending(s));
  // The hang bound: HANG_DEADLINES request deadlines in a row, no answer between them. Requests
  // sent together wait together: a deadline counts only for a request sent after the last one
  // that counted had passed its own (8 requests in flight to paths that hang are one wait, not 8).
  let deadlines = 0;
  let countedAt = Number.NEGATIVE_INFINITY;
  const stopWatching = onExchange((o) => {
    if (o.exchange.response) {
      deadlines = 0;
      countedAt = Number.NEGATIVE_INFINITY;
    } else if (!/timed out/.test(o.exchange.error ?? '') || (o.mark.at ?? Number.POSITIVE_INFINITY) < countedAt) return;
    else {
      countedAt = performance.now();
      deadlines++;
    }
    if (deadlines >= HANG_DEADLINES && hung === undefined) {
      hung = `the target stopped answering: ${HANG_DEADLINES} requests in a row got no answer within --timeout (${config.timeoutMs} ms)`;
      collector.harnessError(hung);
      stop(new TargetStopped(hung), hung);
    }
  });
  // The stall rule (stallMs): the run's last sign of progress, checked every second.
  let progressAt = performance.now();
  let sentSeen = requestsSent();
  const stopProgress = onExchange(() => {
    progressAt = performance.now();
  });
  const stallWatch = setInterval(() => {
    const sent = requestsSent();
    if (sent !== sentSeen) {
      sentSeen = sent;
      progressAt = performance.now();
    }
    if (hung !== undefined || stopFiles.signal.aborted || performance.now() - progressAt < stallMs(config.timeoutMs)) return;
    hung = `the run made no progress: no request was sent or ended and no test ended for ${Math.round(stallMs(config.timeoutMs) / 1000)} s`;
    collector.harnessError(hung);
    stop(new TargetStopped(hung), hung);
  }, 1_000);
  stallWatch.unref();
  const concurrency = inFlight(config);
  // The long chains' requests go first at the gate (gate.ts chains): the run lasts as long as they.
  const gate = new Gate(concurrency, new Map(Object.entries(CHAINS)));
  setRunConfig(config);
  activateOracle(oracle);
  openGate(gate);
  openRunPools();
  const timeoutMs = Math.max(30_000, config.timeoutMs * 3);
  const alone: string[] = [];
  try {
    const runFile = async (file: string, declared: SuiteDeclarations | Error): Promise<void> => {
      if (stopFiles.signal.aborted) return;
      const scope = { file, sent: 0 };
      let run: FileRun;
      try {
        if (declared instanceof Error) throw declared;
        const go = () =>
          runSuiteFile(
            file,
            declared,
            {
              signal: stopFiles.signal,
              testTimeoutMs: timeoutMs,
              hookTimeoutMs: timeoutMs,
              onCaseDone: (c) => {
                progressAt = performance.now();
                collector.caseDone(file, c);
              },
            },
            scope,
          );
        if (declared.alone !== undefined) alone.push(file);
        run = declared.alone === undefined ? await go() : await gate.exclusive(go);
      } catch (e) {
        run = { file, cases: [], errors: [`the file did not load: ${errorText(e)}`], meta: {} };
      }
      collector.fileDone(run, oracle.drain(file), scope.sent);
    };
    const all = withLedger(ledger, () => scheduleFiles(files, concurrency, runFile, loadFile));
    let graceOver: (() => void) | undefined;
    const grace = new Promise<'grace over'>((resolve) => {
      graceStart = () => {
        if (signal?.aborted) interrupted = true;
        const timer = setTimeout(() => resolve('grace over'), INTERRUPT_GRACE_MS);
        graceOver = () => clearTimeout(timer);
      };
      if (stopFiles.signal.aborted) graceStart();
    });
    // After a stop the running file's own cleanup may still wait on the target: the sweep below takes over.
    if ((await Promise.race([all, grace])) === 'grace over') all.catch(() => {});
    graceOver?.();
  } finally {
    // After an interrupt a file may still hold the gate: the cleanup below must not wait on it.
    gate.close();
    openGate(undefined);
    // After a stop a file may still wait on the target: its requests end by their deadlines, unawaited.
    const closing = closeRunPools();
    if (!stopFiles.signal.aborted) await closing;
    forgetShownSettings();
    activateOracle(undefined);
    setRunConfig(undefined);
    stopObserving();
    stopHearing();
    stopWatching();
    stopProgress();
    clearInterval(stallWatch);
    process.off('unhandledRejection', unhandled);
  }
  // Whatever still runs of the files sends nothing more (RunStoppedError): only the cleanup does.
  ledger.stop('the run has ended');
  const stopped = interrupted || hung !== undefined;
  const limits = stopped ? { requestMs: CLEANUP_REQUEST_MS, until: Date.now() + CLEANUP_BUDGET_MS } : undefined;
  const { settings, swept } = await withLedger(ledger, () =>
    asCleanup(async () => {
      // A write still in flight (a PUT of Maintenance Mode) must land before the settings are read.
      const settled = await writesSettled(stopped ? CLEANUP_REQUEST_MS : 0);
      // Settings first: a run stopped in maintenance mode or with the API off could delete nothing.
      let restore = await restoreSettings(config, settingsBefore, limits);
      const swept = await sweep(config, ledger, limits);
      // A write that was still in flight may have landed since: the settings are read (and put back) again.
      if (!settled)
        restore = await restoreSettings(
          config,
          settingsBefore,
          limits ? { ...limits, until: Math.max(limits.until, Date.now() + CLEANUP_REQUEST_MS) } : undefined,
        );
      return { settings: restore, swept };
    }),
  );
  lockSettings(undefined);
  // Files side by side end in any order: the tests are reported in the files' order.
  const order = new Map(files.map((f, i) => [f, i]));
  collector.run.tests.sort((a, b) => (order.get(a.file) ?? 0) - (order.get(b.file) ?? 0));
  const result = summarise(config, started, collector.run);
  result.cleanup = mergeCleanup(collector.run.cleanup, swept);
  result.settings = unread === undefined ? settings : { ...settings, unread };
  stopJournal();
  openJournal(undefined);
  journal?.write({
    t: 'end',
    clean: result.cleanup.leftovers.length === 0 && !result.cleanup.unknown?.length && !settings.unrestored?.length,
    leftovers: result.cleanup.leftovers.length,
    at: new Date().toISOString(),
  });
  result.requests = requestsSent() - sentBefore;
  result.requestsByFile = collector.run.requestsByFile;
  const measured = gate.measured();
  result.schedule = {
    chains: Object.fromEntries(measured.chains),
    sections: measured.sections,
    sectionMs: measured.sectionMs,
    sectionsByFile: Object.fromEntries(measured.sectionsByFile),
    handedOver: measured.handedOver,
    backToBack: measured.backToBack,
    alone,
  };
  if (interrupted) result.interrupted = true;
  if (hung !== undefined) result.stopped = hung;
  return result;
}

/** An answer into the journal: the id a creation got, a deletion. */
function journalExchange(config: RunConfig, o: Observed): void {
  const { request, response } = o.exchange;
  const control = o.channel === 'control';
  const base = control ? (config.control?.url ?? '').replace(/\/+$/, '') : `${config.target}${API_PREFIX}`;
  if (!request.url.startsWith(`${base}/`)) return;
  const path = request.url.slice(base.length).split(/[?#]/)[0] ?? '';
  journalAnswer(request.method, path, control, request.body, response?.status, response ? exactId(o.exchange) : undefined);
}

/**
 * Loads and runs every file: at concurrency 1 in turn, in path order; otherwise the files of
 * ALONE that run alone first, one after another, then 2N at once (each lane loads the next file
 * and runs it: STARTED_FIRST, then the rest in path order), then the other files that run alone,
 * in path order.
 */
async function scheduleFiles(
  files: string[],
  concurrency: number,
  runFile: (file: string, declared: SuiteDeclarations | Error) => Promise<void>,
  loadFile: (file: string) => Promise<SuiteDeclarations>,
): Promise<void> {
  const load = (file: string) => loadFile(file).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
  if (concurrency <= 1) {
    for (const file of files) await runFile(file, await load(file));
    return;
  }
  const ordered = [...STARTED_FIRST.filter((f) => files.includes(f)), ...files.filter((f) => !STARTED_FIRST.includes(f))];
  const loads = new Map<string, Promise<SuiteDeclarations | Error>>();
  const loaded = (file: string) => {
    let p = loads.get(file);
    if (p === undefined) loads.set(file, (p = load(file)));
    return p;
  };
  // The files measured to run alone that still do run now, one after another, nothing else started
  // (a test waiting at the gate through a whole file could pass its deadline); the lanes' first
  // files load meanwhile.
  for (const file of ordered.slice(0, FILES_PER_REQUEST * concurrency)) void loaded(file);
  const done = new Set<string>();
  for (const file of ordered) {
    if (!ALONE.includes(file)) break;
    const declared = await loaded(file);
    if (declared instanceof Error || declared.alone === undefined) continue;
    await runFile(file, declared);
    done.add(file);
  }
  // runFile never throws; a file that runs alone is kept for the end, in the order of their paths.
  const alone = await inOrder(
    ordered.filter((f) => !done.has(f)),
    FILES_PER_REQUEST * concurrency,
    async (file) => {
      const declared = await loaded(file);
      if (!(declared instanceof Error) && declared.alone !== undefined) return [file, declared] as const;
      await runFile(file, declared);
      return undefined;
    },
  );
  const kept = alone.filter((a) => a !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [file, declared] of kept) await runFile(file, declared);
}

export function summarise(config: RunConfig, started: number, run: Pick<CollectedRun, 'tests' | 'harnessErrors'>): RunResult {
  const byClause = new Map<string, TestResult[]>();
  for (const t of run.tests) for (const id of t.clauses) byClause.set(id, [...(byClause.get(id) ?? []), t]);
  const clauses: ClauseResult[] = CLAUSES.filter((c) => !c.retired).map((clause) => {
    const tests = byClause.get(clause.id) ?? [];
    return {
      clause,
      tests,
      outcome: clauseOutcome(
        tests.map((t) => t.outcome),
        clause.level,
      ),
    };
  });
  // A clause that depends on another (an HMAC refusal on HMAC acceptance) proves nothing while
  // its dependency was never shown: a server that refuses every signature "refuses" a bad one
  // too. Decision: the dependency is met when one of its tests held (passed, or observed for an
  // INFO one such as AUTH-03); a test of it that failed on something else (a sibling's
  // observation, such as a PUT's status) is reported under that clause and leaves the
  // dependents' own verdicts standing.
  const testsOf = new Map(clauses.map((c) => [c.clause.id, c.tests]));
  for (const c of clauses) {
    const unmet = (c.clause.dependsOn ?? []).filter((id) => !(testsOf.get(id) ?? []).some((t) => t.clauses.includes(id) && OUTCOMES[t.outcome].holds));
    if (unmet.length > 0 && OUTCOMES[c.outcome].judged) {
      c.outcome = 'skipped-unverifiable';
      c.note = `depends on ${unmet.join(', ')}, which no test showed to hold`;
    }
  }
  const finished = Date.now();
  return {
    config,
    startedAt: new Date(started).toISOString(),
    finishedAt: new Date(finished).toISOString(),
    durationMs: finished - started,
    clauses,
    tests: run.tests,
    harnessErrors: run.harnessErrors,
  };
}
