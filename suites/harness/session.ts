import { PreconditionError, ReadOnlyError, SetupError } from './assert.ts';
import { ApiClient, adminAuth } from './client.ts';
import { basicRefused, getRunConfig, type RunConfig } from './config.ts';
import { ControlClient, changeable, type Settings, sectionFound, settingsBetweenSections } from './control.ts';
import { Fixtures, type FixtureUser } from './fixtures.ts';
import { activeGate, refuseSettingsBeside } from './gate.ts';
import { afterAll } from './suite-api.ts';

export interface Session {
  config: RunConfig;
  /** The run's Admin user over HTTP Basic (over HMAC when the target allows HMAC only: RunConfig.signIn). */
  admin: ApiClient;
  /** A client with no credentials at all. */
  anonymous: ApiClient;
  control: ControlClient | undefined;
  fixtures: Fixtures;
  /** An Admin over HMAC: the run's own keys, else a fresh Admin made through the control protocol. */
  adminHmac(): Promise<ApiClient | undefined>;
  /** Needs the control protocol (the test's clause says so). */
  user(role: Parameters<Fixtures['createUser']>[0], opts?: Parameters<Fixtures['createUser']>[1]): Promise<FixtureUser>;
  /**
   * Runs fn with these settings, then restores every value it changed, also after a failure.
   * `requestsOnly`: fn only sends requests (no control protocol write of its own), so where the
   * settings are already those in force between exclusive sections it runs beside the other files,
   * and elsewhere it shares its section with the calls that ask the same settings (gate.ts
   * `joinable`). Beside the other tests of its file only in a file that does not run alone.
   * Calls side by side (`together`) only from outside a section: nested ones share the section
   * they run in and would change its settings under each other.
   */
  withSettings<T>(settings: Partial<Settings>, fn: () => Promise<T>, opts?: { requestsOnly?: boolean }): Promise<T>;
}

// One session per test file: clients, the control client and the fixtures, with cleanup of
// everything the file created once the file is done.
export function useSession(): Session {
  let state: { config: RunConfig; admin: ApiClient; control: ControlClient | undefined; fixtures: Fixtures } | undefined;
  let hmac: Promise<ApiClient | undefined> | undefined;
  const init = () => {
    if (state) return state;
    const config = getRunConfig();
    const tls = { ...(config.tls ? { tls: config.tls } : {}), ...(config.maxResponseBytes ? { maxResponseBytes: config.maxResponseBytes } : {}) };
    const readOnly = config.readOnly ? { readOnly: true } : {};
    const admin = new ApiClient({
      target: config.target,
      auth: adminAuth(config),
      timeoutMs: config.timeoutMs,
      ...tls,
      ...readOnly,
      basicRefused: basicRefused(config),
    });
    const control = config.control ? new ControlClient({ ...config.control, timeoutMs: config.timeoutMs, ...tls, ...readOnly }) : undefined;
    state = { config, admin, control, fixtures: new Fixtures(config, admin, control) };
    return state;
  };
  // The report goes into the file's meta, where the runner's Collector reads it.
  afterAll(async (file) => {
    if (!state) return;
    const report = await state.fixtures.cleanup();
    const before = file.meta.cleanup;
    file.meta.cleanup = before ? { deleted: [...before.deleted, ...report.deleted], leftovers: [...before.leftovers, ...report.leftovers] } : report;
    await state.control?.close();
    await state.admin.close();
  });
  const session: Session = {
    get config() {
      return init().config;
    },
    get admin() {
      return init().admin;
    },
    get anonymous() {
      return init().admin.withAuth({ kind: 'none' });
    },
    get control() {
      return init().control;
    },
    get fixtures() {
      return init().fixtures;
    },
    adminHmac() {
      hmac ??= (async () => {
        const { config, admin, control, fixtures } = init();
        if (config.hmac) return admin.withAuth({ kind: 'hmac', ...config.hmac });
        if (!control) return undefined;
        return (await fixtures.createUser('admin', { label: 'hmac-admin' })).hmacClient;
      })();
      return hmac;
    },
    user(role, opts) {
      return init().fixtures.createUser(role, opts);
    },
    async withSettings(settings, fn, opts = {}) {
      const { control } = init();
      if (init().config.readOnly) throw new ReadOnlyError('the check would change settings');
      if (!control) throw new SetupError('changing settings needs the control protocol');
      changeable('PUT /settings');
      // Decision: a run that signs in with HMAC only never allows HTTP Basic on the installation,
      // nor takes HMAC away from its own Admin.
      const refused = basicRefused(init().config);
      if (refused !== undefined && settings.auth_methods !== undefined && settings.auth_methods !== 'hmac')
        throw new PreconditionError(`${refused} (the check sets the authentication method to "${settings.auth_methods}")`);
      // The file's creations still pending are read back under the settings they were made under,
      // before the section opens or is joined (gate.ts: a section waits on nothing outside it).
      await init().fixtures.settle();
      // Decision (issue 38: the exclusive sections were half of a run through 100 ms): requests sent
      // outside a section are sent under the settings in force between sections, since every section
      // puts back what it changed before it ends. Settings already as asked there need no section
      // for a fn that only sends requests: it runs beside the others, under those settings all the same.
      refuseSettingsBeside();
      const keys = (Object.keys(settings) as Array<keyof Settings>).sort();
      const found = settingsBetweenSections(control.url);
      const gate = activeGate();
      const outermost = !gate?.holding();
      if (opts.requestsOnly && outermost && found !== undefined && keys.every((k) => settings[k] === found[k])) return fn();
      // With the target to itself: files side by side never see the changed setting.
      // Settings already as asked are not sent again, and only settings that differ at the end
      // are put back (the section still holds the target: no other file's section changes them).
      // Decision (issue 38: through 100 ms a section's drain and its PUT back held every other
      // file out): an outermost section starts from the settings between sections, which the
      // section before it may have left in place (gate.ts handOver): it puts what differs from
      // those with its own in one PUT, and at its end puts back every key that differs from them,
      // or hands the target over in turn.
      const open = async () => {
        const now = await control.currentSettings();
        const base = (outermost ? settingsBetweenSections(control.url) : undefined) ?? now;
        if (outermost) sectionFound(control.url, base);
        const want: Partial<Settings> = { ...base, ...settings };
        const put = (Object.keys(want) as Array<keyof Settings>).filter((k) => want[k] !== now[k]);
        if (put.length > 0) await control.putSettings(pick(want, put));
        return async () => {
          const after = await control.currentSettings();
          const back = (Object.keys(base) as Array<keyof Settings>).filter((k) => after[k] !== base[k]);
          if (back.length === 0) return;
          if (outermost && settingsBetweenSections(control.url) === base && gate?.handOver()) return;
          await control.putSettings(pick(base, back));
        };
      };
      if (gate === undefined || !outermost) {
        const close = await open();
        try {
          return await fn();
        } finally {
          await close();
        }
      }
      // A fn that only sends requests shares its section with the calls that ask the same settings
      // (same keys, same values): gate.ts `joinable`.
      const key = opts.requestsOnly ? JSON.stringify(keys.map((k) => [k, settings[k]])) : undefined;
      return gate.joinable(key, open, fn, { takesOver: true });
    },
  };
  return session;
}

/** The values of `keys` in `from`. */
function pick(from: Partial<Settings>, keys: ReadonlyArray<keyof Settings>): Partial<Settings> {
  return Object.fromEntries(keys.map((k) => [k, from[k]])) as Partial<Settings>;
}
