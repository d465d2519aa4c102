import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { registerCredentials, registerSecret } from '../../core/redact.ts';

export interface RunConfig {
  /** base URL, e.g. http://127.0.0.1:8080 (API at {target}/index.php/api/v6) */
  target: string;
  user: string;
  password: string;
  hmac?: { publicKey: string; privateKey: string };
  control?: { url: string; token: string };
  runId: string;
  seed: number;
  /** How many cases property tests generate (checkProperty); default standard. */
  depth?: Depth;
  /**
   * Requests a test may have in flight at once where they are independent of each other (the
   * sweeps of refusals with API access off or in Maintenance Mode); 1: one after another.
   * Default DEFAULT_CONCURRENCY.
   */
  concurrency?: number;
  readOnly: boolean;
  /** deadline of each whole request (headers and body), ms */
  timeoutMs: number;
  /** cap on the bytes read from one response (default DEFAULT_MAX_RESPONSE_BYTES of client.ts) */
  maxResponseBytes?: number;
  /** how to trust an https target whose certificate no public CA signed */
  tls?: { ca?: string; insecure?: boolean };
  /** --only / --skip: clause IDs or areas */
  selection?: { only?: string[]; skip?: string[] };
}

/** Decision: 8 requests in flight hide most of a distant installation's latency and stay far below any rate limit. */
export const DEFAULT_CONCURRENCY = 8;

/** The requests a test may have in flight at once where they are independent. */
export function inFlight(config: Pick<RunConfig, 'concurrency'>): number {
  return config.concurrency ?? DEFAULT_CONCURRENCY;
}

export const DEPTHS = ['quick', 'standard', 'deep'] as const;
export type Depth = (typeof DEPTHS)[number];

export function isDepth(value: string): value is Depth {
  return (DEPTHS as readonly string[]).includes(value);
}

/** Decision: quick is a fifth of the standard cases (at least one), deep four times; examples always run. */
export const DEPTH_FACTOR: Record<Depth, number> = { quick: 0.2, standard: 1, deep: 4 };

declare module 'vitest' {
  export interface ProvidedContext {
    pmv6: RunConfig;
    /** Set by the runner (suites/runner/run-suites.ts), which reads each file's findings from its meta. */
    pmv6Runner?: boolean;
  }
}

export function registerRunSecrets(cfg: RunConfig): void {
  registerCredentials(cfg.user, cfg.password, 'password');
  if (cfg.hmac) registerSecret(cfg.hmac.privateKey, 'hmac private key');
  if (cfg.control) registerSecret(cfg.control.token, 'control token');
}

export function getRunConfig(): RunConfig {
  const cfg = inject('pmv6');
  if (!cfg || typeof cfg.target !== 'string') {
    throw new Error("pmv6 run configuration missing: the global setup must provide('pmv6', RunConfig)");
  }
  registerRunSecrets(cfg);
  return cfg;
}

/** A run's id: the prefix of every object it creates (pmv6-<run>-…). */
export function newRunId(): string {
  return randomBytes(3).toString('hex');
}

export function randomSeed(): number {
  return randomBytes(4).readUInt32BE(0) & 0x7fffffff;
}
