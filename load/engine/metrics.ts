// What a load run measures: latency histograms per endpoint and page size, checks by name,
// transport errors by cause, request and byte counts, and the per-second window of the progress
// line. The transport records into it; the thresholds and the results read it.
import { performance } from 'node:perf_hooks';
import type { Method } from '../k6/lib/iterations.js';
import { EndpointStats, latencyHistogram, percentileMs, round3 } from './stats.ts';

/** One row of the per-second series; the last one is the run's remainder, `seconds` long. */
export interface Second {
  second: number;
  /** how long the row covers: 1, or less for the last row of the run */
  seconds: number;
  requests: number;
  failed: number;
  /** ms */
  p95: number;
  /** iterations started in this second */
  iterations: number;
  /** iterations running (VUs busy) at its end */
  vus: number;
}

/** Where each measurement also goes as it is taken: the live output (./live-json.ts). */
export interface LiveSink {
  request(stats: EndpointStats, ms: number, status: number, bytes: number): void;
  check(name: string, ok: boolean, tags: Record<string, string> | undefined): void;
  iteration(ms: number): void;
  dropped(): void;
  vus(busy: number, max: number): void;
}

export class RunMetrics {
  readonly endpoints = new Map<string, EndpointStats>();
  readonly checks = new Map<string, { passes: number; fails: number }>();
  readonly transportErrors = new Map<string, number>();
  readonly perSecond: Second[] = [];
  requests = 0;
  failed = 0;
  bytes = 0;
  live: LiveSink | undefined;
  private window = latencyHistogram();
  private windowRequests = 0;
  private windowFailed = 0;
  // Keyed by method, then name, then page size: the iterations pass constant strings, whose hash
  // V8 keeps, where a joined key would be a new string to flatten and hash on every request.
  private readonly statsByRequest = new Map<string, Map<string, Map<number | undefined, EndpointStats>>>();

  check(name: string, ok: boolean, tags?: Record<string, string>): boolean {
    this.live?.check(name, ok, tags);
    let c = this.checks.get(name);
    if (c === undefined) this.checks.set(name, (c = { passes: 0, fails: 0 }));
    if (ok) c.passes++;
    else c.fails++;
    return ok;
  }

  statsFor(method: Method, name: string, pageSize: number | undefined): EndpointStats {
    let byName = this.statsByRequest.get(method);
    if (byName === undefined) this.statsByRequest.set(method, (byName = new Map()));
    let bySize = byName.get(name);
    if (bySize === undefined) byName.set(name, (bySize = new Map()));
    let stats = bySize.get(pageSize);
    if (stats === undefined) {
      const key = `${method} ${name}${pageSize !== undefined ? ` [${pageSize}]` : ''}`;
      bySize.set(pageSize, (stats = new EndpointStats(method, name, pageSize)));
      this.endpoints.set(key, stats);
    }
    return stats;
  }

  /** One finished exchange (status 0 and `size` 0 for one that got no answer), timed from `t0`; failed unless 2XX or 3XX, as k6's http_req_failed. */
  record(stats: EndpointStats, t0: number, status: number, size: number): void {
    const ms = performance.now() - t0;
    const ok = status >= 200 && status < 400;
    stats.record(ms, ok, size);
    this.live?.request(stats, ms, status, size);
    this.window.recordValue(Math.max(1, Math.round(ms * 1000)));
    this.windowRequests++;
    this.bytes += size;
    if (!ok) {
      this.failed++;
      this.windowFailed++;
    }
  }

  transportError(cause: string): void {
    this.transportErrors.set(cause, (this.transportErrors.get(cause) ?? 0) + 1);
  }

  /** Closes the current second (or the run's last, shorter stretch): its row of `perSecond`, then a new window. */
  closeSecond(iterations: number, vus: number, seconds = 1): Second {
    const row = {
      second: this.perSecond.length + 1,
      seconds: round3(seconds),
      requests: this.windowRequests,
      failed: this.windowFailed,
      p95: percentileMs(this.window, 95),
      iterations,
      vus,
    };
    this.perSecond.push(row);
    this.window = latencyHistogram();
    this.windowRequests = 0;
    this.windowFailed = 0;
    return row;
  }

  /** requests recorded since the last row of `perSecond` */
  pendingRequests(): number {
    return this.windowRequests;
  }

  checkTotals(): { passes: number; fails: number } {
    let passes = 0;
    let fails = 0;
    for (const c of this.checks.values()) {
      passes += c.passes;
      fails += c.fails;
    }
    return { passes, fails };
  }

  /** Forgets everything measured so far (the preflight's request is not part of the run). */
  reset(): void {
    this.endpoints.clear();
    this.statsByRequest.clear();
    this.checks.clear();
    this.transportErrors.clear();
    this.perSecond.length = 0;
    this.requests = 0;
    this.failed = 0;
    this.bytes = 0;
    this.window = latencyHistogram();
    this.windowRequests = 0;
    this.windowFailed = 0;
  }
}
