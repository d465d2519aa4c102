// A process of the field installation (targets/field.ts, startFieldTarget): it starts the part
// the parent asks for (the installation's server, or the front: the slow proxy and the other
// users), answers the parent's questions about it, and stops it when asked or when the parent
// goes away. Messages: parent → child `{ id, type: 'installation', base, opts }`,
// `{ id, type: 'front', upstream, opts }`, `{ id, type: 'mark' | 'report' | 'close' }`;
// child → parent `{ id, ok: true, value }` or `{ id, ok: false, error }`.
import { type FieldAsk, type FieldChildReport, type Front, type Installation, processUsage, startFront, startInstallation } from './field.ts';

let installation: Installation | undefined;
let front: Front | undefined;
let closing: Promise<void> | undefined;
const usage = processUsage();

const close = (): Promise<void> => {
  closing ??= (async () => {
    await front?.close().catch(() => undefined);
    await installation?.close().catch(() => undefined);
  })();
  return closing;
};

const answer = (id: number, value: unknown) => process.send?.({ id, ok: true, value });
const fail = (id: number, e: unknown) => process.send?.({ id, ok: false, error: e instanceof Error ? e.message : String(e) });

process.on('message', async (m: FieldAsk & { id: number }) => {
  try {
    if (m.type === 'installation') {
      if (installation || front) throw new Error('this process already runs a part of the installation');
      installation = await startInstallation(m.base, m.opts);
      answer(m.id, { config: installation.config, seeded: installation.seeded });
    } else if (m.type === 'front') {
      if (installation || front) throw new Error('this process already runs a part of the installation');
      front = await startFront(m.upstream, m.opts);
      answer(m.id, { url: front.url });
    } else if (m.type === 'mark') {
      front?.mark();
      usage.reset();
      answer(m.id, null);
    } else if (m.type === 'report') {
      const report: FieldChildReport = { usage: usage.read(), ...(front ? { front: front.report() } : {}) };
      answer(m.id, report);
    } else {
      await close();
      answer(m.id, null);
      process.disconnect?.();
    }
  } catch (e) {
    fail(m.id, e);
  }
});
// The parent gone (ended, killed): the part stops (the other users delete what they made).
process.on('disconnect', () => {
  void close().then(() => process.exit(0));
});
