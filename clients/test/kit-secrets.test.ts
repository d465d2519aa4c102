import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { clearSecrets } from '../../core/redact.ts';
import { clientVerdictText } from '../../reporters/clients/console.ts';
import { clientResultsDocument } from '../../reporters/clients/results.ts';
import { writeClientReports } from '../../reporters/clients/write.ts';
import { type KitAccount, makeAccount } from '../kill-matrix.ts';
import { type ClientKit, createClientKit } from '../kit.ts';

// Secrets the kit issued itself (a user's HMAC private key, its password, the control token) and
// credentials a client puts in a query string never reach an output of the kit, whatever the
// client does with them.
const TOKEN = randomBytes(16).toString('hex');
const QUERY_PASSWORD = `q-${randomBytes(9).toString('base64url')}`;
const QUERY_KEY = randomBytes(8).toString('hex');
let kit: ClientKit;
let base: string;
let account: KitAccount;
let texts: string[];
let results: string;

const send = (path: string, headers: Record<string, string>) =>
  fetch(`${base}${path}`, { headers: { 'user-agent': 'leaky/1.0', ...headers }, signal: AbortSignal.timeout(10_000) }).then((r) => r.arrayBuffer());

beforeAll(async () => {
  // Nothing registered by anyone but the kit.
  clearSecrets();
  kit = await createClientKit({ adminPassword: randomBytes(12).toString('base64url'), controlToken: TOKEN });
  base = await kit.listen({ port: 0 });
  account = await makeAccount(base, TOKEN);
  const basic = `Basic ${Buffer.from(`${account.basic.user}:${account.basic.password}`).toString('base64')}`;
  const key = account.hmac.privateKey;
  const spaced = [...Buffer.from(key)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  // No Content-Type, no .json: findings, so each request is shown with its exchange and curl line.
  await send(`/index.php/api/v6/projects/${key}`, { authorization: basic, 'x-my-key': key });
  await send(`/index.php/api/v6/passwords/search/${encodeURIComponent(account.basic.password)}`, { authorization: basic, 'x-debug': spaced });
  await send(`/index.php/api/v6/version.json?password=${encodeURIComponent(QUERY_PASSWORD)}&api_key=${QUERY_KEY}&page=2`, { authorization: basic });
  await send(`/index.php/api/v6/version?token=${TOKEN}`, { authorization: `Bearer ${TOKEN}` });
  const doc = clientResultsDocument(kit.snapshot(), { pmv6Version: '0.1.0', url: base, hmacWindowSeconds: 300, strict: false });
  const dir = await mkdtemp(join(tmpdir(), 'pmv6-kit-secrets-'));
  const files = await writeClientReports(dir, doc);
  texts = [clientVerdictText(doc), ...(await Promise.all(files.map((f) => readFile(f, 'utf8'))))];
  results = texts[files.findIndex((f) => f.endsWith('results.json')) + 1]!;
}, 60_000);

afterAll(async () => {
  await kit.close();
});

const forms = (s: string) => [
  s,
  encodeURIComponent(s),
  Buffer.from(s).toString('hex'),
  [...Buffer.from(s)].map((b) => b.toString(16).padStart(2, '0')).join(' '),
  s.slice(0, Math.ceil(s.length / 2)),
];

test('the HMAC private key of a user the kit created, sent in a path and in headers under Basic, is never shown', () => {
  expect(texts[0]).toMatch(/leaky\/1\.0/);
  for (const text of texts) for (const form of forms(account.hmac.privateKey)) expect(text.includes(form), form).toBe(false);
  expect(results).toContain('«redacted:HMAC private key»');
});

test("the user's password and the kit's control token are never shown", () => {
  for (const text of texts) for (const s of [account.basic.password, TOKEN]) for (const form of forms(s)) expect(text.includes(form), form).toBe(false);
});

test('a credential-named query value is hidden in every recorded request URL, registered or not', () => {
  for (const text of texts) for (const s of [QUERY_PASSWORD, QUERY_KEY]) for (const form of forms(s)) expect(text.includes(form), form).toBe(false);
  expect(results).toMatch(/version\.json\?password=«redacted[^»]*»&api_key=«redacted[^»]*»&page=2/);
});
