import { request } from 'undici';
import { registerSecret } from '../core/redact.ts';
import { basicAuthorization } from '../core/signers.ts';
import { formatDateTime } from '../fixtures/reference-server/src/context.ts';
import type { ReferenceServer } from '../fixtures/reference-server/src/index.ts';
import { startEmbeddedTarget } from './embedded.ts';
import type { Target } from './target.ts';

export type SeededTarget = Target & { kind: 'seeded'; config: Target['config'] & { hmac: { publicKey: string; privateKey: string } } };

// The reference server on loopback over plain http (no TLS cost in the numbers), seeded in bulk
// through its store with `passwords` passwords in one project, with HMAC keys for the admin.
export async function startSeededTarget(opts: { passwords?: number; mutate?: (server: ReferenceServer) => void } = {}): Promise<SeededTarget> {
  let server: ReferenceServer | undefined;
  const embedded = await startEmbeddedTarget(
    { timeoutMs: 30_000 },
    {
      http: true,
      mutate: (s) => {
        server = s;
        opts.mutate?.(s);
      },
    },
  );
  try {
    const { config } = embedded;
    if (!server || !config.control) throw new Error('embedded server did not start');
    const headers = { authorization: basicAuthorization(config.user, config.password), 'content-type': 'application/json; charset=utf-8' };
    const created = await request(`${config.target}/index.php/api/v6/projects.json`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'pmv6-load-seed', parent_id: 0 }),
    });
    const project = (await created.body.json()) as { id: number };
    if (created.statusCode !== 201) throw new Error(`creating the seed project answered ${created.statusCode}`);
    const count = opts.passwords ?? 5_000;
    if (count > 0) server.store.passwords.seed(project.id, count, server.adminId, formatDateTime(Date.now()), () => null, 'pmv6-load-seed-');
    const keys = await request(`${config.control.url}/users/${server.adminId}/api_keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${config.control.token}`, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ issued_days_ago: 0 }),
    });
    const k = (await keys.body.json()) as { public_key: string; private_key: string };
    if (keys.statusCode !== 201) throw new Error(`issuing HMAC keys answered ${keys.statusCode}`);
    registerSecret(k.private_key, 'HMAC private key');
    return {
      kind: 'seeded',
      label: `embedded reference server, ${count} passwords`,
      config: { ...config, hmac: { publicKey: k.public_key, privateKey: k.private_key } },
      version: undefined,
      close: () => embedded.close(),
    };
  } catch (e) {
    await embedded.close();
    throw e;
  }
}
