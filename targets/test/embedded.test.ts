// The embedded target's server runs in a worker thread of its own (targets/embedded.ts,
// serverThread): told by the thread each request is handled on, never by timing. Node's http
// server publishes `http.server.request.start` on the thread that handles the request; a
// subscriber here sees the requests of a server in this thread only.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Agent, request } from 'undici';
import { afterAll, afterEach, describe, expect, test, vi } from 'vitest';
import { main } from '../../bin/cli/main.ts';
import { basicAuthorization } from '../../core/signers.ts';
import { onExchange } from '../../suites/harness/traffic.ts';
import { type EmbeddedTarget, startEmbeddedTarget, startServerThread } from '../embedded.ts';

let handledHere = 0;
const seen = () => handledHere++;
subscribe('http.server.request.start', seen);
afterEach(() => {
  handledHere = 0;
});
afterAll(() => unsubscribe('http.server.request.start', seen));

/** `n` authenticated GETs of version.json, each answered 200. */
async function ask(target: EmbeddedTarget, n: number): Promise<void> {
  const { config } = target;
  const dispatcher = new Agent({ connect: config.tls?.ca ? { ca: config.tls.ca } : {} });
  try {
    for (let i = 0; i < n; i++) {
      const r = await request(`${config.target}/index.php/api/v6/version.json`, {
        headers: { authorization: basicAuthorization(config.user, config.password), 'content-type': 'application/json; charset=utf-8' },
        dispatcher,
        signal: AbortSignal.timeout(10_000),
      });
      await r.body.dump();
      expect(r.statusCode).toBe(200);
    }
  } finally {
    await dispatcher.close();
  }
}

describe('the embedded target', () => {
  test('serves from a thread of its own: none of its requests is handled on this thread', async () => {
    const threaded = await startEmbeddedTarget();
    try {
      await ask(threaded, 3);
      expect(handledHere).toBe(0);
    } finally {
      await threaded.close();
    }
    // The same observation sees a server in this thread (with hooks, or asked to run here).
    const here = await startEmbeddedTarget({}, { runs: 'here' });
    try {
      await ask(here, 3);
      expect(handledHere).toBe(3);
    } finally {
      await here.close();
    }
  });

  test('closed, its port refuses connections; closed twice is closed', async () => {
    const t = await startEmbeddedTarget({}, { http: true });
    await ask(t, 1);
    await t.close();
    await t.close();
    await expect(request(`${t.config.target}/index.php/api/v6/version.json`, { signal: AbortSignal.timeout(5_000) })).rejects.toThrow(/ECONNREFUSED/);
  });

  test("the server's maximum upload file size is 1 MiB (EMBEDDED_MAX_UPLOAD), in its thread and here", async () => {
    for (const runs of ['thread', 'here'] as const) {
      const t = await startEmbeddedTarget({}, { runs, http: true });
      try {
        const r = await request(`${t.config.target}/index.php/api/v6/files/max_upload_file_size.json`, {
          headers: { authorization: basicAuthorization(t.config.user, t.config.password), 'content-type': 'application/json; charset=utf-8' },
          signal: AbortSignal.timeout(10_000),
        });
        expect(await r.body.json()).toEqual({ max_upload_file_size_bytes: 1048576, max_upload_file_size_text: '1Mb' });
      } finally {
        await t.close();
      }
    }
  });

  test('a server that cannot start is a clear error, redacted, and its thread ends', async () => {
    const password = 'thread-secret-Zq81x';
    const { registerSecret } = await import('../../core/redact.ts');
    registerSecret(password, 'test password');
    const started = Date.now();
    // A key that is no key: the server's TLS context cannot be made.
    const failure = await startServerThread({
      adminPassword: password,
      controlToken: 'x'.repeat(24),
      passwordCost: 1024,
      tls: { key: `not a key ${password}`, cert: 'not a certificate' },
    }).then(
      () => undefined,
      (e: Error) => e.message,
    );
    expect(failure).toMatch(/^the embedded reference server did not start: /);
    expect(failure).not.toContain(password);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  test('pmv6 run with no target: the run passes and the server handles none of its requests on the run thread', async () => {
    let sent = 0;
    const stop = onExchange(() => {
      sent++;
    });
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    let code: number;
    try {
      code = await main(['run', '--only', 'VER-01', '--quiet']);
    } finally {
      out.mockRestore();
      err.mockRestore();
      stop();
    }
    expect(code).toBe(0);
    expect(sent).toBeGreaterThan(0);
    expect(handledHere).toBe(0);
  }, 60_000);
});
