import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiClient } from '../../suites/harness/client.ts';
import { type KitAccount, makeAccount } from '../kill-matrix.ts';
import { type ClientKit, createClientKit } from '../kit.ts';

// pmv6's own harness client (suites/harness/client.ts) as the server suites use it by default:
// every request it builds by itself must pass the client clauses. (The suites' deliberate bad
// requests, made by overriding those defaults, are the subject of the README's probe section.)

const TOKEN = randomBytes(16).toString('hex');
let kit: ClientKit;
let base: string;
let account: KitAccount;

beforeAll(async () => {
  kit = await createClientKit({ adminPassword: randomBytes(12).toString('base64url'), controlToken: TOKEN });
  base = await kit.listen({ port: 0 });
  account = await makeAccount(base, TOKEN);
}, 30_000);

afterAll(async () => {
  await kit.close();
});

async function workload(client: ApiClient): Promise<number[]> {
  const statuses: number[] = [];
  const call = async (r: Parameters<ApiClient['request']>[0]) => {
    const ex = await client.request(r);
    statuses.push(ex.response?.status ?? 0);
    return ex;
  };
  await call({ method: 'GET', path: '/version.json' });
  const project = (await call({ method: 'POST', path: '/projects.json', json: { name: `pmv6-harness-${randomBytes(3).toString('hex')}` } })).json as {
    id: number;
  };
  const ids: number[] = [];
  for (let i = 0; i < 6; i++) {
    ids.push(
      (
        (await call({ method: 'POST', path: '/passwords.json', json: { name: `pmv6 harness ü ${i}`, project_id: project.id, password: 's3cret!' } })).json as {
          id: number;
        }
      ).id,
    );
  }
  await call({ method: 'GET', path: `/projects/${project.id}/passwords/count.json`, headers: { 'X-Page-Size': '5' } });
  const first = await call({ method: 'GET', path: `/projects/${project.id}/passwords.json`, headers: { 'X-Page-Size': '5' } });
  const next = /<([^>]+)>; rel="next"/.exec(String(first.response?.headers.link))?.[1];
  if (next) await call({ method: 'GET', path: '', url: next, headers: { 'X-Page-Size': '5' } });
  await call({ method: 'GET', path: `/passwords/search/${encodeURIComponent('pmv6 harness')}.json` });
  await call({ method: 'PUT', path: `/passwords/${ids[0]}.json`, json: { notes: 'n' } });
  for (const id of ids) await call({ method: 'DELETE', path: `/passwords/${id}.json` });
  await call({ method: 'DELETE', path: `/projects/${project.id}.json` });
  return statuses;
}

describe("pmv6's harness client with its defaults", () => {
  test.each(['basic', 'hmac'] as const)('%s: every request succeeds and raises no client finding', async (kind) => {
    const auth =
      kind === 'basic'
        ? { kind, user: account.basic.user, password: account.basic.password }
        : { kind, publicKey: account.hmac.publicKey, privateKey: account.hmac.privateKey };
    const client = new ApiClient({ target: base, auth });
    const statuses = await workload(client);
    expect(
      statuses.every((s) => s >= 200 && s < 300),
      statuses.join(' '),
    ).toBe(true);
    expect(statuses.length).toBe(20);
    const own = kit.snapshot().clients.filter((c) => c.credentials.startsWith(kind));
    expect(own.length).toBe(1);
    expect(own[0]!.requests).toBe(statuses.length);
    expect(own[0]!.findings).toEqual({});
    expect(own[0]!.checked['CLI-06']).toBe(1);
    if (kind === 'hmac') expect(own[0]!.checked['CLI-07']).toBe(statuses.length);
  });
});
