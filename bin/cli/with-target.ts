import { TargetError } from '../../core/errors.ts';
import { scrub } from '../../core/redact.ts';
import type { Target } from '../../targets/target.ts';

/**
 * The middle of `pmv6 run` and `pmv6 load`: acquire the target, do the work, let the target go.
 * A target that cannot be used (on the way in or during the work) is one line and exit 2.
 */
export async function withTarget(command: string, acquire: () => Promise<Target>, work: (target: Target) => Promise<number>): Promise<number> {
  let target: Target | undefined;
  try {
    target = await acquire();
    return await work(target);
  } catch (e) {
    if (e instanceof TargetError) {
      process.stderr.write(`pmv6 ${command}: ${scrub(e.message)}\n`);
      return 2;
    }
    throw e;
  } finally {
    await target?.close();
  }
}
