// The embedded reference server's own thread (targets/embedded.ts, startEmbeddedTarget): it makes
// the server the parent describes, listens on an ephemeral loopback port, and closes it when asked.
// Messages: parent → thread `{ type: 'close' }`; thread → parent `{ type: 'listening', url }`,
// `{ type: 'failed', error }` (the server could not start), `{ type: 'closed' }`. It prints
// nothing: the parent reads its stdout and stderr, and says what it says only redacted, with the
// secrets the parent registered (the thread has none of its own: core/redact.ts is per thread).
import { parentPort, workerData } from 'node:worker_threads';
import { createReferenceServer, type ReferenceServer } from '../fixtures/reference-server/src/index.ts';

/** What the thread's server is made of (the parent generates the secrets and the certificate). */
export interface ThreadSpec {
  adminPassword: string;
  controlToken: string;
  passwordCost: number;
  maxUploadFileSizeBytes?: number;
  tls?: { key: string; cert: string };
}

if (!parentPort) throw new Error('targets/embedded-thread.ts runs as a worker thread (startEmbeddedTarget)');
const port = parentPort;
const spec = workerData as ThreadSpec;
let server: ReferenceServer | undefined;
let closing: Promise<void> | undefined;

const close = (): Promise<void> => {
  closing ??= (async () => {
    await server?.close();
  })();
  return closing;
};

port.on('message', (m: { type: 'close' }) => {
  if (m.type !== 'close') return;
  close().then(
    () => {
      port.postMessage({ type: 'closed' });
      port.close();
    },
    (e: unknown) => {
      // Not closed cleanly: the parent ends the thread (the database is in memory).
      port.postMessage({ type: 'failed', error: e instanceof Error ? e.message : String(e) });
      port.close();
    },
  );
});

try {
  server = await createReferenceServer({
    adminUser: 'admin',
    adminPassword: spec.adminPassword,
    controlToken: spec.controlToken,
    passwordCost: spec.passwordCost,
    ...(spec.maxUploadFileSizeBytes !== undefined ? { maxUploadFileSizeBytes: spec.maxUploadFileSizeBytes } : {}),
    ...(spec.tls ? { tls: spec.tls } : {}),
  });
  const url = await server.listen({ host: '127.0.0.1', port: 0 });
  port.postMessage({ type: 'listening', url });
} catch (e) {
  await server?.close().catch(() => undefined);
  port.postMessage({ type: 'failed', error: e instanceof Error ? e.message : String(e) });
  port.close();
}
