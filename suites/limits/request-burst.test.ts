import { setTimeout as sleep } from 'node:timers/promises';
import type { Exchange } from '../../core/exchange.ts';
import { headerValue } from '../../core/exchange.ts';
import { expectClientError, expectResponse, violation } from '../harness/assert.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { inFlight } from '../harness/config.ts';
import { exclusive } from '../harness/gate.ts';
import { useSession } from '../harness/session.ts';

// Decision (issue 38: no serial tail): the file runs beside the others; its burst, and the wait
// for a limit it hit to wear off, hold the target to themselves (the gate's exclusive section):
// a rate limit it trips would meet the requests of files beside it.
const s = useSession();

const REQUESTS = 50;
const CONCURRENCY = 10;
const MAX_WAIT_MS = 10_000;

function isLoopback(target: string): boolean {
  const host = new URL(target).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(\.[0-9]{1,3}){3}$/.test(host);
}

// "Rate limits: not shown." Decision: a bounded burst (50 GETs, at most 10 in flight, and no more
// than --concurrency allows) and only against a loopback target, so that the suite never loads someone else's installation. A 429
// is recorded, not held against the server; the reply must still be an answer of one of the three
// kinds, and a 4XX must carry the error object.
clauseTest('LIM-02', 'record whether a burst of requests is rate-limited', async (t) => {
  if (!isLoopback(t.config.target)) t.unverifiable('the burst runs only against a loopback target');
  const replies: Exchange[] = [];
  let next = 0;
  const worker = async () => {
    while (next < REQUESTS) {
      next++;
      replies.push(await s.admin.get('/version.json'));
    }
  };
  const started = performance.now();
  const concurrency = Math.min(CONCURRENCY, inFlight(t.config));
  const ms = await exclusive(async () => {
    await Promise.all(Array.from({ length: concurrency }, worker));
    const ms = Math.round(performance.now() - started);
    const limited = replies.find((ex) => ex.response?.status === 429);
    // Decision: let a limit that was hit wear off before the requests of others go on.
    if (limited) await sleep(Math.min(MAX_WAIT_MS, (Number(headerValue(limited.response!.headers, 'retry-after')) || 1) * 1000));
    return ms;
  });
  const statuses: Record<string, number> = {};
  for (const ex of replies) {
    const key = ex.response ? String(ex.response.status) : 'no response';
    statuses[key] = (statuses[key] ?? 0) + 1;
  }
  const limited = replies.filter((ex) => ex.response?.status === 429);
  const retryAfter = limited.length > 0 ? headerValue(limited[0]!.response!.headers, 'retry-after') : undefined;
  t.observe('burst', { requests: REQUESTS, concurrency, ms, statuses });
  t.observe('rate-limited', limited.length > 0 ? { replies429: limited.length, retryAfter: retryAfter ?? null } : false);
  for (const ex of replies) {
    expectResponse(ex);
    const { status } = ex.response;
    if (status >= 500) violation(ex, 'no server error under a burst of 50 requests', `status ${status}`);
    if (status >= 400) expectClientError(ex);
  }
});
