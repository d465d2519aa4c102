// Shared by the tests that run real k6: where k6 is (or why the test cannot run), the PMV6_*
// environment of a script, its summary file, and a log of what the server received.
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import type { ReferenceServer } from '../../fixtures/reference-server/src/index.ts';
import type { SeededTarget } from '../../targets/seeded.ts';
import { findK6, REPO_ROOT } from '../engine/k6.ts';

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

/**
 * Decision (runtime, issue 38): k6 v0.48 puts every ES module of a script through Babel before it
 * runs (its "extended" compatibility mode): about 4.4 s of CPU for a scenario script here, against
 * a few ms for the same code in one CommonJS file in its "base" mode. A test that starts k6 many
 * times on the same scenarios runs them bundled: esbuild inlines the script's imports (lib/,
 * core/signed-uri.js) into one file, the same code, under `dir`/k6 beside a copy of the
 * scenarios (the scripts open `../scenarios/<name>.json`). k6-scripts.test.ts runs the scripts as
 * shipped. Pass `args` to runK6 with the script's path.
 */
export function bundledK6Scripts(dir: string): { script(name: string): string; args: string[] } {
  mkdirSync(join(dir, 'k6'), { recursive: true });
  cpSync(join(REPO_ROOT, 'load', 'scenarios'), join(dir, 'scenarios'), { recursive: true });
  const built = new Map<string, string>();
  return {
    script(name) {
      let out = built.get(name);
      if (out === undefined) {
        out = join(dir, 'k6', `${name}.js`);
        buildSync({
          entryPoints: [join(REPO_ROOT, 'load', 'k6', `${name}.js`)],
          bundle: true,
          format: 'cjs',
          platform: 'neutral',
          target: 'es2017',
          external: ['k6', 'k6/*'],
          outfile: out,
          logLevel: 'error',
        });
        built.set(name, out);
      }
      return out;
    },
    args: ['--compatibility-mode=base'],
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
