/**
 * CLI-06, spec §4 pagination rule 8: "To get correct counts for a page size, send the same
 * X-Page-Size with the count request." Decision: what shows that a client relied on a count is
 * paging, so a count (`<list>/count.json`) agrees when the same client's latest request of that
 * list before it (`<list>.json` or `<list>/page/N.json`) had the same X-Page-Size (page, then
 * count), or when the next page beyond the first it asks for (`<list>/page/N.json`, N ≥ 2) has
 * the X-Page-Size of one of the client's last counts of the list (count, then page: the client
 * may page by any count it holds).
 * A count that agrees with neither is a finding when that page comes; a count the client never
 * pages by is not judged (a count to show a total, or a test of the default count, breaks nothing).
 */

import type { ReceivedRequest } from './request.ts';
import type { Finding } from './rules.ts';

/** Decision: the pairing state is bounded; past this many (client, list) pairs it starts afresh. */
const MAX_ENTRIES = 20_000;
/** Decision: the last 10 counts of a list are remembered. */
const MAX_COUNTS = 10;

interface Count {
  req: ReceivedRequest;
  size: string | undefined;
  /** Judged already: agreed with the list before it, or paged by. */
  settled: boolean;
}

interface ListState {
  /** X-Page-Size of the latest request of the list; `null` before any. */
  lastSize: string | undefined | null;
  counts: Count[];
}

export interface PairingOutcome {
  /** The count request the verdict is about. */
  count: ReceivedRequest;
  finding?: Finding;
}

const sizeText = (s: string | undefined) => (s === undefined ? 'no X-Page-Size' : `X-Page-Size: ${s}`);

export class CountPairing {
  readonly #lists = new Map<string, ListState>();

  clear(): void {
    this.#lists.clear();
  }

  #state(key: string): ListState {
    let state = this.#lists.get(key);
    if (state === undefined) {
      if (this.#lists.size >= MAX_ENTRIES) this.#lists.clear();
      state = { lastSize: null, counts: [] };
      this.#lists.set(key, state);
    }
    return state;
  }

  /**
   * `apiPath`: the path relative to /index.php/api/v6 without query, e.g. `/passwords/count.json`.
   * Returns the verdict on a count when one is reached (by this request or by a page it paged by).
   */
  observe(client: string, req: ReceivedRequest, apiPath: string, size: string | undefined): PairingOutcome | undefined {
    if (req.method !== 'GET') return undefined;
    const count = /^(\/.+)\/count\.json$/.exec(apiPath);
    if (count) {
      const state = this.#state(`${client}\0${count[1]}`);
      const agreed = state.lastSize !== null && state.lastSize === size;
      state.counts = [...state.counts.slice(-(MAX_COUNTS - 1)), { req, size, settled: agreed }];
      return agreed ? { count: req } : undefined;
    }
    const list = /^(\/.+?)(?:\/page\/0*([0-9]{1,9}))?\.json$/.exec(apiPath);
    if (!list) return undefined;
    const state = this.#state(`${client}\0${list[1]}`);
    state.lastSize = size;
    if (list[2] === undefined || Number(list[2]) < 2) return undefined;
    const counts = state.counts;
    const pending = counts.filter((c) => !c.settled);
    if (pending.length === 0) return undefined;
    for (const c of pending) c.settled = true;
    const latest = pending[pending.length - 1]!;
    if (counts.some((c) => c.size === size)) return { count: latest.req };
    return {
      count: latest.req,
      finding: {
        clause: 'CLI-06',
        expected: `${sizeText(size)}, as on the page the client then asked for, #${req.seq} GET ${req.rawUrl.split('?')[0]}`,
        actual: pending.map((c) => sizeText(c.size)).join(', then '),
      },
    };
  }
}
