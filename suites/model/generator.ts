/**
 * "return a strong random password made with the current generator settings" (§1, Passwords
 * generator), at the product's `GET generate_password.json` (product facts §6), with the settings
 * changed through the control protocol: once for the file, after its sequences, in an exclusive
 * section (the settings are the installation's), two settings in turn, each asked of the Admin
 * over HTTP Basic and of the IT user over HMAC. Every answer has the length the settings give and
 * only characters of the classes they enable, and no two answers are the same (OPS-16, issue 35).
 *
 * Decision: only the classes that are on are held to their characters (letters and digits are
 * ASCII's); which symbols a generator uses, and whether it leaves look-alike characters out, is
 * its own (a lawful variant does). The password is the body's `password` (product facts §6) or
 * its only string; a body with neither is not judged.
 */
import type { Exchange } from '../../core/exchange.ts';
import { SetupError } from '../harness/assert.ts';
import { isSuccess } from '../harness/checks.ts';
import type { ApiClient } from '../harness/client.ts';
import { together } from '../harness/in-order.ts';
import type { Session } from '../harness/session.ts';
import { fail, framed } from './model.ts';

interface GeneratorSettings {
  generator_length: number;
  generator_uppercase: boolean;
  generator_lowercase: boolean;
  generator_digits: boolean;
  generator_symbols: boolean;
}

/** Two settings that differ in length and in every class, so answers made with the defaults match neither. */
const SETTINGS: ReadonlyArray<{ settings: GeneratorSettings; chars: RegExp; says: string }> = [
  {
    settings: { generator_length: 23, generator_uppercase: false, generator_lowercase: false, generator_digits: true, generator_symbols: false },
    chars: /^[0-9]+$/,
    says: '23 characters, digits only',
  },
  {
    settings: { generator_length: 9, generator_uppercase: true, generator_lowercase: true, generator_digits: false, generator_symbols: false },
    chars: /^[A-Za-z]+$/,
    says: '9 characters, letters only',
  },
];

export function generatedPassword(ex: Exchange): string | undefined {
  const body = ex.json as Record<string, unknown> | undefined;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  if (typeof body['password'] === 'string') return body['password'];
  const strings = Object.values(body).filter((v): v is string => typeof v === 'string');
  return strings.length === 1 ? strings[0] : undefined;
}

/** Undefined when judged, else why it could not be (no control protocol, settings it does not take). */
export async function judgeGeneratorSettings(s: Session, askers: Array<[ApiClient, string]>): Promise<string | undefined> {
  if (!s.control) return 'changing the generator settings needs the control protocol';
  const seen = new Map<string, string>();
  const [first, ...rest] = SETTINGS;
  try {
    await s.withSettings(first!.settings, async () => {
      for (const setting of [first!, ...rest]) {
        if (setting !== first) await s.control!.putSettings(setting.settings);
        // Decision (issue 38: the section lasts as long as its chain): the asks of one setting side
        // by side (reads that change nothing), judged in the order they were asked.
        const asked = await together(askers.flatMap(([c, who]) => [0, 1].map(async () => [await c.get('/generate_password.json'), who] as const)));
        for (const [ex, who] of asked) {
          framed(ex);
          if (!isSuccess(ex)) continue;
          const pw = generatedPassword(ex);
          if (pw === undefined) continue;
          const { generator_length: length } = setting.settings;
          if ([...pw].length !== length || !setting.chars.test(pw))
            fail(
              'OPS-16',
              ex,
              `a password made with the current generator settings (${setting.says}) for ${who}`,
              `${[...pw].length} characters, of the classes of ${describe(pw)}`,
            );
          const earlier = seen.get(pw);
          if (earlier !== undefined) fail('OPS-16', ex, `a new random password for ${who}`, `the same answer as an earlier call (${earlier})`);
          seen.set(pw, `${who}, ${setting.says}`);
        }
      }
    });
  } catch (e) {
    if (e instanceof SetupError) return `the control protocol did not take the generator settings: ${e.message}`;
    throw e;
  }
  return undefined;
}

/** The classes a password's characters fall in, never the password itself (it may be someone's). */
function describe(pw: string): string {
  const classes = [
    [/[A-Z]/, 'upper case'],
    [/[a-z]/, 'lower case'],
    [/[0-9]/, 'digits'],
    [/[^A-Za-z0-9]/, 'others'],
  ] as const;
  return classes
    .filter(([re]) => re.test(pw))
    .map(([, name]) => name)
    .join(', ');
}
