import { describe, expect, it } from 'vitest';
import { entriesNotIn, mentions } from '../log-reader.ts';

// LOG-07 reads the ends of a log listed newest first, 20 entries a page, before and after a view
// of a password: the entries that name it on the first page, before and after.
const PAGE = 20;
const entry = (id: number, action: string, password?: number) => ({ id, action, ...(password === undefined ? {} : { related_password: { id: password } }) });
const firstPage = (log: ReturnType<typeof entry>[]) => [...log].reverse().slice(0, PAGE);
const naming = (page: unknown[]) => page.filter((e) => mentions(e, 'pmv6-unused-marker', { kind: 'password', id: 7 }));

describe('entriesNotIn: the entries a read shows that the read before did not', () => {
  it("finds the view's entry when it pushes the creation's entry off the first page (the count of entries naming the password stays 1)", () => {
    // The creation's entry is the last of the first page: 19 other entries came after it.
    const log = [entry(1, 'create_password', 7), ...Array.from({ length: PAGE - 1 }, (_, i) => entry(2 + i, 'update_project'))];
    const before = naming(firstPage(log));
    log.push(entry(100, 'view_password', 7));
    const after = naming(firstPage(log));
    expect([before.length, after.length]).toEqual([1, 1]);
    expect(entriesNotIn(before, after)).toEqual([entry(100, 'view_password', 7)]);
  });

  it('finds none when the view was not logged, and tells entries without an id apart by their whole content', () => {
    const log = [entry(1, 'create_password', 7), entry(2, 'update_project')];
    const before = naming(firstPage(log));
    log.push(entry(3, 'update_project'));
    expect(entriesNotIn(before, naming(firstPage(log)))).toEqual([]);
    const noIds = [{ action: 'create_password', related_password: { id: 7 } }];
    expect(entriesNotIn(noIds, [{ action: 'view_password', related_password: { id: 7 } }, ...noIds])).toEqual([
      { action: 'view_password', related_password: { id: 7 } },
    ]);
    // String ids as a lawful variant sends them: the same entry.
    expect(entriesNotIn([{ id: '5', action: 'x' }], [{ id: '5', action: 'x' }])).toEqual([]);
  });
});
