/**
 * CLI-06, spec §4 pagination rule 8: "To get correct counts for a page size, send the same
 * X-Page-Size with the count request." Decision: what shows that a client relied on a count is
 * that it then pages by it, so a count (`<list>/count.json`) is judged against the same client's
 * next request of a page beyond the first of that list (`<list>/page/N.json`, N ≥ 2): it agrees
 * when both carry the same X-Page-Size (or neither does). When the client asked several counts of
 * the list before that page, one with the page's X-Page-Size is enough (it may have paged by that
 * one). A count the client never pages by is not judged (a count to show a total, or a test of
 * the default count, breaks nothing).
 */
import type { Finding } from './rules.ts';
import type { ReceivedRequest } from './request.ts';

/** Decision: the pairing state is bounded; past this many (client, list) pairs it starts afresh. */
const MAX_ENTRIES = 20_000;
/** Decision: the distinct sizes of the last 10 counts of a list are remembered. */
const MAX_COUNTS_PER_LIST = 10;

interface Seen {
  req: ReceivedRequest;
  size: string | undefined;
}

export interface PairingOutcome {
  /** The count request the verdict is about. */
  count: ReceivedRequest;
  finding?: Finding;
}

const sizeText = (s: string | undefined) => (s === undefined ? 'no X-Page-Size' : `X-Page-Size: ${s}`);

export class CountPairing {
  readonly #pending = new Map<string, Seen[]>();

  clear(): void {
    this.#pending.clear();
  }

  /** `apiPath`: the path relative to /index.php/api/v6 without query, e.g. `/passwords/count.json`. */
  observe(client: string, req: ReceivedRequest, apiPath: string, size: string | undefined): PairingOutcome | undefined {
    if (req.method !== 'GET') return undefined;
    const count = /^(\/.+)\/count\.json$/.exec(apiPath);
    if (count) {
      if (this.#pending.size >= MAX_ENTRIES) this.#pending.clear();
      const key = `${client}\0${count[1]}`;
      const counts = this.#pending.get(key) ?? [];
      this.#pending.set(key, [...counts.filter((c) => c.size !== size).slice(-(MAX_COUNTS_PER_LIST - 1)), { req, size }]);
      return undefined;
    }
    const page = /^(\/.+?)\/page\/0*([0-9]{1,9})\.json$/.exec(apiPath);
    if (!page || Number(page[2]) < 2) return undefined;
    const key = `${client}\0${page[1]}`;
    const counts = this.#pending.get(key);
    if (counts === undefined) return undefined;
    this.#pending.delete(key);
    const agreeing = counts.find((c) => c.size === size);
    if (agreeing !== undefined) return { count: agreeing.req };
    const latest = counts[counts.length - 1]!;
    return {
      count: latest.req,
      finding: {
        clause: 'CLI-06',
        expected: `${sizeText(size)}, as on the page the client then asked for, #${req.seq} GET ${req.rawUrl.split('?')[0]}`,
        actual: counts.map((c) => sizeText(c.size)).join(', then '),
      },
    };
  }
}
