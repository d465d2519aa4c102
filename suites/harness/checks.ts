import { type Exchange, headerValue } from '../../core/exchange.ts';
import { expectResponse, notJson, SetupError, violation } from './assert.ts';
import { type ControlClient, changeable, type Settings } from './control.ts';
import { exclusive } from './gate.ts';
import type { Session } from './session.ts';

/** §7 "API access disabled in settings | 403 Forbidden | message "API access is disabled"". */
// Decision (catalogue, ERR-01): the product's UI string ends in a period, so one is accepted.
export const API_DISABLED = /^API access is disabled\.?$/;

/** §4 rule 5 "gives 404 Not Found with the message "The page number is too high"". */
export const PAGE_TOO_HIGH = 'The page number is too high';

/** §7 "Installation in Maintenance Mode (all requests) | 503 Service Unavailable". */
export const MAINTENANCE_MESSAGE = 'This installation is in Maintenance Mode.';

export function isSuccess(ex: Exchange): boolean {
  const status = ex.response?.status ?? 0;
  return status >= 200 && status < 300;
}

export function expectSuccess(ex: Exchange, what = 'a 2XX status'): void {
  expectResponse(ex, what);
  if (!isSuccess(ex)) violation(ex, what, `status ${ex.response.status}`);
}

/** §1 "All request and response bodies are JSON": a body that is present parses as JSON. */
export function expectJsonBody(ex: Exchange): void {
  expectResponse(ex, 'a JSON body');
  if (ex.response.body.trim() !== '' && ex.json === undefined) violation(ex, 'a JSON body', notJson(ex));
}

/** The charset a Content-Type declares, if any, without quotes. */
export function declaredCharset(contentType: string | undefined): string | undefined {
  return contentType
    ?.split(';')
    .slice(1)
    .map((p) => p.trim())
    .find((p) => /^charset=/i.test(p))
    ?.slice('charset='.length)
    .replace(/^"|"$/g, '');
}

/** §1 "… in UTF-8": the bytes decode as UTF-8 and a declared charset, if any, is UTF-8. */
export function expectUtf8Body(ex: Exchange): void {
  expectResponse(ex, 'a body in UTF-8');
  if (ex.response.validUtf8 === false) violation(ex, 'a body in UTF-8', 'bytes that are not valid UTF-8');
  const contentType = headerValue(ex.response.headers, 'content-type');
  const charset = declaredCharset(contentType);
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) violation(ex, 'charset UTF-8 when a charset is declared', `Content-Type: ${contentType}`);
}

/** True when a string value anywhere in the JSON equals `wanted`. */
export function containsString(json: unknown, wanted: string): boolean {
  if (typeof json === 'string') return json === wanted;
  if (Array.isArray(json)) return json.some((v) => containsString(v, wanted));
  if (json !== null && typeof json === 'object') return Object.values(json).some((v) => containsString(v, wanted));
  return false;
}

export function requireControl(s: Session): ControlClient {
  if (!s.control) throw new SetupError('this check needs the control protocol');
  return s.control;
}

/**
 * Runs fn, then puts back every setting as it was before and drops pending faults: the control
 * protocol's reset is the only way to drop them, so it runs first (unless none can be pending)
 * and the snapshot is restored after it. For checks that reset the settings or inject faults.
 * `faultsOnly`: fn changes no setting (it injects faults and sends requests), so the snapshot is
 * read side by side with it.
 */
export function withSettingsSnapshot<T>(s: Session, fn: (control: ControlClient) => Promise<T>, opts: { faultsOnly?: true } = {}): Promise<T> {
  const control = requireControl(s);
  changeable('POST /reset');
  // With the target to itself (suites/harness/gate.ts): a fault or a reset is the section's alone.
  // The file's creations still pending are read back before it opens, under the settings they
  // were made under, and beside the other files (issue 38: inside, it was a delay with the
  // target held), as Session.withSettings does.
  return s.fixtures.settle().then(() =>
    exclusive(async () => {
      // As the control protocol last showed them (settings change only in sections, through these
      // clients): one request less in a section that holds the target.
      const snapshot: Promise<Settings> = control.currentSettings();
      // Awaited after the reset when fn runs beside it: a failed read still leaves no fault behind.
      snapshot.catch(() => {});
      if (!opts.faultsOnly) await snapshot;
      try {
        return await fn(control);
      } finally {
        // Decision (issue 38: a section holds the target): the reset is skipped when fn's own reset
        // came after its last fault; the snapshot, every setting, is put back all the same.
        if (control.mayHoldFaults()) await control.reset();
        await control.putSettings(await snapshot);
      }
    }),
  );
}
