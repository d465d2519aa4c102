/**
 * The client kill matrix: the conforming test client and each faulty variant run the same
 * workload against one kit, each under its own User-Agent (so the kit tells them apart). A
 * variant is killed when the kit flags its own clause (for an HMAC variant: with a diagnosis that
 * names its mistake); the conforming client must raise no finding at all.
 */
import { randomBytes } from 'node:crypto';
import { type ClientKit, createClientKit } from './kit.ts';
import type { ClientRecord, KitSnapshot } from './ledger.ts';
import { type ClientAuth, type ClientFault, TestClient } from './test-client/client.ts';
import { CLIENT_VARIANTS, type ClientVariant } from './test-client/variants.ts';
import { runWorkload } from './test-client/workload.ts';

export const CONFORMING_AGENT = 'pmv6-test-client/conforming';
export const agentOf = (fault: ClientFault) => `pmv6-test-client/${fault}`;

export interface MatrixRow {
  variant: ClientVariant;
  killed: boolean;
  /** Every clause the kit flagged for this variant. */
  flagged: string[];
  /** HMAC variants: the mistakes the diagnosis named. */
  mistakes: string[];
}

export interface ClientMatrix {
  rows: MatrixRow[];
  conforming: { findings: Record<string, number>; errors: string[]; listed: number };
  killed: number;
  total: number;
  snapshot: KitSnapshot;
}

export interface KitAccount {
  basic: ClientAuth & { kind: 'basic' };
  hmac: ClientAuth & { kind: 'hmac' };
}

/** An admin account with HMAC keys, made through the control protocol as a client's tests would. */
export async function makeAccount(base: string, token: string): Promise<KitAccount> {
  const user = `client-kit-${randomBytes(4).toString('hex')}`;
  const password = randomBytes(12).toString('base64url');
  const res = await fetch(`${base}/__control/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ username: user, password, role: 'admin', api_only: false, active: true }),
    signal: AbortSignal.timeout(10_000),
  });
  if (res.status !== 201) throw new Error(`control POST /users answered ${res.status}`);
  const keys = (await res.json()) as { public_key: string; private_key: string };
  return { basic: { kind: 'basic', user, password }, hmac: { kind: 'hmac', publicKey: keys.public_key, privateKey: keys.private_key } };
}

function recordOf(snapshot: KitSnapshot, agent: string): ClientRecord[] {
  return snapshot.clients.filter((c) => c.userAgent === agent);
}

export async function runClientMatrix(opts: { kit?: ClientKit; base?: string; token?: string } = {}): Promise<ClientMatrix> {
  const token = opts.token ?? randomBytes(16).toString('hex');
  const own = opts.kit === undefined;
  const kit = opts.kit ?? (await createClientKit({ adminPassword: randomBytes(12).toString('base64url'), controlToken: token }));
  const base = opts.base ?? (await kit.listen({ port: 0 }));
  try {
    const account = await makeAccount(base, token);
    const conforming = new TestClient({ base, auth: account.hmac, userAgent: CONFORMING_AGENT });
    const basicConforming = new TestClient({ base, auth: account.basic, userAgent: CONFORMING_AGENT });
    const runs = [runWorkload(conforming, 'conforming-hmac'), runWorkload(basicConforming, 'conforming-basic')];
    const results = await Promise.all(runs);
    await Promise.all([conforming.close(), basicConforming.close()]);
    for (const v of CLIENT_VARIANTS) {
      const client = new TestClient({ base, auth: v.auth === 'hmac' ? account.hmac : account.basic, userAgent: agentOf(v.fault), fault: v.fault });
      await runWorkload(client, v.fault);
      await client.close();
    }
    const snapshot = kit.snapshot();
    const rows = CLIENT_VARIANTS.map((variant): MatrixRow => {
      const records = recordOf(snapshot, agentOf(variant.fault));
      const flagged = [...new Set(records.flatMap((r) => Object.keys(r.findings)))].sort();
      const mistakes = [...new Set(records.flatMap((r) => r.examples.flatMap((e) => e.hmac?.mistakes ?? [])))].sort();
      const own = flagged.includes(variant.clause) && (variant.mistake === undefined || mistakes.includes(variant.mistake));
      return { variant, killed: own, flagged, mistakes };
    });
    const findings: Record<string, number> = {};
    for (const r of recordOf(snapshot, CONFORMING_AGENT)) for (const [k, n] of Object.entries(r.findings)) findings[k] = (findings[k] ?? 0) + n;
    return {
      rows,
      conforming: { findings, errors: results.flatMap((r) => r.errors), listed: Math.min(...results.map((r) => r.listed)) },
      killed: rows.filter((r) => r.killed).length,
      total: rows.length,
      snapshot,
    };
  } finally {
    if (own) await kit.close();
  }
}

export function matrixText(m: ClientMatrix): string {
  const lines = [`${'variant'.padEnd(26)}${'clause'.padEnd(8)}${'killed'.padEnd(8)}flagged`];
  for (const r of m.rows) {
    lines.push(
      `${r.variant.fault.padEnd(26)}${r.variant.clause.padEnd(8)}${(r.killed ? 'yes' : 'NO').padEnd(8)}${r.flagged.join(' ') || '-'}${r.mistakes.length ? ` (${r.mistakes.join(', ')})` : ''}`,
    );
  }
  const n = Object.values(m.conforming.findings).reduce((a, b) => a + b, 0);
  lines.push(
    '',
    `conforming client: ${n} findings${m.conforming.errors.length ? `, ${m.conforming.errors.length} failed calls: ${m.conforming.errors.join('; ')}` : ''}`,
  );
  lines.push(`killed ${m.killed}/${m.total} (${((100 * m.killed) / m.total).toFixed(0)}%)`);
  return `${lines.join('\n')}\n`;
}
