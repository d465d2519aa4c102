import { TargetError, UsageError } from '../../core/errors.ts';
import { registerSecret, scrub } from '../../core/redact.ts';
import { forTerminal } from '../../reporters/terminal.ts';
import type { RunConfig } from '../../suites/harness/config.ts';
import { newRunId } from '../../suites/harness/config.ts';
import { blame, stateDir } from '../../suites/harness/journal/journal.ts';
import { intOption, parse, TARGET_OPTIONS, urlOption } from './args.ts';
import { tlsTrust } from './run.ts';

const HELP = `pmv6 cleanup: remove what earlier pmv6 runs left on a target

Reads the journals earlier runs wrote in the state folder (--state-dir, else PMV6_STATE_DIR,
else $XDG_STATE_HOME/pmv6, else ~/.local/state/pmv6): first puts back the settings the oldest
unfinished run recorded before it changed any (control protocol), then deletes every object a
journal names that reads back with its name, and every object any list shows under a run's name
(pmv6-<run>-) that reads back so, children before parents; then reads every list again and prints
what it removed and what is left (kind, id, name). A run still running on this machine is left alone.

Options (the same credentials as pmv6 run; secrets better in the environment):
  --target URL            base URL of the installation           (required)
  --user U / --password P admin credentials                     (env PMV6_USER, PMV6_PASSWORD)
  --hmac-public K / --hmac-private K
                          the admin's HMAC keys, used when the target allows HMAC only
                                                                 (env PMV6_HMAC_PUBLIC, PMV6_HMAC_PRIVATE)
  --control URL           control protocol base, to put settings back
  --control-token T       control protocol bearer token          (env PMV6_CONTROL_TOKEN)
  --ca FILE / --insecure  TLS trust of an https target
  --timeout MS            deadline of each request (default 10000)
  --state-dir DIR         where the journals are (see above)

Exit codes: 0 nothing of earlier runs left and their settings as before (read back), 1 something
is left or a setting is not put back (named), 2 usage error or a target that cannot be reached,
3 a list could not be read (what it holds is unknown).`;

const OPTIONS = {
  ...TARGET_OPTIONS,
  ca: { type: 'string' },
  insecure: { type: 'boolean', default: false },
  timeout: { type: 'string' },
  'state-dir': { type: 'string' },
} as const;

export async function cleanup(argv: string[]): Promise<number> {
  const { values } = parse(argv, OPTIONS);
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const env = process.env;
  const target = urlOption('target', values.target);
  if (!target) throw new UsageError('--target is required: the installation to clean up');
  const control = urlOption('control', values.control);
  const user = values.user ?? env.PMV6_USER;
  const password = values.password ?? env.PMV6_PASSWORD;
  const token = values['control-token'] ?? env.PMV6_CONTROL_TOKEN;
  const hmacPublic = values['hmac-public'] ?? env.PMV6_HMAC_PUBLIC;
  const hmacPrivate = values['hmac-private'] ?? env.PMV6_HMAC_PRIVATE;
  for (const [v, label] of [
    [password, 'password'],
    [token, 'control token'],
    [hmacPrivate, 'HMAC private key'],
  ] as const)
    if (v) registerSecret(v, label);
  if (!user || !password) throw new UsageError('--target needs the admin credentials: --user and --password (or PMV6_USER and PMV6_PASSWORD)');
  if (Boolean(hmacPublic) !== Boolean(hmacPrivate)) throw new UsageError('give both --hmac-public and --hmac-private, or neither');
  if (control && !token) throw new UsageError('--control needs --control-token (or PMV6_CONTROL_TOKEN)');
  const timeoutMs = intOption('timeout', values.timeout, 100, 600_000) ?? 10_000;
  const tls = await tlsTrust(values.ca, values.insecure, target);
  const dir = stateDir(values['state-dir']);
  const config: RunConfig = {
    target,
    user,
    password,
    ...(hmacPublic && hmacPrivate ? { hmac: { publicKey: hmacPublic, privateKey: hmacPrivate } } : {}),
    ...(control && token ? { control: { url: control, token } } : {}),
    runId: newRunId(),
    seed: 0,
    readOnly: false,
    timeoutMs,
    ...(tls ? { tls } : {}),
  };
  const out = (s: string) => process.stdout.write(forTerminal(scrub(s)));
  // Loaded once the flags are checked: --help and a refused flag load no API client.
  const { removalText, removeObjects, restoreJournalSettings } = await import('../../suites/runner/leftovers.ts');
  const { preflightSignIn } = await import('../../targets/preflight.ts');
  // Settings first: with the API off or Basic refused nothing else could be deleted.
  const settings = await restoreJournalSettings(config, dir);
  try {
    // An installation that allows HMAC only is cleaned up over HMAC.
    if ((await preflightSignIn({ ...config, orHmac: true })).signIn === 'hmac') config.signIn = 'hmac';
  } catch (e) {
    if (!(e instanceof TargetError)) throw e;
    const who = blame(dir, target);
    process.stderr.write(`pmv6 cleanup: ${forTerminal(scrub(e.message))}${who ? `\npmv6 cleanup: ${forTerminal(scrub(who))}` : ''}\n`);
    if (settings.restored.length > 0 || settings.unrestored?.length || settings.error)
      out(removalText({ settings, swept: { deleted: [], leftovers: [], unknown: [] }, notOurs: [], journals: [] }));
    return 2;
  }
  const result = await removeObjects(config, dir, settings);
  out(removalText(result));
  if (result.swept.leftovers.length > 0 || settings.unrestored?.length || settings.error) return 1;
  if (result.swept.unknown.length > 0 || result.notOurs.some((n) => n.reason.startsWith('no answer'))) return 3;
  return 0;
}
