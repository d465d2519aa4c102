import { UsageError } from '../../core/errors.ts';
import type { Variant } from '../../fixtures/variants/variant.ts';

/** The lawful variants --variant names (fixtures/variants/); an unknown name is a usage error. */
export async function namedVariants(list: string): Promise<Variant[]> {
  const { variantsNamed } = await import('../../fixtures/variants/index.ts');
  const { variants, unknown } = variantsNamed(list);
  if (variants.length === 0 || unknown.length > 0) throw new UsageError(`--variant: unknown variant ${unknown.join(', ') || '(none given)'}; see pmv6 variants --list`);
  return variants;
}
