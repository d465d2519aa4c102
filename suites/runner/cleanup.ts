import { ApiClient } from '../harness/client.ts';
import type { RunConfig } from '../harness/config.ts';
import { ControlClient, type Settings } from '../harness/control.ts';
import { type CleanupReport, deletePath, type FixtureKind, UNLOCK_REASON } from '../harness/fixtures.ts';

/** What the runner did about the target's settings at the end of a run. */
export interface SettingsRestore {
  /** Settings that differed from the start of the run and were put back. */
  restored: string[];
  /** Why they could not be read or put back. */
  error?: string;
}

type Item = { kind: FixtureKind; id: number; name: string };

/**
 * Limits for the cleanup after an interrupt: each request gets `requestMs`, and no request starts
 * after `until` (epoch ms), so Ctrl-C ends in seconds whatever the target does. What could not be
 * reached in time is listed as left over.
 */
export interface CleanupLimits {
  requestMs: number;
  until: number;
}

const OUT_OF_TIME = "not deleted: the interrupted run's cleanup ran out of time";

// In the fixtures' deletion order. Files go with their projects and passwords; personal
// passwords are the run's Admin's own.
const LISTS: Array<{ kind: FixtureKind; lists: string[] }> = [
  { kind: 'password', lists: ['/passwords', '/passwords/archived'] },
  { kind: 'my_password', lists: ['/my_passwords', '/my_passwords/archived'] },
  { kind: 'project', lists: ['/projects', '/projects/archived'] },
  { kind: 'group', lists: ['/groups'] },
  { kind: 'user', lists: ['/users'] },
];
const PAGE_SIZE = 1000;
const MAX_PAGES = 200;

function clientsOf(config: RunConfig, limits?: CleanupLimits): { admin: ApiClient; control: ControlClient | undefined } {
  const opts = {
    timeoutMs: limits ? Math.min(limits.requestMs, config.timeoutMs) : config.timeoutMs,
    ...(config.tls ? { tls: config.tls } : {}),
    ...(config.maxResponseBytes ? { maxResponseBytes: config.maxResponseBytes } : {}),
  };
  const admin = new ApiClient({ target: config.target, auth: { kind: 'basic', user: config.user, password: config.password }, ...opts });
  const control = config.control ? new ControlClient({ ...config.control, ...opts }) : undefined;
  return { admin, control };
}

const outOfTime = (limits?: CleanupLimits) => limits !== undefined && Date.now() >= limits.until;

/** The target's settings at the start of a run (control protocol only; never throws). */
export async function snapshotSettings(config: RunConfig): Promise<Settings | undefined> {
  if (!config.control || config.readOnly) return undefined;
  const { admin, control } = clientsOf(config);
  try {
    return await control!.getSettings();
  } catch {
    return undefined;
  } finally {
    await control?.close();
    await admin.close();
  }
}

/**
 * Puts back every setting that differs from `before`: a test's own restore (Session.withSettings)
 * may not have run when the run was interrupted or its worker died. Never throws.
 */
export async function restoreSettings(config: RunConfig, before: Settings | undefined, limits?: CleanupLimits): Promise<SettingsRestore> {
  if (!before || !config.control) return { restored: [] };
  const { admin, control } = clientsOf(config, limits);
  try {
    const now = await control!.getSettings();
    if (outOfTime(limits)) throw new Error("the interrupted run's cleanup ran out of time");
    const changed = (Object.keys(before) as Array<keyof Settings>).filter((k) => JSON.stringify(now[k]) !== JSON.stringify(before[k]));
    if (changed.length > 0) await control!.putSettings(Object.fromEntries(changed.map((k) => [k, before[k]])) as Partial<Settings>);
    return { restored: changed };
  } catch (e) {
    return { restored: [], error: (e as Error).message.split('\n')[0] ?? 'unknown error' };
  } finally {
    await control?.close();
    await admin.close();
  }
}

/**
 * The final sweep: finds what is still on the target under this run's name prefix
 * (`pmv6-<run>-`, names for projects, passwords, personal passwords and groups, usernames for
 * users) and deletes it, passwords first. It catches what a file's cleanup could not reach (a worker killed by a
 * signal, an interrupted file). A list the target refuses (no users endpoint) is skipped.
 * Never throws.
 */
export async function sweep(config: RunConfig, limits?: CleanupLimits): Promise<CleanupReport> {
  const report: CleanupReport = { deleted: [], leftovers: [] };
  if (config.readOnly) return report;
  const prefix = `pmv6-${config.runId}-`;
  const { admin, control } = clientsOf(config, limits);
  await control?.close();
  try {
    for (const { kind, lists } of LISTS) {
      if (outOfTime(limits)) {
        report.leftovers.push({ kind, id: 0, name: `${prefix}*`, reason: "not searched: the interrupted run's cleanup ran out of time" });
        continue;
      }
      const found = new Map<number, Item>();
      for (const list of lists) {
        for (let page = 1; page <= MAX_PAGES && !outOfTime(limits); page++) {
          const ex = await admin.get(`${list}/page/${page}.json`, { headers: { 'X-Page-Size': String(PAGE_SIZE) } });
          if (ex.response?.status !== 200 || !Array.isArray(ex.json)) break;
          const items = ex.json as Array<{ id?: unknown; name?: unknown; username?: unknown }>;
          for (const item of items) {
            const name = kind === 'user' ? item.username : item.name;
            if (typeof item.id === 'number' && typeof name === 'string' && name.startsWith(prefix)) found.set(item.id, { kind, id: item.id, name });
          }
          if (items.length < PAGE_SIZE) break;
        }
      }
      for (const item of found.values()) {
        if (outOfTime(limits)) {
          report.leftovers.push({ ...item, reason: OUT_OF_TIME });
          continue;
        }
        const ex = await admin.delete(deletePath(kind, item.id), kind === 'password' ? { headers: { 'X-Unlock-Reason': UNLOCK_REASON } } : {});
        const status = ex.response?.status;
        if (status !== undefined && status >= 200 && status < 300) report.deleted.push(item);
        // A password inside a project deleted just before is gone already.
        else if (status !== 404) report.leftovers.push({ ...item, reason: status === undefined ? `no response: ${ex.error}` : `DELETE answered ${status}` });
      }
    }
  } finally {
    await admin.close();
  }
  return report;
}

/** The files' reports and the final sweep as one: what the sweep removed is no longer left over. */
export function mergeCleanup(files: CleanupReport, swept: CleanupReport): CleanupReport {
  const key = (i: { kind: string; id: number }) => `${i.kind}:${i.id}`;
  const sweptIds = new Set(swept.deleted.map(key));
  const leftovers = files.leftovers.filter((l) => !sweptIds.has(key(l)));
  const known = new Set(leftovers.map(key));
  const deleted = [...files.deleted];
  const deletedIds = new Set(deleted.map(key));
  for (const d of swept.deleted) if (!deletedIds.has(key(d))) deleted.push(d);
  for (const l of swept.leftovers) if (!known.has(key(l))) leftovers.push(l);
  return { deleted, leftovers };
}

/** One line for the console, apart from the verdict; leftovers follow, one a line. */
export function cleanupText(report: CleanupReport, settings?: SettingsRestore): string {
  const lines = [
    `cleanup: deleted ${report.deleted.length} object${report.deleted.length === 1 ? '' : 's'} created by the run; ${report.leftovers.length} left over${report.leftovers.length > 0 ? ':' : ''}`,
  ];
  for (const l of report.leftovers) lines.push(`  ${l.kind} ${l.id} ${l.name}: ${l.reason}`);
  if (settings?.restored.length) lines.push(`settings: put back ${settings.restored.join(', ')} as they were before the run`);
  if (settings?.error) lines.push(`settings: could not check or put back the settings of the start of the run: ${settings.error}`);
  return `${lines.join('\n')}\n`;
}
