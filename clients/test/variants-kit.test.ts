// The client-kit half of issue 25: the kit's server makes the lawful choices of each variant set
// (fixtures/variants/, variantSets) and the project's test client (clients/test-client/) runs
// its workload against it. The client clauses judge only what the client sends, so no choice of
// the server may raise a finding against the conforming client, and its workload must succeed;
// each faulty client is still caught by its own clause on the varied server.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { VARIANTS } from '../../fixtures/variants/index.ts';
import { variantSets } from '../../suites/runner/variant-matrix.ts';
import { runClientMatrix } from '../kill-matrix.ts';
import { createClientKit } from '../kit.ts';
import { WORKLOAD_PASSWORDS } from '../test-client/workload.ts';

const sets = variantSets(VARIANTS);

describe('the client kit on every lawful variant', () => {
  it.each(sets.map((set, i) => [i + 1, set.map((v) => v.id).join('+'), set] as const))(
    'set %i (%s): the conforming test client raises no finding and its workload succeeds; every faulty one is caught',
    async (_i, _ids, set) => {
      const token = randomBytes(16).toString('hex');
      const kit = await createClientKit({ adminPassword: randomBytes(12).toString('base64url'), controlToken: token });
      try {
        for (const v of set) v.apply(kit.server);
        const base = await kit.listen({ port: 0 });
        const m = await runClientMatrix({ kit, base, token });
        expect(m.conforming.findings).toEqual({});
        expect(m.conforming.errors).toEqual([]);
        expect(m.conforming.listed).toBe(WORKLOAD_PASSWORDS);
        expect(m.rows.filter((r) => !r.killed).map((r) => `${r.variant.fault}: flagged ${r.flagged.join(',') || 'nothing'}`)).toEqual([]);
      } finally {
        await kit.close();
      }
    },
    60_000,
  );
});
