import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CLIENT_CLAUSES } from '../../suites/catalogue/client-clauses.ts';
import { type ClientMatrix, runClientMatrix } from '../kill-matrix.ts';
import { CLIENT_VARIANTS } from '../test-client/variants.ts';

let m: ClientMatrix;
beforeAll(async () => {
  m = await runClientMatrix();
}, 60_000);
afterAll(() => undefined);

describe('client kill matrix', () => {
  test('kills 100% of the faulty variants', () => {
    expect(m.rows.filter((r) => !r.killed).map((r) => r.variant.fault)).toEqual([]);
    expect(m.killed).toBe(m.total);
    expect(m.total).toBe(CLIENT_VARIANTS.length);
  });

  test.each(CLIENT_VARIANTS.map((v) => [v.fault, v.clause, v.mistake ?? ''] as const))(
    '%s is flagged by its own clause %s and nothing else',
    (fault, clause, mistake) => {
      const row = m.rows.find((r) => r.variant.fault === fault)!;
      expect(row.flagged).toEqual([clause]);
      if (mistake) expect(row.mistakes).toEqual([mistake]);
    },
  );

  test('the conforming client (Basic and HMAC) raises no finding and its workload succeeds', () => {
    expect(m.conforming.findings).toEqual({});
    expect(m.conforming.errors).toEqual([]);
    expect(m.conforming.listed).toBe(7);
  });

  test('the conforming client exercised every client clause', () => {
    const conforming = m.snapshot.clients.filter((c) => c.userAgent === 'pmv6-test-client/conforming');
    expect(conforming.map((c) => c.credentials.split(' ')[0]).sort()).toEqual(['basic', 'hmac']);
    const checked = new Set(conforming.flatMap((c) => Object.keys(c.checked)));
    expect([...checked].sort()).toEqual(CLIENT_CLAUSES.map((c) => c.id).sort());
  });

  test('every client clause has a variant', () => {
    expect(new Set(CLIENT_VARIANTS.map((v) => v.clause))).toEqual(new Set(CLIENT_CLAUSES.filter((c) => !c.retired).map((c) => c.id)));
  });
});
