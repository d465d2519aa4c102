// Shared by the tests that run real k6: where k6 is (or why the test cannot run), the PMV6_*
// environment of a script, its summary file, and a log of what the server received.
import { readFileSync } from 'node:fs';
import type { ReferenceServer } from '../../fixtures/reference-server/src/index.ts';
import type { SeededTarget } from '../../targets/seeded.ts';
import { findK6 } from '../engine/k6.ts';

export const CI = /^(1|true|yes)$/i.test(process.env['CI'] ?? '');
export const K6 = findK6();
export const NO_K6 = process.env['K6_BINARY']
  ? `K6_BINARY=${process.env['K6_BINARY']} is not an executable file`
  : 'no k6 binary: set K6_BINARY, put k6 on PATH, or place the build at ../shared/tools/k6/k6 beside the repository';

/** The script's settings; the credentials go through the environment, never the command line. */
export function k6Env(target: SeededTarget, summaryFile: string, extra: Record<string, string> = {}): Record<string, string> {
  const c = target.config;
  return {
    PMV6_TARGET: c.target,
    PMV6_USER: c.user,
    PMV6_PASSWORD: c.password,
    PMV6_HMAC_PUBLIC: c.hmac?.publicKey ?? '',
    PMV6_HMAC_PRIVATE: c.hmac?.privateKey ?? '',
    PMV6_SUMMARY: summaryFile,
    ...extra,
  };
}

/** The parts of k6's handleSummary data the tests read. */
export interface K6Summary {
  scenario: string;
  metrics: Record<string, { values: Record<string, number>; thresholds?: Record<string, { ok: boolean }> }>;
  root_group: { checks: Array<{ name: string; passes: number; fails: number }> };
}

export function readSummary(file: string): K6Summary {
  return JSON.parse(readFileSync(file, 'utf8')) as K6Summary;
}

export function checksByName(s: K6Summary): Record<string, { passes: number; fails: number }> {
  const out: Record<string, { passes: number; fails: number }> = {};
  for (const c of s.root_group.checks) out[c.name] = { passes: c.passes, fails: c.fails };
  return out;
}

/** Every threshold k6 evaluated, as `metric expr` → held. */
export function thresholdsOf(s: K6Summary): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const [metric, m] of Object.entries(s.metrics)) for (const [expr, t] of Object.entries(m.thresholds ?? {})) out[`${metric} ${expr}`] = t.ok;
  return out;
}

/**
 * One line per request the server answered: method, path, page size, how it was authenticated,
 * content type, the JSON body (run tags and passwords replaced), and the status. The server
 * checks the Basic credentials and the HMAC signature itself: a bad one is a 401 in the log.
 */
export function recordRequests(server: ReferenceServer, log: string[]): void {
  server.app.addHook('onResponse', (req, reply, done) => {
    const h = req.headers;
    const auth =
      typeof h['x-request-hash'] === 'string' &&
      typeof h['x-request-timestamp'] === 'string' &&
      typeof h['x-public-key'] === 'string' &&
      h['authorization'] === undefined
        ? 'hmac'
        : /^Basic /.test(String(h['authorization'] ?? ''))
          ? 'basic'
          : 'none';
    let body = '';
    if (Buffer.isBuffer(req.body) && req.body.length > 0) {
      body = req.body
        .toString('utf8')
        .replace(/pmv6-load-[a-z0-9]+-/g, 'pmv6-load-RUN-')
        .replace(/("password"\s*:\s*)"[^"]*"/g, '$1"…"');
    }
    // The run's tag is in the names it creates and in the sweep's search for them.
    const url = req.url.replace(/pmv6-load-[a-z0-9]+-/g, 'pmv6-load-RUN-');
    log.push(`${req.method} ${url} page-size=${h['x-page-size'] ?? '-'} auth=${auth} type=${h['content-type'] ?? '-'} ${body} → ${reply.statusCode}`);
    done();
  });
}
