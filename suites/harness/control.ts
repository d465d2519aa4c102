import type { Exchange } from '../../core/exchange.ts';
import { registerSecret } from '../../core/redact.ts';
import { SettingsLockedError, SetupError } from './assert.ts';
import { ApiClient, type TlsTrust } from './client.ts';
import { activeGate } from './gate.ts';
import { exactId } from './ownership.ts';

export type Role = 'admin' | 'it' | 'project manager' | 'normal user' | 'read only';

export interface Settings {
  api_enabled: boolean;
  maintenance_mode: boolean;
  auth_methods: 'basic+hmac' | 'basic' | 'hmac';
  api_users: 'all' | 'api_only';
  hmac_key_expiry_days: number | null;
  num_items_lists: number;
  /** The password generator's settings, where the target's control protocol has them (suites/model/generator.ts). */
  generator_length?: number;
  generator_uppercase?: boolean;
  generator_lowercase?: boolean;
  generator_digits?: boolean;
  generator_symbols?: boolean;
}

export interface CreatedUser {
  id: number;
  /** The id exactly as the control protocol sent it (a JSON number above 2^53 is not rounded). */
  id_text: string;
  username: string;
  public_key: string;
  private_key: string;
}

export interface ApiKeys {
  public_key: string;
  private_key: string;
}

/**
 * A change of server-wide state while suite files run side by side is made inside an exclusive
 * section (Session.withSettings, withSettingsSnapshot), or a file beside it would see it. Outside
 * one it is the harness's mistake, reported as such and never sent.
 */
function serverWide(what: string): void {
  const gate = activeGate();
  if (gate && !gate.holding()) throw new Error(`harness: control ${what} outside an exclusive section (Session.withSettings) while suite files run`);
  // The fns of a settings section that others may join (requestsOnly) only send requests: a
  // write of theirs would change the settings under the other calls sharing the section.
  if (gate?.joined()) throw new Error(`harness: control ${what} in the fn of a Session.withSettings declared requestsOnly (suites/harness/gate.ts)`);
}

/**
 * The settings the control protocol last showed, by its URL. Within a run settings change only
 * through these clients (inside exclusive sections), so the last answer is the state: a section
 * starts from it instead of asking again. The runner forgets it at the start and end of a run.
 */
const shown = new Map<string, Settings>();

/**
 * The settings in force between exclusive sections, by control URL: every section puts back what
 * it changed before it ends, so they hold for every request sent outside one. Read outside a
 * section (the runner's snapshot) or at a section's start.
 */
const between = new Map<string, Settings>();

/**
 * Control URLs whose last fault-related write was a reset that answered 204: no fault of ours can
 * be pending there (a fault is added only through these clients, in exclusive sections).
 */
const faultsCleared = new Set<string>();

export function forgetShownSettings(): void {
  shown.clear();
  between.clear();
  faultsCleared.clear();
}

/** The settings in force between exclusive sections (every request outside one is sent under them), if known. */
export function settingsBetweenSections(url: string): Settings | undefined {
  return between.get(url);
}

/** Records the settings read at the start of an exclusive section: those in force between sections. */
export function sectionFound(url: string, settings: Settings): void {
  between.set(url, settings);
}

/**
 * Why settings must stay as they are (the run could not read them at its start: nothing could be
 * put back), or undefined. Set by the runner for the run; PUT /settings, reset and faults refuse.
 */
let locked: string | undefined;

export function lockSettings(reason: string | undefined): void {
  locked = reason;
}

/** Throws SettingsLockedError when the run must change no setting. */
export function changeable(what: string): void {
  if (locked !== undefined) throw new SettingsLockedError(`${locked} (control ${what} not sent)`);
}

/** Control protocol v1 (ARCHITECTURE.md): bearer token, JSON bodies, at {base}/__control. */
export class ControlClient {
  readonly url: string;
  private readonly client: ApiClient;

  constructor(opts: { url: string; token: string; timeoutMs?: number; maxResponseBytes?: number; tls?: TlsTrust; readOnly?: boolean }) {
    this.url = opts.url.replace(/\/+$/, '');
    registerSecret(opts.token, 'control token');
    this.client = new ApiClient({
      target: this.url,
      auth: { kind: 'raw', headers: { Authorization: `Bearer ${opts.token}` } },
      channel: 'control',
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      ...(opts.maxResponseBytes !== undefined ? { maxResponseBytes: opts.maxResponseBytes } : {}),
      ...(opts.tls ? { tls: opts.tls } : {}),
      ...(opts.readOnly ? { readOnly: true } : {}),
    });
  }

  private async call(method: string, path: string, status: number, json?: unknown): Promise<Exchange> {
    const ex = await this.client.request({ method, path, url: `${this.url}${path}`, json });
    if (!ex.response) throw new SetupError(`control ${method} ${path}: no response: ${ex.error ?? 'unknown error'}`, { exchange: ex });
    if (ex.response.status !== status) {
      throw new SetupError(`control ${method} ${path}: expected status ${status}, got ${ex.response.status}`, { exchange: ex });
    }
    return ex;
  }

  private async callJson<T>(method: string, path: string, status: number, json: unknown, fields: string[]): Promise<T> {
    return (await this.callExchange<T>(method, path, status, json, fields)).body;
  }

  private async callExchange<T>(method: string, path: string, status: number, json: unknown, fields: string[]): Promise<{ body: T; ex: Exchange }> {
    const ex = await this.call(method, path, status, json);
    const body = ex.json as Record<string, unknown> | undefined;
    const missing = fields.filter((f) => body === null || typeof body !== 'object' || !(f in body));
    if (missing.length > 0) {
      throw new SetupError(`control ${method} ${path}: answer lacks ${missing.join(', ')}`, { exchange: ex });
    }
    return { body: body as T, ex };
  }

  async getSettings(): Promise<Settings> {
    const settings = await this.callJson<Settings>('GET', '/settings', 200, undefined, ['api_enabled', 'auth_methods']);
    shown.set(this.url, settings);
    if (!activeGate()?.holding()) between.set(this.url, settings);
    return settings;
  }

  /** The settings as the last answer showed them, or asked for. */
  async currentSettings(): Promise<Settings> {
    return shown.get(this.url) ?? this.getSettings();
  }

  async putSettings(partial: Partial<Settings>): Promise<Settings> {
    changeable('PUT /settings');
    serverWide('PUT /settings');
    shown.delete(this.url);
    const settings = await this.unsure(() => this.callJson<Settings>('PUT', '/settings', 200, partial, ['api_enabled', 'auth_methods']));
    shown.set(this.url, settings);
    return settings;
  }

  /** A change that failed may have landed or not: the settings between sections are no longer known. */
  private async unsure<T>(change: () => Promise<T>): Promise<T> {
    try {
      return await change();
    } catch (e) {
      between.delete(this.url);
      throw e;
    }
  }

  async createUser(user: { username: string; password: string; role: Role; api_only?: boolean; active?: boolean }): Promise<CreatedUser> {
    registerSecret(user.password, `password of ${user.username}`);
    const { body: created, ex } = await this.callExchange<CreatedUser>('POST', '/users', 201, { api_only: false, active: true, ...user }, [
      'id',
      'username',
      'public_key',
      'private_key',
    ]);
    registerSecret(created.private_key, `private key of ${user.username}`);
    const id = exactId(ex);
    if (id === undefined) throw new SetupError('control POST /users: answer has no integer id', { exchange: ex });
    return { ...created, id_text: id };
  }

  /** Earlier keys of the user stop working. */
  async issueApiKeys(userId: number, issuedDaysAgo = 0): Promise<ApiKeys> {
    const keys = await this.callJson<ApiKeys>('POST', `/users/${userId}/api_keys`, 201, { issued_days_ago: issuedDaysAgo }, ['public_key', 'private_key']);
    registerSecret(keys.private_key, `private key of user ${userId}`);
    return keys;
  }

  /** The next `times` API requests matching method and path (relative to /index.php/api/v6) throw. */
  async addFault(fault: { method: string; path: string; times?: number }): Promise<void> {
    changeable('POST /faults');
    serverWide('POST /faults');
    faultsCleared.delete(this.url);
    await this.call('POST', '/faults', 204, { times: 1, ...fault });
  }

  /** Whether a fault added through these clients may still be pending (none since a reset that answered 204). */
  mayHoldFaults(): boolean {
    return !faultsCleared.has(this.url);
  }

  /** Settings back to defaults; data kept. */
  async reset(): Promise<void> {
    changeable('POST /reset');
    serverWide('POST /reset');
    shown.delete(this.url);
    faultsCleared.delete(this.url);
    await this.unsure(() => this.call('POST', '/reset', 204));
    faultsCleared.add(this.url);
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
