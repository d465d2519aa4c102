import { randomBytes } from 'node:crypto';
import { registerCredentials, registerSecret } from '../../core/redact.ts';

export interface RunConfig {
  /** base URL, e.g. http://127.0.0.1:8080 (API at {target}/index.php/api/v6) */
  target: string;
  user: string;
  password: string;
  hmac?: { publicKey: string; privateKey: string };
  /**
   * How the run signs in. 'hmac': the preflight found HTTP Basic refused for the Admin and the
   * HMAC keys accepted (an installation that allows HMAC only, spec "HTTP Basic only, or HMAC
   * only"): every request is signed with HMAC, and a check that needs HTTP Basic is
   * skipped-unverifiable with NEEDS_BASIC. Default 'basic'.
   */
  signIn?: 'basic' | 'hmac';
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
  /** cap on the bytes read from one response (default DEFAULT_MAX_RESPONSE_BYTES) */
  maxResponseBytes?: number;
  /** how to trust an https target whose certificate no public CA signed */
  tls?: { ca?: string; insecure?: boolean };
  /** --only / --skip: clause IDs or areas */
  selection?: { only?: string[]; skip?: string[] };
}

/** Why a check that needs HTTP Basic is not made when the run signs in with HMAC only. */
export const NEEDS_BASIC =
  'needs HTTP Basic, which the target refused for the run (it allows HMAC only, or the password is wrong): not checked; the run signs every request with HMAC';

/** The Basic refusal reason of a run that signs in with HMAC only; undefined otherwise. */
export function basicRefused(config: Pick<RunConfig, 'signIn'>): string | undefined {
  return config.signIn === 'hmac' ? NEEDS_BASIC : undefined;
}

/** The bytes the harness client reads of one response at most, unless --max-response-bytes says otherwise. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

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

export function registerRunSecrets(cfg: RunConfig): void {
  registerCredentials(cfg.user, cfg.password, 'password');
  if (cfg.hmac) registerSecret(cfg.hmac.privateKey, 'hmac private key');
  if (cfg.control) registerSecret(cfg.control.token, 'control token');
}

let current: RunConfig | undefined;

/** The runner sets the run's configuration before it imports the suite files (undefined: none). */
export function setRunConfig(cfg: RunConfig | undefined): void {
  if (cfg) registerRunSecrets(cfg);
  current = cfg;
}

/** The configuration of the run in progress, for the suite files and their harness. */
export function getRunConfig(): RunConfig {
  if (!current || typeof current.target !== 'string') {
    throw new Error('pmv6 run configuration missing: the runner sets it (setRunConfig) before it imports the suite files');
  }
  return current;
}

/** A run's id: the prefix of every object it creates (pmv6-<run>-…). */
export function newRunId(): string {
  return randomBytes(3).toString('hex');
}

export function randomSeed(): number {
  return randomBytes(4).readUInt32BE(0) & 0x7fffffff;
}
