import { registerSecret } from '../core/redact.ts';
import { preflightSignIn } from './preflight.ts';
import type { BaseConfig, Target } from './target.ts';

export interface UrlTargetOptions {
  target: string;
  user: string;
  password: string;
  hmac?: { publicKey: string; privateKey: string } | undefined;
  control?: { url: string; token: string } | undefined;
  /** how the work after the preflight signs in (a load of an HMAC scenario: HMAC) */
  signIn?: 'basic' | 'hmac';
  /** sign every request with HMAC when the target refuses Basic and accepts the keys (pmv6 run) */
  orHmac?: boolean;
}

// An installation given by --target: its secrets are registered for redaction before the first
// request, and the preflight decides whether it can be tested at all.
export async function urlTarget(base: BaseConfig, options: UrlTargetOptions): Promise<Target> {
  registerSecret(options.password, 'password');
  if (options.hmac) registerSecret(options.hmac.privateKey, 'HMAC private key');
  if (options.control) registerSecret(options.control.token, 'control token');
  const config = {
    ...base,
    target: options.target,
    user: options.user,
    password: options.password,
    ...(options.hmac ? { hmac: options.hmac } : {}),
    ...(options.control ? { control: options.control } : {}),
  };
  const { version, signIn } = await preflightSignIn({
    ...config,
    ...(options.signIn ? { signIn: options.signIn } : {}),
    ...(options.orHmac ? { orHmac: true } : {}),
  });
  return { kind: 'url', label: '', config: { ...config, ...(signIn === 'hmac' ? { signIn } : {}) }, version, close: async () => {} };
}
