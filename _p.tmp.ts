import { startFieldTarget } from './targets/field.ts';
const t = await startFieldTarget({ seed: 1 }, { delayMs: 20, data: false });
await new Promise((r) => setTimeout(r, 1000));
await t.close();
