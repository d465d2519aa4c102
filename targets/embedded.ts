import { randomBytes } from 'node:crypto';
import { registerSecret } from '../core/redact.ts';
import { createReferenceServer, type ReferenceServer } from '../fixtures/reference-server/src/index.ts';
import { newRunId, type RunConfig, randomSeed } from '../suites/harness/config.ts';
import type { Target } from './target.ts';
import { type Certificate, selfSignedCertificate } from './tls.ts';

export type EmbeddedTarget = Target & { kind: 'embedded' };

// The default target: the reference server in this process, on an ephemeral loopback port,
// in memory, over https with a throwaway certificate (plain http where openssl is missing), with
// the control protocol on and secrets generated for this run only.
// `mutate` adds hooks to the server before it listens (the mutants of fixtures/mutants/ do).
export async function startEmbeddedTarget(
  base: Partial<RunConfig> = {},
  options: { mutate?: (server: ReferenceServer) => void; http?: boolean } = {},
): Promise<EmbeddedTarget> {
  const password = randomBytes(18).toString('base64url');
  const token = randomBytes(24).toString('base64url');
  registerSecret(password, 'admin password');
  registerSecret(token, 'control token');
  const certificate = options.http ? undefined : cachedCertificate();
  const server = await createReferenceServer({
    adminUser: 'admin',
    adminPassword: password,
    controlToken: token,
    passwordCost: EMBEDDED_PASSWORD_COST,
    ...(certificate ? { tls: certificate } : {}),
  });
  options.mutate?.(server);
  const target = await server.listen({ host: '127.0.0.1', port: 0 });
  const config: RunConfig = {
    runId: base.runId ?? newRunId(),
    seed: base.seed ?? randomSeed(),
    readOnly: base.readOnly ?? false,
    timeoutMs: base.timeoutMs ?? 10_000,
    ...base,
    target,
    user: 'admin',
    password,
    control: { url: `${target}/__control`, token },
    ...(certificate ? { tls: { ca: certificate.cert } } : {}),
  };
  return { kind: 'embedded', label: 'embedded reference server', config, version: undefined, close: () => server.close() };
}

/**
 * Decision: the embedded server lives in memory for one run, and every password on it is made
 * for that run and forgotten after. At the server's default scrypt cost (N 16384, about 36 ms a
 * hash here) a full run spent 6.4 s of its 11 s waiting for 179 hashes (users made, first sign-ins,
 * wrong passwords); at N 1024 a hash takes a sixteenth of that. No clause depends on the cost;
 * `pmv6 serve`, whose database persists, keeps the default.
 */
const EMBEDDED_PASSWORD_COST = 1024;

let certificate: Certificate | undefined | null = null;

function cachedCertificate(): Certificate | undefined {
  if (certificate === null) certificate = selfSignedCertificate();
  return certificate;
}
