import { TargetError } from '../core/errors.ts';
import { ApiClient } from '../suites/harness/client.ts';
import type { RunConfig } from '../suites/harness/config.ts';
import { ControlClient } from '../suites/harness/control.ts';

export type PreflightConfig = Pick<RunConfig, 'target' | 'user' | 'password' | 'hmac' | 'timeoutMs' | 'maxResponseBytes' | 'tls' | 'control'> & {
  /** How the work after the preflight signs in: the preflight signs in the same way (default Basic). */
  signIn?: 'basic' | 'hmac';
  /**
   * The work can sign every request with HMAC (pmv6 run, pmv6 cleanup): when Basic is refused and
   * the HMAC keys are accepted, the preflight passes and answers signIn 'hmac'.
   */
  orHmac?: boolean;
};

/** What the preflight read, and how the work after it signs in. */
export interface Preflight {
  version: unknown;
  signIn: 'basic' | 'hmac';
}

// Before any suite runs (and before any load), one authenticated GET of version.json tells a
// dead, wrong or locked target apart from a server that violates the spec: each case is one
// clear line and exit 2.
//
// An installation may allow one method only (spec: "both HTTP Basic and HMAC, HTTP Basic only, or
// HMAC only"). The preflight signs in the way the work after it does; when that is refused and the
// other method's credentials are given, it asks with those too, so that the line names the method
// the installation refused and the one it accepts.
export async function preflight(config: PreflightConfig): Promise<unknown> {
  return (await preflightSignIn(config)).version;
}

/** The preflight, and how the work after it signs in (HMAC when Basic is refused and `orHmac`). */
export async function preflightSignIn(config: PreflightConfig): Promise<Preflight> {
  const api = `${config.target}/index.php/api/v6/`;
  const signIn = config.signIn ?? 'basic';
  if (signIn === 'hmac' && !config.hmac) throw new TargetError('signing in with HMAC needs --hmac-public and --hmac-private');
  const basic = { kind: 'basic' as const, user: config.user, password: config.password };
  const hmac = config.hmac ? { kind: 'hmac' as const, publicKey: config.hmac.publicKey, privateKey: config.hmac.privateKey } : undefined;
  const client = new ApiClient({
    target: config.target,
    auth: signIn === 'hmac' && hmac ? hmac : basic,
    timeoutMs: config.timeoutMs,
    ...(config.maxResponseBytes ? { maxResponseBytes: config.maxResponseBytes } : {}),
    ...(config.tls ? { tls: config.tls } : {}),
  });
  try {
    let ex = await client.get('/version.json');
    let signedIn = signIn;
    if (!ex.response) {
      const error = ex.error ?? 'no response';
      // The whole-request deadline and the byte cap name the request and their flag themselves.
      if (/^(request timed out after|the response to )/.test(error)) throw new TargetError(error);
      const hint = /CERT|certificate|SSL|TLS/i.test(error) ? ' (trust it with --ca FILE, or --insecure)' : '';
      throw new TargetError(`cannot reach ${config.target}: ${error}${hint}`);
    }
    let { status } = ex.response;
    if (status === 401) {
      const other = signIn === 'hmac' ? basic : hmac;
      const retried = other ? await client.withAuth(other).get('/version.json') : undefined;
      const accepted = retried?.response?.status === 200;
      const refused = signIn === 'hmac' ? 'the HMAC keys' : `the credentials of user "${config.user}"`;
      if (accepted && signIn === 'basic' && config.orHmac && retried?.response) {
        // Decision (issue 36): an installation that allows HMAC only is tested over HMAC.
        ex = retried;
        status = 200;
        signedIn = 'hmac';
      } else if (accepted)
        throw new TargetError(
          signIn === 'hmac'
            ? `the target refused the HMAC keys (401 on GET ${api}version.json) and accepted HTTP Basic for user "${config.user}": it allows HTTP Basic only, or the keys are wrong`
            : `the target refused HTTP Basic for user "${config.user}" (401 on GET ${api}version.json) and accepted the HMAC keys: it allows HMAC only, and this command signs in with HTTP Basic; allow both methods`,
        );
      else
        throw new TargetError(
          `the target rejected ${refused} (401 on GET ${api}version.json)${
            signIn === 'basic' && config.orHmac && !hmac
              ? "; if it allows HMAC only, give the Admin's HMAC keys (PMV6_HMAC_PUBLIC and PMV6_HMAC_PRIVATE, or --hmac-public and --hmac-private): every request is then signed with HMAC"
              : ''
          }`,
        );
    }
    const message = typeof (ex.json as { message?: unknown } | undefined)?.message === 'string' ? (ex.json as { message: string }).message : '';
    if (status === 503)
      throw new TargetError(`the target is in maintenance mode (503 on GET ${api}version.json${message ? `: ${message}` : ''}); turn it off before a run`);
    if (status === 403 && /disabled/i.test(message)) throw new TargetError(`API access is disabled on the target (403: ${message}); enable it before a run`);
    if (status !== 200 || ex.json === undefined) {
      throw new TargetError(`no v6 API at ${api} (GET version.json answered ${status}${ex.json === undefined ? ', not JSON' : ''}); check the base URL`);
    }
    if (config.control) {
      const control = new ControlClient({
        url: config.control.url,
        token: config.control.token,
        timeoutMs: config.timeoutMs,
        ...(config.maxResponseBytes ? { maxResponseBytes: config.maxResponseBytes } : {}),
        ...(config.tls ? { tls: config.tls } : {}),
      });
      let methods: string | undefined;
      try {
        methods = (await control.getSettings()).auth_methods;
      } catch (e) {
        throw new TargetError(`the control protocol at ${config.control.url} did not answer as expected: ${(e as Error).message.split('\n')[0]}`);
      } finally {
        await control.close();
      }
      // With the settings at hand, a refused password on a target that allows Basic is no HMAC-only installation.
      if (signedIn === 'hmac' && signIn === 'basic' && methods !== 'hmac')
        throw new TargetError(
          `the target refused HTTP Basic for user "${config.user}" (401 on GET ${api}version.json) though its settings allow it (auth_methods "${methods}"): check the password`,
        );
    }
    return { version: ex.json, signIn: signedIn };
  } finally {
    await client.close();
  }
}
