/**
 * CLI-06, spec §4 pagination rule 8: "To get correct counts for a page size, send the same
 * X-Page-Size with the count request." Decision: a count (`<list>/count.json`) agrees when the
 * same client's latest request of that list (`<list>.json` or `<list>/page/N.json`) before it, or
 * the next one after it, carries the same X-Page-Size (a client may count first and then page, or
 * page and then count); it is a finding when neither does. A count never followed by a request of
 * its list and agreeing with none before it is not judged (nothing shows what it was for).
 */
import type { Finding } from './rules.ts';
import type { ReceivedRequest } from './request.ts';

/** Decision: the pairing state is bounded; past this many (client, list) pairs it starts afresh. */
const MAX_ENTRIES = 20_000;

interface Seen {
  req: ReceivedRequest;
  size: string | undefined;
  /** For a pending count: the list request before it, which did not agree. */
  before?: Seen | undefined;
}

export interface PairingOutcome {
  /** The count request the verdict is about. */
  count: ReceivedRequest;
  finding?: Finding;
}

const sizeText = (s: string | undefined) => (s === undefined ? 'no X-Page-Size' : `X-Page-Size: ${s}`);

export class CountPairing {
  readonly #lastList = new Map<string, Seen>();
  readonly #pending = new Map<string, Seen>();

  clear(): void {
    this.#lastList.clear();
    this.#pending.clear();
  }

  /** `apiPath`: the path relative to /index.php/api/v6 without query, e.g. `/passwords/count.json`. */
  observe(client: string, req: ReceivedRequest, apiPath: string, size: string | undefined): PairingOutcome | undefined {
    if (req.method !== 'GET') return undefined;
    const count = /^(\/.+)\/count\.json$/.exec(apiPath);
    if (count) {
      const key = `${client}\0${count[1]}`;
      const before = this.#lastList.get(key);
      if (before !== undefined && before.size === size) return { count: req };
      this.#bound(this.#pending).set(key, { req, size, before });
      return undefined;
    }
    const list = /^(\/.+?)(?:\/page\/[^/]+)?\.json$/.exec(apiPath);
    if (!list) return undefined;
    const key = `${client}\0${list[1]}`;
    this.#bound(this.#lastList).set(key, { req, size });
    const pending = this.#pending.get(key);
    if (pending === undefined) return undefined;
    this.#pending.delete(key);
    return judge(pending, { req, size });
  }

  #bound(map: Map<string, Seen>): Map<string, Seen> {
    if (map.size >= MAX_ENTRIES) map.clear();
    return map;
  }
}

function judge(count: Seen, after: Seen): PairingOutcome {
  if (count.size === after.size) return { count: count.req };
  const listPath = after.req.rawUrl.split('?')[0];
  const before = count.before === undefined ? '' : ` (and ${sizeText(count.before.size)} on #${count.before.req.seq} before it)`;
  return {
    count: count.req,
    finding: {
      clause: 'CLI-06',
      expected: `${sizeText(after.size)}, as on the next request of the list, #${after.req.seq} GET ${listPath}${before}`,
      actual: sizeText(count.size),
    },
  };
}
