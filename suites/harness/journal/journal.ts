import { closeSync, fdatasyncSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { scrub } from '../../../core/redact.ts';
import type { OwnedKind } from '../ownership.ts';

/**
 * The journal of a run's footprint (issue 36): one JSON Lines file a run, appended to before each
 * write is sent (the settings before the first change, each settings change, each creation with its
 * name) and after each answer (the id a creation got, an object deleted, the end). Each entry is
 * one write(2) of a whole line to a file opened for appending: a SIGKILL at any moment leaves every
 * line before it on disk (the kernel holds it), and at worst a cut last line, which a reader skips.
 * Decision: fdatasync only after the settings entries (a lost setting locks users out; the objects
 * are found by their names too): the creations cost one write each, no disk flush.
 */
export type JournalEntry =
  | { t: 'start'; v: 1; run: string; target: string; control?: string; pid: number; host: string; at: string }
  | { t: 'settings'; before: Record<string, unknown> }
  | { t: 'change'; settings: Record<string, unknown> }
  | { t: 'create'; kind: OwnedKind; name: string }
  | { t: 'created'; kind: OwnedKind; name: string; id: string }
  | { t: 'deleted'; kind: OwnedKind; id: string }
  | { t: 'end'; clean: boolean; leftovers: number; at: string }
  | { t: 'cleaned'; clean: boolean; leftovers: number; at: string };

/** The state folder: --state-dir, else PMV6_STATE_DIR, else $XDG_STATE_HOME/pmv6, else ~/.local/state/pmv6. */
export function stateDir(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (flag) return flag;
  if (env.PMV6_STATE_DIR) return env.PMV6_STATE_DIR;
  const xdg = env.XDG_STATE_HOME;
  return xdg ? join(xdg, 'pmv6') : join(homedir(), '.local', 'state', 'pmv6');
}

export const journalsOf = (dir: string) => join(dir, 'journals');

export class Journal {
  private readonly fds: number[];
  readonly path: string;

  /** Opens `<dir>/journals/<run>.jsonl` (and a copy at `copy`, e.g. in the report folder) and writes the start entry. */
  constructor(dir: string, start: { run: string; target: string; control?: string }, copy?: string) {
    mkdirSync(journalsOf(dir), { recursive: true, mode: 0o700 });
    this.path = join(journalsOf(dir), `${start.run}.jsonl`);
    this.fds = [openSync(this.path, 'a', 0o600), ...(copy ? [openSync(copy, 'a', 0o600)] : [])];
    this.write({ t: 'start', v: 1, ...start, pid: process.pid, host: hostname(), at: new Date().toISOString() }, true);
  }

  write(entry: JournalEntry, sync = false): void {
    // Redacted like every output: a target may echo secrets in the settings it answers.
    const line = `${scrub(JSON.stringify(entry))}\n`;
    for (const fd of this.fds) {
      try {
        writeSync(fd, line);
        if (sync) fdatasyncSync(fd);
      } catch {
        // A full disk must not end the run: the names still find what it made.
      }
    }
  }

  close(): void {
    for (const fd of this.fds.splice(0)) closeSync(fd);
  }
}

let active: Journal | undefined;

/** The journal the harness writes to (set by the runner for a run against an installation). */
export function openJournal(journal: Journal | undefined): void {
  active = journal;
}

export function activeJournal(): Journal | undefined {
  return active;
}

const CREATES: Readonly<Record<string, OwnedKind>> = {
  '/projects.json': 'project',
  '/passwords.json': 'password',
  '/my_passwords.json': 'my_password',
  '/groups.json': 'group',
  '/users.json': 'user',
};

/** What a request's path creates (API or control), else undefined. */
function creates(method: string, path: string, control: boolean): OwnedKind | undefined {
  if (method !== 'POST') return undefined;
  if (control) return path === '/users' ? 'user' : undefined;
  return CREATES[path];
}

/** A name as the journal keeps it: the run's prefix and enough to tell it (a limits probe's name is megabytes). */
const NAME_CHARS = 200;

function nameIn(body: unknown): string | undefined {
  const name = fullName(body);
  return name === undefined ? undefined : name.slice(0, NAME_CHARS);
}

function fullName(body: unknown): string | undefined {
  if (typeof body === 'string') {
    try {
      return fullName(JSON.parse(body));
    } catch {
      return undefined;
    }
  }
  const b = body as { name?: unknown; username?: unknown } | null | undefined;
  const name = typeof b?.name === 'string' ? b.name : b?.username;
  return typeof name === 'string' ? name : undefined;
}

/**
 * Before a write is sent (the harness's guard): a settings change or a creation goes into the
 * journal first. `path` is below the API root (or the control base when `control`).
 */
export function journalIntent(method: string, path: string, control: boolean, body: unknown): void {
  if (!active) return;
  const m = method.toUpperCase();
  if (control && ((m === 'PUT' && path === '/settings') || (m === 'POST' && path === '/reset'))) {
    active.write({ t: 'change', settings: path === '/reset' ? { reset: true } : ((body as Record<string, unknown>) ?? {}) }, true);
    return;
  }
  const kind = creates(m, path, control);
  const name = nameIn(body);
  if (kind && name !== undefined) active.write({ t: 'create', kind, name });
}

const DELETES = /^\/(projects|passwords|my_passwords|groups|users)\/(\d{1,40})\.json$/;
const KIND_OF: Readonly<Record<string, OwnedKind>> = {
  projects: 'project',
  passwords: 'password',
  my_passwords: 'my_password',
  groups: 'group',
  users: 'user',
};

/** After an answer: a creation's id (2XX with an id), a deletion (2XX). */
export function journalAnswer(
  method: string,
  path: string,
  control: boolean,
  requestBody: string | undefined,
  status: number | undefined,
  id: string | undefined,
): void {
  if (!active || status === undefined || status < 200 || status >= 300) return;
  const m = method.toUpperCase();
  const kind = creates(m, path, control);
  if (kind && id !== undefined) {
    let name: string | undefined;
    try {
      name = nameIn(JSON.parse(requestBody ?? ''));
    } catch {
      name = undefined;
    }
    if (name !== undefined) active.write({ t: 'created', kind, name, id });
    return;
  }
  const d = m === 'DELETE' && !control ? DELETES.exec(path) : null;
  if (d) active.write({ t: 'deleted', kind: KIND_OF[d[1]!]!, id: d[2]! });
}

/** One run's journal as read back: what it changed and made, and whether it ended clean. */
export interface RunJournal {
  file: string;
  run: string;
  target: string;
  control?: string;
  pid: number;
  host: string;
  at: string;
  /** The settings before the run's first change. */
  before?: Record<string, unknown>;
  /** Every settings change the run sent, in order. */
  changes: Array<Record<string, unknown>>;
  /** Creations answered with an id and not deleted by the run (by kind, id). */
  live: Array<{ kind: OwnedKind; id: string; name: string }>;
  /** Creations sent with no id recorded (the answer was lost, or the run died first). */
  unanswered: Array<{ kind: OwnedKind; name: string }>;
  /** Ended (or cleaned up since) with nothing left and every setting as before. */
  clean: boolean;
  /** The run's process is still running on this machine. */
  running: boolean;
}

function alive(pid: number, host: string): boolean {
  if (host !== hostname()) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Parses a journal; a cut last line (a SIGKILL mid-write) is skipped. */
export function parseJournal(file: string, text: string): RunJournal | undefined {
  let j: RunJournal | undefined;
  const created = new Map<string, { kind: OwnedKind; id: string; name: string }>();
  const asked = new Map<string, { kind: OwnedKind; name: string }>();
  for (const line of text.split('\n')) {
    let e: JournalEntry;
    try {
      e = JSON.parse(line) as JournalEntry;
    } catch {
      continue;
    }
    if (e.t === 'start') {
      j = {
        file,
        run: e.run,
        target: e.target,
        ...(e.control ? { control: e.control } : {}),
        pid: e.pid,
        host: e.host,
        at: e.at,
        changes: [],
        live: [],
        unanswered: [],
        clean: false,
        running: false,
      };
      continue;
    }
    if (!j) continue;
    switch (e.t) {
      case 'settings':
        j.before ??= e.before;
        break;
      case 'change':
        j.changes.push(e.settings);
        break;
      case 'create':
        asked.set(`${e.kind}:${e.name}`, { kind: e.kind, name: e.name });
        break;
      case 'created':
        asked.delete(`${e.kind}:${e.name}`);
        created.set(`${e.kind}:${e.id}`, { kind: e.kind, id: e.id, name: e.name });
        break;
      case 'deleted':
        created.delete(`${e.kind}:${e.id}`);
        break;
      case 'end':
      case 'cleaned':
        j.clean = e.clean;
        break;
    }
  }
  if (!j) return undefined;
  j.live = [...created.values()];
  j.unanswered = [...asked.values()];
  j.running = !j.clean && alive(j.pid, j.host);
  return j;
}

/** Every journal in the state folder for this target (the same base URL), oldest first. */
export function journalsFor(dir: string, target: string): RunJournal[] {
  const folder = journalsOf(dir);
  let names: string[];
  try {
    names = readdirSync(folder).filter((n) => n.endsWith('.jsonl'));
  } catch {
    return [];
  }
  const out: RunJournal[] = [];
  for (const name of names) {
    const file = join(folder, name);
    try {
      const j = parseJournal(file, readFileSync(file, 'utf8'));
      if (j && j.target.replace(/\/+$/, '') === target.replace(/\/+$/, '')) out.push(j);
    } catch {
      // unreadable: not ours to judge
    }
  }
  return out.sort((a, b) => a.at.localeCompare(b.at));
}

/** Appends to an earlier run's journal (pmv6 cleanup's result). */
export function appendTo(file: string, entry: JournalEntry): void {
  const fd = openSync(file, 'a', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(entry)}\n`);
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Decision: clean journals older than a week are removed when a run starts; the others stay until cleaned. */
export function pruneClean(dir: string, olderThanMs = 7 * 24 * 3600 * 1000): void {
  const folder = journalsOf(dir);
  let names: string[];
  try {
    names = readdirSync(folder).filter((n) => n.endsWith('.jsonl'));
  } catch {
    return;
  }
  for (const name of names) {
    const file = join(folder, name);
    try {
      if (Date.now() - statSync(file).mtimeMs < olderThanMs) continue;
      if (parseJournal(file, readFileSync(file, 'utf8'))?.clean) unlinkSync(file);
    } catch {
      // leave it
    }
  }
}

/** Where a setting a journal recorded as turned off or narrowed stands: the run that did it. */
export function blame(dir: string, target: string): string | undefined {
  const j = journalsFor(dir, target)
    .filter((x) => !x.clean && !x.running)
    .find((x) =>
      x.changes.some(
        (c) => c['api_enabled'] === false || c['maintenance_mode'] === true || (typeof c['auth_methods'] === 'string' && c['auth_methods'] !== 'basic+hmac'),
      ),
    );
  if (!j) return undefined;
  // The settings as the run left them, replayed from its journal: the keys not as before.
  const state: Record<string, unknown> = { ...j.before };
  for (const c of j.changes) if (!c['reset']) Object.assign(state, c);
  const keys = Object.keys(state)
    .filter((k) => JSON.stringify(state[k]) !== JSON.stringify(j.before?.[k]))
    .join(', ');
  return `pmv6 run ${j.run} (started ${j.at}) changed ${keys} and did not put ${keys.includes(',') ? 'them' : 'it'} back (its journal: ${j.file})`;
}
