// Real k6, for the tests and bench:load: where the binary is, and one bounded run of a script.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The k6 v0.48.0 build kept beside the repository (its README tells how it was built). */
export const SHARED_K6 = join(REPO_ROOT, '..', 'shared', 'tools', 'k6', 'k6');
/** k6's exit code when a threshold failed. */
export const K6_THRESHOLDS_FAILED = 99;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** K6_BINARY, else ../shared/tools/k6/k6 beside the repository, else `k6` on PATH. */
export function findK6(env: NodeJS.ProcessEnv = process.env): { path: string; from: string } | undefined {
  const given = env['K6_BINARY'];
  if (given) return executable(given) ? { path: given, from: 'K6_BINARY' } : undefined;
  if (executable(SHARED_K6)) return { path: SHARED_K6, from: '../shared/tools/k6' };
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir && executable(join(dir, 'k6'))) return { path: join(dir, 'k6'), from: 'PATH' };
  }
  return undefined;
}

export interface K6Run {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

const OUTPUT_CAP = 256 * 1024;

/**
 * `k6 run` of one script. The PMV6_* settings go through the environment (k6 copies it into
 * __ENV), so no credential is on a command line. No usage report, no REST API port. The run is
 * killed at `timeoutMs`; each output stream keeps its last 256 KiB.
 */
export function runK6(
  k6: string,
  script: string,
  opts: { env: Record<string, string>; args?: string[]; timeoutMs: number; prefix?: string[] },
): Promise<K6Run> {
  const argv = [...(opts.prefix ?? []), k6, 'run', '--no-usage-report', '--address', '', '--no-color', '--quiet', ...(opts.args ?? []), script];
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: REPO_ROOT,
      env: { ...process.env, ...opts.env, K6_NO_USAGE_REPORT: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const keep = (acc: string, d: Buffer) => (acc + d.toString('utf8')).slice(-OUTPUT_CAP);
    child.stdout.on('data', (d: Buffer) => (stdout = keep(stdout, d)));
    child.stderr.on('data', (d: Buffer) => (stderr = keep(stderr, d)));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}
