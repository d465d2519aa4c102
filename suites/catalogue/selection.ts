import { type Clause, clauseById } from './clauses.ts';

export interface Selection {
  only?: string[];
  skip?: string[];
}

// --only keeps a test that cites any selected area or clause; --skip drops a test only when
// every clause it cites is skipped.
export function selects(clauses: Clause[], selection: Selection = {}): boolean {
  const { only = [], skip = [] } = selection;
  const hit = (c: Clause, selectors: string[]) => selectors.includes(c.id) || selectors.includes(c.area);
  if (only.length > 0 && !clauses.some((c) => hit(c, only))) return false;
  return !(skip.length > 0 && clauses.every((c) => hit(c, skip)));
}

export function selectsIds(ids: string[], selection: Selection = {}): boolean {
  return selects(
    ids.map((id) => clauseById(id)).filter((c) => c !== undefined),
    selection,
  );
}
