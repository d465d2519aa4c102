import { build, type Histogram } from 'hdr-histogram-js';

export const SAMPLE_CAP = 4_000;

/** Latencies in microseconds (1 µs to 2 min, 3 significant digits) plus a uniform reservoir sample in ms. */
export function latencyHistogram(): Histogram {
  return build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3 });
}

export class EndpointStats {
  readonly hist = latencyHistogram();
  count = 0;
  errors = 0;
  bytes = 0;
  readonly samples: number[] = [];
  private seed: number;

  constructor(
    readonly method: string,
    readonly name: string,
    readonly pageSize: number | undefined,
    seed = 0x9e3779b9,
  ) {
    this.seed = seed >>> 0;
  }

  record(ms: number, ok: boolean, bytes: number): void {
    this.hist.recordValue(Math.max(1, Math.round(ms * 1000)));
    this.count++;
    if (!ok) this.errors++;
    this.bytes += bytes;
    if (this.samples.length < SAMPLE_CAP) this.samples.push(round3(ms));
    else {
      const j = Math.floor(this.random() * this.count);
      if (j < SAMPLE_CAP) this.samples[j] = round3(ms);
    }
  }

  private random(): number {
    this.seed = (this.seed + 0x6d2b79f5) >>> 0;
    let t = this.seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}

export interface LatencySummary {
  count: number;
  mean: number;
  min: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  max: number;
}

export function summarise(h: Histogram): LatencySummary {
  const ms = (us: number) => round3(us / 1000);
  return {
    count: h.totalCount,
    mean: h.totalCount === 0 ? 0 : ms(h.mean),
    min: h.totalCount === 0 ? 0 : ms(h.minNonZeroValue),
    p50: percentileMs(h, 50),
    p90: percentileMs(h, 90),
    p95: percentileMs(h, 95),
    p99: percentileMs(h, 99),
    max: ms(h.maxValue),
  };
}

/**
 * The latency at percentile `p`, in ms. Decision: within the recorded min and max. HDR answers
 * with the top of the value's bucket (3 significant digits), which can lie above the largest
 * latency recorded: a p99 printed above max.
 */
export function percentileMs(h: Histogram, p: number): number {
  if (h.totalCount === 0) return 0;
  return round3(Math.max(h.minNonZeroValue, Math.min(h.getValueAtPercentile(p), h.maxValue)) / 1000);
}

export function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
