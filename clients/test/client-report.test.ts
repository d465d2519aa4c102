import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { clientVerdictText } from '../../reporters/clients/console.ts';
import { renderClientHtml } from '../../reporters/clients/html.ts';
import { renderClientJunit } from '../../reporters/clients/junit.ts';
import { type ClientResultsDocument, clientResultsDocument, clientResultsErrors } from '../../reporters/clients/results.ts';
import { writeClientReports } from '../../reporters/clients/write.ts';
import { type KitAccount, makeAccount } from '../kill-matrix.ts';
import { type ClientKit, createClientKit } from '../kit.ts';
import type { KitSnapshot } from '../ledger.ts';
import { type ClientFault, TestClient } from '../test-client/client.ts';

const TOKEN = randomBytes(16).toString('hex');
const BODY_SECRET = `body-secret-${randomBytes(6).toString('hex')}`;
let kit: ClientKit;
let base: string;
let account: KitAccount;
let snapshot: KitSnapshot;
let doc: ClientResultsDocument;

const make = (snap: KitSnapshot, strict = false) => clientResultsDocument(snap, { pmv6Version: '0.1.0', url: base, hmacWindowSeconds: 300, strict });

async function send(agent: string, auth: 'basic' | 'hmac', fault: ClientFault | undefined, fn: (c: TestClient) => Promise<unknown>) {
  const c = new TestClient({ base, auth: auth === 'basic' ? account.basic : account.hmac, userAgent: agent, ...(fault ? { fault } : {}) });
  try {
    await fn(c).catch(() => undefined);
  } finally {
    await c.close();
  }
}

beforeAll(async () => {
  kit = await createClientKit({ adminPassword: randomBytes(12).toString('base64url'), controlToken: TOKEN });
  base = await kit.listen({ port: 0 });
  account = await makeAccount(base, TOKEN);
  await send('good/1.0', 'basic', undefined, (c) => c.version());
  await send('good/1.0', 'hmac', undefined, (c) => c.version());
  await send('bad/1.0', 'basic', 'no-content-type', (c) => c.create('projects', { name: 'x', password: BODY_SECRET }));
  await send('bad/1.0', 'basic', 'body-not-json', (c) => c.create('passwords', { name: 'x', project_id: 1, password: BODY_SECRET }));
  await send('signer/1.0', 'hmac', 'hmac-leading-slash', (c) => c.version());
  snapshot = kit.snapshot();
  doc = make(snapshot);
}, 60_000);

afterAll(async () => {
  await kit.close();
});

const secrets = () => [
  account.basic.password,
  account.hmac.privateKey,
  BODY_SECRET,
  Buffer.from(`${account.basic.user}:${account.basic.password}`).toString('base64'),
];

// biome-ignore lint/suspicious/noExplicitAny: the tests break a JSON document at any depth
type Loose = any;

describe('client report', () => {
  test('groups clients by User-Agent and credentials', () => {
    expect(doc.clients.map((c) => `${c.userAgent} ${c.credentials.split(' ')[0]}`)).toEqual([
      'good/1.0 basic',
      'good/1.0 hmac',
      'bad/1.0 basic',
      'signer/1.0 hmac',
    ]);
    expect(doc.clients.find((c) => c.userAgent === 'good/1.0')?.outcome).toBe('pass');
  });

  test('the verdict: a MUST finding fails the run (exit 1); clauses carry their counts', () => {
    expect(doc.verdict).toMatchObject({ label: 'NOT CONFORMANT', exitCode: 1 });
    expect(doc.clauses.find((c) => c.id === 'CLI-01')).toMatchObject({ outcome: 'fail', findings: 1 });
    expect(doc.clauses.find((c) => c.id === 'CLI-09')).toMatchObject({ outcome: 'fail', findings: 1 });
    expect(doc.clauses.find((c) => c.id === 'CLI-07')).toMatchObject({ outcome: 'warn', level: 'INFO' });
  });

  test('an INFO finding alone warns (exit 0); nothing received, or a fault of the kit, is inconclusive (exit 3)', () => {
    const infoOnly = { ...snapshot, clients: snapshot.clients.filter((c) => c.userAgent !== 'bad/1.0') };
    expect(make(infoOnly).verdict).toMatchObject({ label: 'CONFORMANT', exitCode: 0 });
    expect(make({ ...snapshot, requests: 0, clients: [] }).verdict).toMatchObject({ label: 'INCONCLUSIVE', exitCode: 3 });
    expect(make({ ...infoOnly, kitErrors: ['boom'] }).verdict).toMatchObject({ label: 'INCONCLUSIVE', exitCode: 3 });
  });

  test('each finding carries the redacted request, the diagnosis and a curl line', () => {
    const bad = doc.clients.find((c) => c.userAgent === 'bad/1.0')!;
    const ct = bad.findings.find((f) => f.clause === 'CLI-01')!;
    expect(ct.exchange.request.headers.authorization).toBe('Basic «redacted»');
    expect(ct.curl).toMatch(/^curl .* -u "\$PMV6_USER:\$PMV6_PASSWORD"/);
    // The reply as the client got it: its status, headers and body, not an empty placeholder.
    expect(ct.exchange.response?.status).toBe(ct.status);
    expect(ct.exchange.response?.headers['content-type']).toMatch(/json/);
    expect(ct.exchange.response?.body.length).toBeGreaterThan(0);
    expect(() => JSON.parse(ct.exchange.response!.body)).not.toThrow();
    const signer = doc.clients.find((c) => c.userAgent === 'signer/1.0')!.findings[0]!;
    expect(signer).toMatchObject({ clause: 'CLI-07', hmac: { verdict: 'mistakes', mistakes: ['leading-slash'] } });
    expect(signer.exchange.request.headers['x-request-hash']).toBe('«redacted»');
    expect(signer.curl).toContain('$PMV6_HMAC_HASH');
  });

  test('results.json validates against its schema, which rejects what it must', () => {
    expect(clientResultsErrors(JSON.parse(JSON.stringify(doc)))).toEqual([]);
    const bad = (f: (d: Record<string, Loose>) => void) => {
      const d = JSON.parse(JSON.stringify(doc)) as Record<string, Loose>;
      f(d);
      return clientResultsErrors(d).join('\n');
    };
    expect(bad((d) => delete d.verdict)).toMatch(/verdict/);
    expect(bad((d) => (d.extra = 1))).toMatch(/additional properties/);
    expect(bad((d) => (d.clauses[0].outcome = 'passed'))).toMatch(/clauses\/0\/outcome/);
    expect(bad((d) => (d.clients[2].findings[0].exchange.request.headers.authorization = 'Basic dXNlcjpwYXNz'))).toMatch(/authorization/);
    expect(bad((d) => (d.format = 'pmv6-results/1'))).toMatch(/format/);
  });

  test('no secret reaches any of the four outputs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pmv6-client-report-'));
    const files = await writeClientReports(dir, doc);
    const texts = [clientVerdictText(doc), ...(await Promise.all(files.map((f) => readFile(f, 'utf8'))))];
    for (const text of texts) for (const s of secrets()) expect(text.includes(s), s.slice(0, 6)).toBe(false);
    expect(texts[1]).toContain('«redacted»');
  });

  test('junit.xml: one testsuite per client, a MUST finding is a failure, valid against reporters/schema/junit.xsd', async () => {
    const xml = renderClientJunit(doc);
    expect(xml.match(/<testsuite /g)).toHaveLength(4);
    expect(xml).toMatch(/<failure message="expected Content-Type: application\/json; charset=utf-8[^"]*" type="MUST">/);
    expect(xml).toMatch(/warn \(INFO, does not fail the run\)/);
    const dir = await mkdtemp(join(tmpdir(), 'pmv6-client-junit-'));
    const file = join(dir, 'junit.xml');
    await (await import('node:fs/promises')).writeFile(file, xml);
    const xsd = fileURLToPath(new URL('../../reporters/schema/junit.xsd', import.meta.url));
    const r = spawnSync('xmllint', ['--noout', '--schema', xsd, file], { encoding: 'utf8', timeout: 20_000 });
    if (r.error) return; // xmllint not installed (Debian: libxml2-utils): the schema check cannot run here
    expect(r.stderr).toContain('validates');
    expect(r.status).toBe(0);
  });

  test("report.html is one self-contained page with a matrix and each client's findings", () => {
    const html = renderClientHtml(doc);
    expect(html).toContain('Content-Security-Policy');
    expect(html).not.toContain('<script');
    expect(html).toContain('bad/1.0');
    expect(html).toContain('no Content-Type header');
  });

  test('the console names the failed clause, the request and the curl line', () => {
    const text = clientVerdictText(doc);
    expect(text).toMatch(/FAIL \[CLI-01\] MUST send Content-Type/);
    expect(text).toMatch(/reproduce: curl /);
    expect(text.trim().split('\n').at(-1)).toMatch(/^verdict: NOT CONFORMANT: 3 findings from 5 requests of 4 clients/);
  });
});
