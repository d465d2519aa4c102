// What the operator tests share: the operator's segment arguments, a free loopback port, and its
// starter (wait for every runner's REST API, then resume each).
import { type ChildProcess, execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { type SeededTarget, startSeededTarget } from '../../targets/seeded.ts';
import { K6 } from './k6-support.ts';

const run = promisify(execFile);

/** `--execution-segment` and `--execution-segment-sequence` of runner `index` (1-based) of `total`, as the operator writes them. */
export function segmentArgs(index: number, total: number): string[] {
  const bound = (i: number) => (i === 0 ? '0' : i === total ? '1' : `${i}/${total}`);
  const sequence = Array.from({ length: total + 1 }, (_, i) => bound(i)).join(',');
  return [`--execution-segment=${bound(index - 1)}:${bound(index)}`, `--execution-segment-sequence=${sequence}`];
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The starter waits for every runner's REST API, then resumes each. */
export async function resumeAll<R extends { index: number; address: string }>(
  runners: R[],
  deadlineMs: number,
  log: (r: R) => string,
  resume: (address: string) => Promise<unknown> = (address) => run(K6!.path, ['resume', '--address', address], { timeout: 10_000 }),
): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (const r of runners) {
    for (;;) {
      if (Date.now() > until) throw new Error(`runner ${r.index} never answered on ${r.address}\n${log(r)}`);
      try {
        const res = await fetch(`http://${r.address}/v1/status`, { signal: AbortSignal.timeout(1000) });
        await res.body?.cancel();
        if (res.ok) break;
      } catch {
        // not listening yet
      }
      await new Promise((ok) => setTimeout(ok, 100));
    }
  }
  for (const r of runners) await resume(r.address);
}

/**
 * The runner pod's command for a LocalFile script, as the operator builds it: `sh -c` with its
 * check that the file exists, then `k6 run --quiet <segments> <arguments> <script> --address …
 * --paused --tag instance_id=N --tag testrun_name=…` (the address on loopback here).
 */
export function runnerCommand(o: { k6: string; index: number; total: number; script: string; argLine: string; port: number; testrun: string }): string {
  const k6 = [
    o.k6,
    'run',
    '--quiet',
    ...segmentArgs(o.index, o.total),
    o.argLine,
    o.script,
    `--address=127.0.0.1:${o.port}`,
    '--paused',
    '--tag',
    `instance_id=${o.index}`,
    '--tag',
    `testrun_name=${o.testrun}`,
  ].join(' ');
  return `if [ ! -f ${o.script} ]; then echo "LocalFile not found exiting..."; exit 1; fi;\n${k6}`;
}

/** The starter's own call: PATCH /v1/status with paused false. */
export async function patchResume(address: string): Promise<void> {
  const res = await fetch(`http://${address}/v1/status`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ data: { type: 'status', id: 'default', attributes: { paused: false, stopped: false } } }),
    signal: AbortSignal.timeout(10_000),
  });
  await res.body?.cancel();
  if (!res.ok) throw new Error(`PATCH http://${address}/v1/status answered ${res.status}`);
}

/** Stops a runner started with `detached: true`: its shell and the k6 it started. */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** A seeded reference server of 50 passwords that counts the requests it answered since it started (the seeding is not counted). */
export async function countingTarget(): Promise<{ target: SeededTarget; received: () => number }> {
  let received = 0;
  const target = await startSeededTarget({
    passwords: 50,
    mutate: (server) =>
      server.app.addHook('onResponse', (_req, _reply, done) => {
        received++;
        done();
      }),
  });
  received = 0;
  return { target, received: () => received };
}
