import { ApiClient, adminAuth } from '../harness/client.ts';
import type { RunConfig } from '../harness/config.ts';
import { ControlClient, type Settings } from '../harness/control.ts';
import { shellQuote } from '../harness/curl.ts';
import { type CleanupReport, deletePath, type FixtureKind, reportId, UNLOCK_REASON } from '../harness/fixtures.ts';
import { inOrder } from '../harness/in-order.ts';
import { exactItemIds, type Ledger, showPath, verifyCreated } from '../harness/ownership.ts';
import { writeMark } from '../harness/traffic.ts';

/** What the runner did about the target's settings at the end of a run. */
export interface SettingsRestore {
  /** Settings that differed from the start of the run, were put back and read back as before. */
  restored: string[];
  /** Why they could not be read or put back. */
  error?: string;
  /**
   * Settings that are not as they were at the start (or could not be read to tell), with their
   * value before the run: printed first, with the control request that puts them back.
   */
  unrestored?: Array<{ key: string; before: unknown; now?: unknown }>;
  /** The settings could not be read at the start of the run: none was changed (why). */
  unread?: string;
  /** The control protocol's settings URL, for the request that would restore them. */
  url?: string;
}

/** Where a sweep could not tell what the target holds (a failed list read). */
export interface Unknown {
  list: string;
  reason: string;
}

/** The sweep's report: what it deleted, and what the target still holds by a second reading. */
export interface SweepReport extends CleanupReport {
  /** Lists whose reading failed: what they hold is unknown, never "nothing". */
  unknown: Unknown[];
}

/**
 * Limits for the cleanup after an interrupt: each request gets `requestMs`, and no request starts
 * after `until` (epoch ms), so Ctrl-C ends in seconds whatever the target does. What could not be
 * reached in time is listed as left over.
 */
export interface CleanupLimits {
  requestMs: number;
  until: number;
}

const OUT_OF_TIME = "the interrupted run's cleanup ran out of time";

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
/** Deletes of one kind in flight at once in the sweep. */
const DELETES_AT_ONCE = 8;

export interface SweepOptions {
  /** The names to look for (default: the run's `pmv6-<run>-`); pmv6 cleanup looks for `pmv6-`. */
  prefix?: string;
  /** Names listed under the prefix that are not to be touched (a run still running). */
  spare?: (name: string) => boolean;
  /** Read the lists once and delete nothing: what they hold is `leftovers` (pmv6 run's look before it starts). */
  listOnly?: boolean;
}
const MAX_PAGES = 200;
/** Pages of one list the sweep reads at once after a full first page. */
const PAGES_AT_ONCE = 4;

function clientsOf(config: RunConfig, limits?: CleanupLimits): { admin: ApiClient; control: ControlClient | undefined } {
  const opts = {
    timeoutMs: limits ? Math.min(limits.requestMs, config.timeoutMs) : config.timeoutMs,
    ...(config.tls ? { tls: config.tls } : {}),
    ...(config.maxResponseBytes ? { maxResponseBytes: config.maxResponseBytes } : {}),
  };
  const admin = new ApiClient({ target: config.target, auth: adminAuth(config), ...opts });
  const control = config.control ? new ControlClient({ ...config.control, ...opts }) : undefined;
  return { admin, control };
}

const outOfTime = (limits?: CleanupLimits) => limits !== undefined && Date.now() >= limits.until;
const firstLine = (e: unknown) => ((e as Error)?.message ?? String(e)).split('\n')[0] ?? 'unknown error';

/** The target's settings at the start of a run, or why they could not be read (control protocol only; never throws). */
export async function snapshotSettings(config: RunConfig): Promise<{ settings?: Settings; error?: string }> {
  if (!config.control || config.readOnly) return {};
  const { admin, control } = clientsOf(config);
  try {
    const settings = await control!.getSettings();
    // A reply without every setting is no snapshot: what it lacks could not be put back.
    const keys: Array<keyof Settings> = ['api_enabled', 'maintenance_mode', 'auth_methods', 'api_users', 'hmac_key_expiry_days', 'num_items_lists'];
    const lacking = keys.filter((k) => !(k in settings));
    if (lacking.length > 0) return { error: `control GET /settings: answer lacks ${lacking.join(', ')}` };
    return { settings };
  } catch (e) {
    return { error: firstLine(e) };
  } finally {
    await control?.close();
    await admin.close();
  }
}

/** Waits until no write of the run is in flight, at most `ms`: a late PUT must not land after the restore. */
export async function writesSettled(ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (writeMark().inFlight > 0) {
    if (Date.now() >= end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

const differs = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b);

/**
 * Puts back every setting that differs from `before` and reads them back: a test's own restore
 * (Session.withSettings) may not have run when the run was interrupted or its worker died. What
 * is not as before afterwards (or could not be read) is `unrestored`. Never throws.
 */
export async function restoreSettings(config: RunConfig, before: Settings | undefined, limits?: CleanupLimits): Promise<SettingsRestore> {
  if (!before || !config.control) return { restored: [] };
  const url = `${config.control.url.replace(/\/+$/, '')}/settings`;
  const { admin, control } = clientsOf(config, limits);
  const keys = Object.keys(before) as Array<keyof Settings>;
  let now: Settings | undefined;
  let error: string | undefined;
  let changed: Array<keyof Settings> = [];
  try {
    now = await control!.getSettings();
    changed = keys.filter((k) => differs(now![k], before[k]));
    // Maintenance Mode first and alone: left on, it locks every user out.
    const order = [...changed.filter((k) => k === 'maintenance_mode'), ...changed.filter((k) => k !== 'maintenance_mode')];
    for (const attempt of [1, 2]) {
      const left = order.filter((k) => differs(now![k], before[k]));
      if (left.length === 0 || outOfTime(limits)) break;
      try {
        if (left.includes('maintenance_mode')) await control!.putSettings({ maintenance_mode: before.maintenance_mode });
        const rest = left.filter((k) => k !== 'maintenance_mode');
        if (rest.length > 0) await control!.putSettings(Object.fromEntries(rest.map((k) => [k, before[k]])) as Partial<Settings>);
      } catch (e) {
        error = firstLine(e);
        if (attempt === 2) break;
      }
      // Read back: a restore counts only when the target shows it.
      now = await control!.getSettings();
    }
  } catch (e) {
    error = firstLine(e);
    now = undefined;
  } finally {
    await control?.close();
    await admin.close();
  }
  if (!now) return { restored: [], ...(error ? { error } : {}), unrestored: keys.map((k) => ({ key: k, before: before[k] })), url };
  const unrestored = keys.filter((k) => differs(now![k], before[k])).map((k) => ({ key: k, before: before[k], now: now![k] }));
  const restored = changed.filter((k) => !unrestored.some((u) => u.key === k));
  return {
    restored,
    ...(error && unrestored.length > 0 ? { error } : {}),
    ...(unrestored.length > 0 ? { unrestored, url } : {}),
  };
}

/** The control request that puts the unrestored settings back, the token left to the environment. */
export function restoreCommand(settings: SettingsRestore): string | undefined {
  if (!settings.unrestored?.length || !settings.url) return undefined;
  const body = JSON.stringify(Object.fromEntries(settings.unrestored.map((u) => [u.key, u.before])));
  return `curl -X PUT -H "Authorization: Bearer $PMV6_CONTROL_TOKEN" -H 'Content-Type: application/json' --data ${shellQuote(body)} ${shellQuote(settings.url)}`;
}

type Listed = { kind: FixtureKind; id: string; name: string };

/**
 * Every item of the kind's lists whose name carries the prefix, or why a list could not be read.
 * Page 1 first; after a full page the next pages `PAGES_AT_ONCE` at a time (a populated
 * installation's passwords are tens of pages of 1000), read in order up to the first short page.
 */
async function listNamed(
  admin: ApiClient,
  kind: FixtureKind,
  lists: string[],
  prefix: string,
  limits?: CleanupLimits,
): Promise<{ found: Listed[]; unknown: Unknown[] }> {
  const found = new Map<string, Listed>();
  const unknown: Unknown[] = [];
  const read = (list: string, page: number) =>
    admin.get(`${list}/page/${page}.json`, { headers: { 'X-Page-Size': String(PAGE_SIZE) } }).catch((e: unknown) => ({ error: firstLine(e) }) as const);
  for (const list of lists) {
    // Whether the list ends at this page (an unreadable page ends it too, as unknown).
    const ends = (page: number, ex: Awaited<ReturnType<typeof read>>): boolean => {
      const status = 'response' in ex ? ex.response?.status : undefined;
      if (!('request' in ex) || status !== 200 || !Array.isArray(ex.json)) {
        // Past the last page a list may answer 404 (product facts): the end, when page 1 was read.
        if (page > 1 && status === 404) return true;
        const why =
          status === undefined
            ? `no answer (${'error' in ex ? ex.error : 'unknown error'})`
            : status !== 200
              ? `answered ${status}`
              : 'answered with no JSON array';
        unknown.push({ list, reason: `GET ${list}/page/${page}.json ${why}` });
        return true;
      }
      const items = ex.json as Array<{ name?: unknown; username?: unknown } | null>;
      const ids = exactItemIds(ex);
      for (const [i, item] of items.entries()) {
        const name = kind === 'user' ? item?.username : item?.name;
        const id = ids[i];
        if (id !== undefined && typeof name === 'string' && name.includes(prefix)) found.set(id, { kind, id, name });
      }
      return items.length < PAGE_SIZE;
    };
    if (outOfTime(limits)) {
      unknown.push({ list, reason: `not read: ${OUT_OF_TIME}` });
      continue;
    }
    if (ends(1, await read(list, 1))) continue;
    for (let first = 2; ; first += PAGES_AT_ONCE) {
      if (first > MAX_PAGES) {
        unknown.push({ list, reason: `more than ${MAX_PAGES} pages of ${PAGE_SIZE}: not read to the end` });
        break;
      }
      if (outOfTime(limits)) {
        unknown.push({ list, reason: `not read: ${OUT_OF_TIME}` });
        break;
      }
      const pages = Array.from({ length: Math.min(PAGES_AT_ONCE, MAX_PAGES - first + 1) }, (_, i) => first + i);
      const replies = await Promise.all(pages.map((page) => read(list, page)));
      if (pages.some((page, i) => ends(page, replies[i]!))) break;
    }
  }
  return { found: [...found.values()], unknown };
}

/**
 * The final sweep: deletes what the ledger holds of the run and has not deleted; then reads the
 * target's lists for what they hold under this run's name prefix (`pmv6-<run>-`, names for
 * projects, passwords, personal passwords and groups, usernames for users). What they hold that
 * the ledger did not (a creation whose reply was lost) is deleted once read back showing the
 * name, and the lists are read again; what the last reading holds is left over. A list it could
 * not read is unknown, never "nothing found". Never throws.
 *
 * Decision: the lists are read after the deletes, not before and after. Every reading walks
 * whole lists (tens of pages on a populated installation); when the ledger held everything, as
 * in a run that lost no reply, one reading says both that nothing was missed and that nothing is
 * left.
 */
export async function sweep(config: RunConfig, ledger: Ledger | undefined, limits?: CleanupLimits, opts: SweepOptions = {}): Promise<SweepReport> {
  const report: SweepReport = { deleted: [], leftovers: [], unknown: [] };
  if (config.readOnly) return report;
  const prefix = opts.prefix ?? ledger?.prefix ?? `pmv6-${config.runId}-`;
  const spare = opts.spare ?? (() => false);
  const { admin, control } = clientsOf(config, limits);
  await control?.close();
  const failed = new Map<string, string>();
  /** Every object the sweep tried to delete or to read back (kind:id). */
  const tried = new Set<string>();
  const key = (kind: FixtureKind, id: string) => `${kind}:${id}`;
  const listsOf = (kind: FixtureKind) => LISTS.find((l) => l.kind === kind)?.lists ?? [];
  // The objects of one kind side by side (children's kinds before their parents'): an interrupted
  // run's cleanup must fit a CI runner's grace against a slow target.
  const removeOne = async (kind: FixtureKind, item: Listed, last: boolean) => {
    tried.add(key(kind, item.id));
    if (outOfTime(limits)) {
      failed.set(key(kind, item.id), `not deleted: ${OUT_OF_TIME}`);
      if (listsOf(kind).length === 0) report.leftovers.push({ kind, id: reportId(item.id), name: item.name, reason: failed.get(key(kind, item.id))! });
      return;
    }
    const ex = await admin
      .delete(deletePath(kind, item.id), kind === 'password' ? { headers: { 'X-Unlock-Reason': UNLOCK_REASON } } : {})
      .catch((e: unknown) => ({ error: firstLine(e) }) as const);
    const status = 'response' in ex ? ex.response?.status : undefined;
    if (status !== undefined && ((status >= 200 && status < 300) || status === 404)) {
      // 404: gone already (a password inside a project deleted just before).
      if (status !== 404) report.deleted.push({ kind, id: reportId(item.id), name: item.name });
      ledger?.markDeleted(kind, item.id);
      failed.delete(key(kind, item.id));
    } else {
      failed.set(key(kind, item.id), status === undefined ? `no response: ${'error' in ex ? ex.error : 'unknown error'}` : `DELETE answered ${status}`);
      // Not listable (files): what the run could not delete stays a leftover.
      if (last && listsOf(kind).length === 0) report.leftovers.push({ kind, id: reportId(item.id), name: item.name, reason: failed.get(key(kind, item.id))! });
    }
  };
  const remove = async (kind: FixtureKind, items: Listed[]) => {
    await inOrder(items, DELETES_AT_ONCE, (item) => removeOne(kind, item, false));
    // Asked again one by one, newest first: a project refused while a subproject of it stood, a
    // delete whose connection was reset.
    const again = items.filter((i) => failed.has(key(kind, i.id)) && !failed.get(key(kind, i.id))!.startsWith('not deleted')).reverse();
    for (const item of again) await removeOne(kind, item, true);
  };
  /** Every list read once: what each kind's lists hold under the prefix. A list that could not be read is unknown and not asked again. */
  const readLists = async () => {
    const found: Listed[] = [];
    // The kinds side by side: a hung target costs one deadline for them all, a slow one one reply.
    const reads = await Promise.all(
      LISTS.map(({ kind, lists: all }) =>
        listNamed(
          admin,
          kind,
          all.filter((l) => !report.unknown.some((u) => u.list === l)),
          prefix,
          limits,
        ),
      ),
    );
    for (const read of reads) {
      found.push(...read.found.filter((f) => !spare(f.name)));
      report.unknown.push(...read.unknown);
    }
    return found;
  };
  try {
    if (opts.listOnly) {
      for (const item of await readLists()) report.leftovers.push({ kind: item.kind, id: reportId(item.id), name: item.name, reason: 'listed' });
      return report;
    }
    // Files first (their containers may not be the run's to delete); then the listed kinds, in
    // the fixtures' deletion order.
    const kinds: FixtureKind[] = ['file', ...LISTS.map((l) => l.kind)];
    for (const kind of kinds) {
      // Creations still pending (read back only when needed, suites/harness/ownership.ts) of a
      // kind no list shows: read back now, else the sweep would not know them.
      if (listsOf(kind).length === 0 && ledger) {
        for (const p of ledger.pendingOf(kind)) {
          if (outOfTime(limits)) break;
          await verifyCreated(ledger, admin, p, { deferred: true }).catch(() => undefined);
        }
      }
      await remove(
        kind,
        (ledger?.live() ?? []).filter((o) => o.kind === kind).map((o) => o as Listed),
      );
    }
    let found = await readLists();
    // What the lists hold and the ledger did not: once (a second round only for what the first
    // one's deletes uncovered, such as an object whose container the first round deleted).
    for (let round = 0; round < 2; round++) {
      const untried = found.filter((item) => !tried.has(key(item.kind, item.id)));
      if (untried.length === 0) break;
      for (const kind of kinds) {
        const take: Listed[] = [];
        for (const item of untried.filter((i) => i.kind === kind)) {
          tried.add(key(kind, item.id));
          if (outOfTime(limits)) continue;
          // Listed under the run's name but not in the ledger (a creation whose reply was lost):
          // the run's once read back showing the name.
          const back = await admin.get(showPath(kind, item.id)).catch(() => undefined);
          const shown = (back?.json as { name?: unknown; username?: unknown } | undefined) ?? {};
          const name = kind === 'user' ? shown.username : shown.name;
          if (back?.response?.status === 200 && typeof name === 'string' && name.includes(prefix)) {
            ledger?.record(kind, item.id, item.name);
            take.push(item);
          } else failed.set(key(kind, item.id), "listed under the run's name, but its read-back did not show it: not touched");
        }
        await remove(kind, take);
      }
      found = await readLists();
    }
    // What the ledger holds and no DELETE removed, where a list that would show it could not be
    // read: named as left over, never counted as nothing.
    const listed = new Set(found.map((f) => key(f.kind, f.id)));
    for (const o of ledger?.live() ?? []) {
      const lists = listsOf(o.kind);
      if (lists.length === 0 || listed.has(key(o.kind, o.id)) || !lists.some((l) => report.unknown.some((u) => u.list === l))) continue;
      report.leftovers.push({
        kind: o.kind,
        id: reportId(o.id),
        name: o.name,
        reason: `${failed.get(key(o.kind, o.id)) ?? 'not deleted'}; its list could not be read to tell`,
      });
    }
    // What the target holds afterwards: the last reading (not what the run believes it deleted).
    for (const item of found)
      report.leftovers.push({
        kind: item.kind,
        id: reportId(item.id),
        name: item.name,
        reason: failed.get(key(item.kind, item.id)) ?? 'still listed after the sweep',
      });
  } finally {
    await admin.close();
  }
  return report;
}

/**
 * The files' reports and the final sweep as one. Deleted: everything either deleted. Left over:
 * what the sweep's second reading found (the target's own word), and of the kinds no list shows
 * (files), what could not be deleted; an unknown list is reported as unknown.
 */
export function mergeCleanup(files: CleanupReport, swept: SweepReport): CleanupReport & { unknown?: Unknown[] } {
  const key = (i: { kind: string; id: number | string }) => `${i.kind}:${i.id}`;
  const deleted = [...files.deleted];
  const deletedIds = new Set(deleted.map(key));
  for (const d of swept.deleted) if (!deletedIds.has(key(d))) deleted.push(d);
  const leftovers = swept.leftovers.map((l) => {
    const before = files.leftovers.find((f) => key(f) === key(l));
    return before && l.reason === 'still listed after the sweep' ? { ...l, reason: before.reason } : l;
  });
  const untouched = [...(files.untouched ?? []), ...(swept.untouched ?? [])];
  return {
    deleted,
    leftovers,
    ...(untouched.length > 0 ? { untouched } : {}),
    ...(swept.unknown.length > 0 ? { unknown: swept.unknown } : {}),
  };
}

/**
 * What could not be put back, first and loudly (every user may be locked out): one line a
 * setting, then the control request that restores them. Empty when everything is as before.
 */
export function settingsAlarm(settings: SettingsRestore | undefined): string {
  if (!settings?.unrestored?.length) return '';
  const lines = ["!!! pmv6: THE TARGET'S SETTINGS ARE NOT AS THEY WERE BEFORE THE RUN !!!"];
  for (const u of settings.unrestored) {
    lines.push(
      `!!!   ${u.key}: ${'now' in u ? `now ${JSON.stringify(u.now)}` : 'unknown (could not be read)'}, was ${JSON.stringify(u.before)} before the run`,
    );
  }
  if (settings.error) lines.push(`!!!   why: ${settings.error}`);
  const command = restoreCommand(settings);
  if (command) lines.push('!!! put them back with (PMV6_CONTROL_TOKEN set to the control token):', `    ${command}`);
  return `${lines.join('\n')}\n`;
}

/** One line for the console, apart from the verdict; leftovers follow, one a line. */
export function cleanupText(report: CleanupReport & { unknown?: Unknown[] }, settings?: SettingsRestore): string {
  const unknown = report.unknown ?? [];
  const count =
    unknown.length > 0
      ? `at least ${report.leftovers.length} left over (unknown: ${unknown.length} list${unknown.length === 1 ? '' : 's'} could not be read)`
      : `${report.leftovers.length} left over`;
  const lines = [
    `cleanup: deleted ${report.deleted.length} object${report.deleted.length === 1 ? '' : 's'} created by the run; ${count}${report.leftovers.length > 0 ? ':' : ''}`,
  ];
  for (const l of report.leftovers) lines.push(`  ${l.kind} ${l.id} ${l.name}: ${l.reason}`);
  for (const u of unknown) lines.push(`  unknown: ${u.list}: ${u.reason}`);
  for (const u of report.untouched ?? []) lines.push(`  not touched: ${u.kind} ${u.id}: ${u.reason}`);
  if (settings?.unread)
    lines.push(
      `settings: could not be read at the start of the run (${settings.unread}): none was changed; the checks that change settings were skipped (unverifiable)`,
    );
  if (settings?.restored.length) lines.push(`settings: put back ${settings.restored.join(', ')} as they were before the run (read back)`);
  if (settings?.unrestored?.length) {
    // A setting that could not be read afterwards is unknown, not known to differ.
    const differ = settings.unrestored.filter((u) => 'now' in u).map((u) => u.key);
    const unknown = settings.unrestored.filter((u) => !('now' in u)).map((u) => u.key);
    if (differ.length > 0) lines.push(`settings: NOT as before the run: ${differ.join(', ')} (see the lines at the top)`);
    if (unknown.length > 0) lines.push(`settings: unknown (could not be read after the run): ${unknown.join(', ')} (see the lines at the top)`);
  } else if (settings?.error) lines.push(`settings: could not check or put back the settings of the start of the run: ${settings.error}`);
  return `${lines.join('\n')}\n`;
}
