import { registerSecret } from '../core/redact.ts';
import { preflight } from './preflight.ts';
import type { BaseConfig, Target } from './target.ts';

export interface UrlTargetOptions {
  target: string;
  user: string;
  password: string;
  hmac?: { publicKey: string; privateKey: string } | undefined;
  control?: { url: string; token: string } | undefined;
  /** how the work after the preflight signs in (a load of an HMAC scenario: HMAC) */
  signIn?: 'basic' | 'hmac';
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
  const version = await preflight({ ...config, ...(options.signIn ? { signIn: options.signIn } : {}) });
  return { kind: 'url', label: '', config, version, close: async () => {} };
}
