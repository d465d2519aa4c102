import type { RunConfig } from '../suites/harness/config.ts';

/**
 * A server that `pmv6 run` or `pmv6 load` works against. Every kind gives the same things: the
 * configuration the harness and the load engine need (URL, credentials, control protocol, TLS
 * trust), what its preflight read, and how to let it go. Acquiring a target that cannot be used
 * (unreachable, not a v6 API, credentials refused) throws a TargetError (core/errors.ts): exit 2.
 *
 * - embedded (targets/embedded.ts): the reference server made for this run, in a worker thread
 *   of this process (in the calling thread when hooks are added);
 * - url (targets/url.ts): an installation given by --target, checked by the preflight;
 * - container (targets/container.ts): an image started for this run, then checked the same way;
 * - seeded (targets/seeded.ts): the embedded server filled with data for a load;
 * - field (targets/field.ts): the embedded server as installations are in the field: populated,
 *   busy with other users, slow, with a short keep-alive (benchmarks and tests).
 */
export interface Target {
  kind: 'embedded' | 'url' | 'container' | 'seeded' | 'field';
  /** how the CLI names it after its URL, e.g. "embedded reference server" ("" for a URL) */
  label: string;
  config: RunConfig;
  /** the version.json answer the preflight read; undefined for a server pmv6 made itself */
  version: unknown;
  /** stops what pmv6 started (server, container); nothing for a URL */
  close(): Promise<void>;
}

/** What a run's configuration holds apart from the target itself. */
export type BaseConfig = Omit<RunConfig, 'target' | 'user' | 'password' | 'hmac' | 'control'>;
