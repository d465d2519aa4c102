import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type ClientKit, createClientKit } from '../kit.ts';

const PASSWORD = randomBytes(12).toString('base64url');
let kit: ClientKit;
let base: string;

beforeAll(async () => {
  kit = await createClientKit({ adminPassword: PASSWORD, controlToken: randomBytes(16).toString('hex') });
  base = await kit.listen({ port: 0 });
});

afterAll(async () => {
  await kit.close();
});

const get = (headers: Record<string, string>) =>
  fetch(`${base}/index.php/api/v6/version.json`, {
    headers: { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`, 'user-agent': 'probe-test', ...headers },
    signal: AbortSignal.timeout(10_000),
  });

test('a request marked X-Pmv6-Probe is checked and counted apart, never as a finding; the same mistake unmarked is one', async () => {
  expect((await get({ 'x-pmv6-probe': 'our 415 test' })).status).toBe(415);
  let [client] = kit.snapshot().clients;
  expect(client).toMatchObject({ requests: 1, probes: 1, findings: {}, probeFindings: { 'CLI-01': 1 }, examples: [] });
  expect(client!.checked).toEqual({});
  expect((await get({})).status).toBe(415);
  [client] = kit.snapshot().clients;
  expect(client).toMatchObject({ requests: 2, probes: 1, findings: { 'CLI-01': 1 }, probeFindings: { 'CLI-01': 1 } });
});

test('a readiness probe (GET / or the API root, no credentials, no body) is no request under the rules: no finding, no client', async () => {
  kit.reset();
  for (const path of ['/', '/index.php/api/v6/', '/index.php/api/v6']) {
    const r = await fetch(`${base}${path}`, { headers: { 'user-agent': 'curl/8' }, signal: AbortSignal.timeout(10_000) });
    await r.arrayBuffer();
  }
  expect(kit.snapshot()).toMatchObject({ requests: 0, clients: [] });
  // The same path with credentials, or another method, is a client's request and is checked.
  const auth = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
  await (await fetch(`${base}/`, { headers: { authorization: auth, 'user-agent': 'curl/8' }, signal: AbortSignal.timeout(10_000) })).arrayBuffer();
  await (await fetch(`${base}/`, { method: 'DELETE', headers: { 'user-agent': 'curl/8' }, signal: AbortSignal.timeout(10_000) })).arrayBuffer();
  const { requests, clients } = kit.snapshot();
  expect(requests).toBe(2);
  for (const c of clients) expect(Object.keys(c.findings)).toEqual(expect.arrayContaining(['CLI-03', 'CLI-04']));
});
