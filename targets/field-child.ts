// The field installation's own process (targets/field.ts, startFieldTarget): it starts the
// installation the parent describes, answers the parent's questions about it, and stops it when
// asked or when the parent goes away. Messages: parent → child `{ id, type: 'start', spec }`,
// `{ id, type: 'mark' | 'report' | 'close' }`; child → parent `{ id, ok: true, value }` or
// `{ id, ok: false, error }`.
import { type FieldSpec, type FieldTarget, startFieldHere } from './field.ts';

type Ask = { id: number; type: 'start'; spec: FieldSpec } | { id: number; type: 'mark' | 'report' | 'close' };

let target: FieldTarget | undefined;
let closing: Promise<void> | undefined;

const close = (): Promise<void> => {
  closing ??= (async () => {
    await target?.close().catch(() => undefined);
  })();
  return closing;
};

const answer = (id: number, value: unknown) => process.send?.({ id, ok: true, value });
const fail = (id: number, e: unknown) => process.send?.({ id, ok: false, error: e instanceof Error ? e.message : String(e) });

process.on('message', async (m: Ask) => {
  try {
    if (m.type === 'start') {
      target = await startFieldHere(m.spec.base, m.spec.opts);
      answer(m.id, { label: target.label, config: target.config, seeded: target.seeded });
    } else if (m.type === 'mark') {
      target?.mark();
      answer(m.id, null);
    } else if (m.type === 'report') {
      answer(m.id, target ? await target.report() : null);
    } else {
      await close();
      answer(m.id, null);
      process.disconnect?.();
    }
  } catch (e) {
    fail(m.id, e);
  }
});
// The parent gone (ended, killed): the installation stops and deletes what its users made.
process.on('disconnect', () => {
  void close().then(() => process.exit(0));
});
