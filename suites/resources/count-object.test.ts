import { expectSchema, expectStatus, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();

const FIELDS = ['num_items', 'num_pages', 'num_items_per_page'] as const;

clauseTest('RES-11', 'return num_items, num_pages and num_items_per_page as integers, with and without X-Page-Size', async () => {
  for (const headers of [{}, { 'X-Page-Size': '7' }, { 'X-Page-Size': '1000' }] as Array<Record<string, string>>) {
    const ex = await s.admin.get('/passwords/count.json', { headers });
    expectStatus(ex, 200);
    expectSchema(ex, 'count');
    // JSON.parse hides "7.0" and "7e0"; the integers must be written as integers.
    for (const field of FIELDS) {
      const raw = new RegExp(`"${field}"\\s*:\\s*(-?[0-9][0-9.eE+-]*)`).exec(ex.response?.body ?? '')?.[1];
      if (raw !== undefined && !/^-?[0-9]+$/.test(raw)) violation(ex, `${field} written as an integer`, `${field}: ${raw}`);
    }
  }
});
