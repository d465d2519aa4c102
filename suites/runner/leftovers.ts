import { ApiClient, adminAuth } from '../harness/client.ts';
import type { RunConfig } from '../harness/config.ts';
import { ControlClient, type Settings } from '../harness/control.ts';
import { reportId } from '../harness/fixtures.ts';
import { appendTo, journalsFor, type RunJournal } from '../harness/journal/journal.ts';
import { Ledger, type OwnedKind, showPath } from '../harness/ownership.ts';
import { type CleanupLimits, restoreSettings, type SettingsRestore, type SweepReport, sweep } from './cleanup.ts';

/**
 * Earlier runs' footprint on a target (issue 36): from their journals (the state folder,
 * suites/harness/journal/) and, without a journal, by the names runs give what they make
 * (`pmv6-<run>-`) in every list. `pmv6 run` looks before it starts; `pmv6 cleanup` and
 * `pmv6 run --cleanup-first` remove it.
 */
export interface Footprint {
  /** Journals of runs on this target that did not end clean and are not running. */
  journals: RunJournal[];
  /** Runs on this target whose process still runs here: never touched. */
  running: string[];
  /** Objects the lists show under `pmv6-` (any run's but a running one's). */
  named: Array<{ kind: OwnedKind; id: string; name: string }>;
  /** Settings not as the oldest unclean journal found them before its run (read from the control protocol). */
  changed: Array<{ key: string; before: unknown; now: unknown; run: string }>;
  /** Lists that could not be read. */
  unknown: string[];
}

const PREFIX = 'pmv6-';
const runOf = (name: string) => /pmv6-([0-9a-f]{6})-/.exec(name)?.[1];

function spareOf(running: string[]): (name: string) => boolean {
  return (name) => {
    const run = runOf(name);
    return run !== undefined && running.includes(run);
  };
}

/** What an earlier run left: journals, then one reading of every list by name; never throws. */
export async function footprint(config: RunConfig, dir: string, limits?: CleanupLimits): Promise<Footprint> {
  const { journals, running } = unclean(config, dir);
  const changed: Footprint['changed'] = [];
  const oldest = journals.find((j) => j.before && j.changes.length > 0);
  if (oldest?.before && config.control) {
    const control = new ControlClient({ ...config.control, timeoutMs: limits?.requestMs ?? config.timeoutMs, ...(config.tls ? { tls: config.tls } : {}) });
    try {
      const now = (await control.getSettings()) as unknown as Record<string, unknown>;
      for (const [k, v] of Object.entries(oldest.before))
        if (JSON.stringify(now[k]) !== JSON.stringify(v)) changed.push({ key: k, before: v, now: now[k], run: oldest.run });
    } catch {
      // unread: the objects are still reported
    } finally {
      await control.close();
    }
  }
  // A reading of the lists by name alone (the sweep reads; a read-only config deletes nothing).
  const read = await sweep({ ...config, readOnly: false }, undefined, limits, { prefix: PREFIX, spare: spareOf(running), listOnly: true });
  return {
    journals,
    running,
    named: read.leftovers.map((l) => ({ kind: l.kind, id: String(l.id), name: l.name })),
    changed,
    unknown: read.unknown.map((u) => u.list),
  };
}

/** One line for `pmv6 run`, or undefined when the target shows nothing of earlier runs. */
export function footprintLine(f: Footprint, command: string): string | undefined {
  const runs = new Set([
    ...f.journals.filter((j) => j.live.length > 0 || j.unanswered.length > 0).map((j) => j.run),
    ...f.named.map((n) => runOf(n.name) ?? '?'),
  ]);
  const objects = new Set([...f.named.map((n) => `${n.kind}:${n.id}`), ...f.journals.flatMap((j) => j.live.map((o) => `${o.kind}:${o.id}`))]).size;
  if (objects === 0 && f.changed.length === 0) return undefined;
  const parts: string[] = [];
  if (objects > 0) parts.push(`${objects} object${objects === 1 ? '' : 's'} of earlier pmv6 runs (${[...runs].join(', ')})`);
  if (f.changed.length > 0) parts.push(`settings changed by pmv6 run ${f.changed[0]!.run} and not put back (${f.changed.map((c) => c.key).join(', ')})`);
  return `the target holds ${parts.join(' and ')}; remove them with: ${command} (or run with --cleanup-first)`;
}

export interface CleanupResult {
  settings: SettingsRestore;
  swept: SweepReport;
  /** Objects a journal names that its read-back showed under another name (or no longer there). */
  notOurs: Array<{ kind: OwnedKind; id: string; name: string; reason: string }>;
  journals: string[];
}

/**
 * Removes earlier runs' footprint: the settings the oldest unclean journal recorded first (a
 * target with the API off deletes nothing), then every object a journal names that reads back
 * with its name, then whatever every list shows under `pmv6-` and reads back so, children before
 * parents; then reads the lists again. The journals get a `cleaned` entry. Never throws.
 */
export async function removeFootprint(config: RunConfig, dir: string, limits?: CleanupLimits): Promise<CleanupResult> {
  return removeObjects(config, dir, await restoreJournalSettings(config, dir, limits), limits);
}

/** Earlier runs' journals on this target that did not end clean, and the runs still running. */
function unclean(config: RunConfig, dir: string): { journals: RunJournal[]; running: string[] } {
  const all = journalsFor(dir, config.target).filter((j) => j.run !== config.runId);
  return { journals: all.filter((j) => !j.clean && !j.running), running: all.filter((j) => j.running).map((j) => j.run) };
}

/** The settings the oldest unclean journal recorded before its run changed any, put back and read back. */
export async function restoreJournalSettings(config: RunConfig, dir: string, limits?: CleanupLimits): Promise<SettingsRestore> {
  const oldest = unclean(config, dir).journals.find((j) => j.before && j.changes.length > 0);
  if (!oldest?.before) return { restored: [] };
  if (!config.control)
    return {
      restored: [],
      error: `pmv6 run ${oldest.run} changed settings (its journal: ${oldest.file}): give --control and --control-token to put them back`,
    };
  return restoreSettings(config, oldest.before as unknown as Settings, limits);
}

/** Then the objects (see removeFootprint). */
export async function removeObjects(config: RunConfig, dir: string, settings: SettingsRestore, limits?: CleanupLimits): Promise<CleanupResult> {
  const { journals, running } = unclean(config, dir);
  const ledger = new Ledger('cleanup');
  const notOurs: CleanupResult['notOurs'] = [];
  const admin = new ApiClient({
    target: config.target,
    auth: adminAuth(config),
    timeoutMs: limits?.requestMs ?? config.timeoutMs,
    ...(config.tls ? { tls: config.tls } : {}),
  });
  try {
    // An id a journal recorded is proven the run's by its read-back showing the recorded name
    // (the id may since name someone else's object).
    for (const j of journals)
      for (const o of j.live) {
        const back = await admin.get(showPath(o.kind, o.id)).catch(() => undefined);
        const shown = (back?.json as { name?: unknown; username?: unknown } | undefined) ?? {};
        const name = o.kind === 'user' ? shown.username : shown.name;
        // A renamed object keeps the run's name prefix (tests rename with it).
        if (back?.response?.status === 200 && (name === o.name || (typeof name === 'string' && name.includes(`pmv6-${j.run}-`))))
          ledger.record(o.kind, o.id, o.name);
        else if (back?.response?.status !== 404)
          notOurs.push({
            ...o,
            reason: back?.response
              ? `its read-back answered ${back.response.status}${typeof name === 'string' ? ` showing ${JSON.stringify(name)}` : ''}: not touched`
              : 'no answer to its read-back: not touched',
          });
      }
  } finally {
    await admin.close();
  }
  const swept = await sweep(config, ledger, limits, { prefix: PREFIX, spare: spareOf(running) });
  const clean = swept.leftovers.length === 0 && swept.unknown.length === 0 && !settings.unrestored?.length && !settings.error;
  for (const j of journals) {
    try {
      appendTo(j.file, { t: 'cleaned', clean, leftovers: swept.leftovers.length, at: new Date().toISOString() });
    } catch {
      // a read-only state folder: the names still find them next time
    }
  }
  return { settings, swept, notOurs, journals: journals.map((j) => j.file) };
}

/** The cleanup's lines: removed, restored, left (each by kind, id and name), unknown. */
export function removalText(r: CleanupResult): string {
  const lines: string[] = [];
  const d = r.swept.deleted;
  lines.push(`cleanup: removed ${d.length} object${d.length === 1 ? '' : 's'} of earlier runs${d.length > 0 ? ':' : ''}`);
  for (const o of d) lines.push(`  removed ${o.kind} ${o.id} ${o.name}`);
  if (r.settings.restored.length > 0) lines.push(`settings: put back ${r.settings.restored.join(', ')} as before the run that changed them (read back)`);
  for (const u of r.settings.unrestored ?? [])
    lines.push(`settings: NOT put back: ${u.key} is ${'now' in u ? JSON.stringify(u.now) : 'unknown'}, was ${JSON.stringify(u.before)}`);
  if (r.settings.error) lines.push(`settings: ${r.settings.error}`);
  const left = r.swept.leftovers;
  lines.push(
    left.length === 0 && r.swept.unknown.length === 0
      ? 'left: nothing (every list read again)'
      : `left: ${left.length} object${left.length === 1 ? '' : 's'}${r.swept.unknown.length > 0 ? ', and lists that could not be read' : ''}${left.length > 0 || r.swept.unknown.length > 0 ? ':' : ''}`,
  );
  for (const l of left) lines.push(`  ${l.kind} ${reportId(String(l.id))} ${l.name}: ${l.reason}`);
  for (const u of r.swept.unknown) lines.push(`  unknown: ${u.list}: ${u.reason}`);
  for (const n of r.notOurs) lines.push(`  not touched: ${n.kind} ${n.id} ${n.name}: ${n.reason}`);
  return `${lines.join('\n')}\n`;
}
