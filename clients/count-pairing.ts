/**
 * CLI-06, spec §4 pagination rule 8: "To get correct counts for a page size, send the same
 * X-Page-Size with the count request." Decision: a count (`<list>/count.json`) is paired with the
 * same client's latest request of that list (`<list>.json` or `<list>/page/N.json`) before it, or,
 * when there is none, with the next one after it; a count that is never paired is not judged.
 */
import type { Finding } from './rules.ts';
import type { ReceivedRequest } from './request.ts';

/** Decision: the pairing state is bounded; past this many (client, list) pairs it starts afresh. */
const MAX_ENTRIES = 20_000;

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
      const list = this.#lastList.get(key);
      if (list === undefined) {
        this.#bound(this.#pending).set(key, { req, size });
        return undefined;
      }
      return judge({ req, size }, list, 'before');
    }
    const list = /^(\/.+?)(?:\/page\/[^/]+)?\.json$/.exec(apiPath);
    if (!list) return undefined;
    const key = `${client}\0${list[1]}`;
    this.#bound(this.#lastList).set(key, { req, size });
    const pending = this.#pending.get(key);
    if (pending === undefined) return undefined;
    this.#pending.delete(key);
    return judge(pending, { req, size }, 'after');
  }

  #bound(map: Map<string, Seen>): Map<string, Seen> {
    if (map.size >= MAX_ENTRIES) map.clear();
    return map;
  }
}

function judge(count: Seen, list: Seen, when: 'before' | 'after'): PairingOutcome {
  if (count.size === list.size) return { count: count.req };
  const listPath = list.req.rawUrl.split('?')[0];
  return {
    count: count.req,
    finding: {
      clause: 'CLI-06',
      expected: `${sizeText(list.size)}, as on the list request #${list.req.seq} ${when} it (GET ${listPath})`,
      actual: sizeText(count.size),
    },
  };
}
