/**
 * "update custom fields definitions" (§1, Passwords), at the product's path
 * `PUT passwords/ID/custom_fields.json` (product facts §6; its payload is a gap there): the
 * reference server's documented payload, `{"custom_fieldN": {"type", "label"} | null}` (null
 * removes), sent by the Admin on a password of the sequence and read back at once through the
 * password's show by the Admin and by the viewer, who may read it (OPS-15, issue 35). Decision:
 * only the label is looked for, anywhere in the show (the fields are not shown); a server that
 * refuses this payload (another shape) is not judged.
 */
import fc from 'fast-check';
import { clip } from '../../core/redact.ts';
import { expectResponse } from '../harness/assert.ts';
import { isSuccess } from '../harness/checks.ts';
import { beside, fail, framed, label, type Model, type Pw, pick, type Real, stringsIn, UNLOCK, type Via } from './model.ts';

/** The labels each password's custom fields were last given, by field number (null: removed). */
const defsOf = beside<Pw, Map<number, string | null>>(() => new Map());

async function judgeDefinitions(r: Real, actor: 'admin' | 'viewer', via: Via, p: Pw, gone: string[]): Promise<void> {
  const ex = await r.clients[actor][via].get(`/passwords/${p.id}.json`, p.locked ? { headers: UNLOCK } : {});
  expectResponse(ex, `an answer to GET /passwords/${p.id}.json`);
  framed(ex);
  if (ex.response.status !== 200) return;
  const strings = stringsIn(ex.json);
  const who = `the ${actor} over ${via}`;
  for (const [n, l] of defsOf(p)) {
    if (l !== null && !strings.includes(l))
      fail(
        'OPS-15',
        ex,
        `custom field ${n} labelled ${l} (its last 2XX update) in the show of ${label(p)} for ${who}`,
        clip(JSON.stringify(ex.json), 300) ?? 'no body',
      );
  }
  for (const l of gone)
    if (strings.includes(l)) fail('OPS-15', ex, `no custom field labelled ${l} in the show of ${label(p)} for ${who}: removed with a 2XX just before`, 'shown');
}

/**
 * Field 1 given a new label (its earlier one gone), and field 2 removed when it has one, else
 * defined: two updates, each read back at once. Decision (the request budget and the kill of a
 * fault at every seed): both in one command.
 */
export class CustomFields implements fc.AsyncCommand<Model, Real, false> {
  constructor(
    readonly via: Via,
    readonly back: number,
  ) {}
  check = (m: Readonly<Model>) => pick(m as Model, this.back) !== undefined;
  async run(m: Model, r: Real): Promise<void> {
    const p = pick(m, this.back)!;
    const defs = defsOf(p);
    for (const field of [1, 2]) {
      const before = defs.get(field);
      const next = field === 2 && typeof before === 'string' ? null : `cf${field}-${p.marker}-${r.counter.n++}`;
      const ex = await r.clients.admin[this.via].put(
        `/passwords/${p.id}/custom_fields.json`,
        { [`custom_field${field}`]: next === null ? null : { type: 'text', label: next } },
        { headers: UNLOCK },
      );
      framed(ex);
      if (!isSuccess(ex)) return;
      // A write like any other: the log holds it (model.ts judgeLog).
      p.writes++;
      defs.set(field, next);
      const gone = typeof before === 'string' ? [before] : [];
      await judgeDefinitions(r, 'admin', this.via, p, gone);
      // The viewer reads the run's two projects; a password whose state changed is not judged for it (model.ts).
      if (!p.changedState) await judgeDefinitions(r, 'viewer', this.via, p, gone);
    }
  }
  toString = () => `customFields(${this.via}, -${this.back})`;
}

export function customFieldsCommand(): fc.Arbitrary<CustomFields> {
  return fc.tuple(fc.constantFrom<Via>('basic', 'hmac'), fc.constantFrom(0, 0, 1)).map(([v, b]) => new CustomFields(v, b));
}
