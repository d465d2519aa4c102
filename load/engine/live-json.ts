// The engine's live metrics as k6 writes them with `--out json=FILE` (k6 v0.48): one JSON object a
// line, first a "Metric" line declaring each metric (type, what it contains, its thresholds and
// submetrics), then a "Point" line per measurement with k6's metric names and tags, so the
// dashboards and scripts that read k6's output read the engine's too.
// Decision: k6's JSON lines rather than a Prometheus endpoint: the file outlives the run (an
// operator keeps it with the results), needs no port, and is what k6 itself writes; k6's own
// Prometheus output is remote-write, not a page to scrape, so a /metrics page would match no k6
// tooling. The engine times whole exchanges: it writes no http_req_blocked, _connecting,
// _tls_handshaking, _sending, _waiting or _receiving.
// Lines are written as they come, in chunks of at most CHUNK bytes and at least every FLUSH_MS:
// memory stays bounded whatever the run's length.
import { closeSync, openSync, writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { LiveSink } from './metrics.ts';
import type { Threshold } from './scenario.ts';
import type { EndpointStats } from './stats.ts';

export const CHUNK = 64 * 1024;
export const FLUSH_MS = 250;

type MetricType = 'counter' | 'gauge' | 'rate' | 'trend';
const METRICS: Array<[string, MetricType, 'default' | 'time' | 'data']> = [
  ['http_reqs', 'counter', 'default'],
  ['http_req_duration', 'trend', 'time'],
  ['http_req_failed', 'rate', 'default'],
  ['data_received', 'counter', 'data'],
  ['checks', 'rate', 'default'],
  ['iterations', 'counter', 'default'],
  ['iteration_duration', 'trend', 'time'],
  ['dropped_iterations', 'counter', 'default'],
  ['vus', 'gauge', 'default'],
  ['vus_max', 'gauge', 'default'],
];

export class JsonLinesOutput implements LiveSink {
  private readonly fd: number;
  private buffer = '';
  private readonly timer: NodeJS.Timeout;
  private readonly requestTags = new Map<EndpointStats, Map<number, string>>();
  private readonly checkTags = new Map<string, string>();
  private readonly scenarioTags: string;
  // Wall-clock time of a performance.now() reading, as k6's RFC 3339 "time"; one string per millisecond.
  private lastMs = -1;
  private lastTime = '';
  private closed = false;

  /** Opens (truncates) `file` and declares the metrics with the run's thresholds. */
  constructor(
    file: string,
    private readonly scenario: string,
    thresholds: Threshold[],
  ) {
    this.fd = openSync(file, 'w');
    this.scenarioTags = JSON.stringify({ group: '', scenario });
    for (const [name, type, contains] of METRICS) {
      const own = thresholds.filter((t) => t.metric === name);
      const submetrics = [...new Set(own.filter((t) => t.tags).map((t) => t.key))].map((key) => {
        const t = own.find((o) => o.key === key)!;
        return { name: key, suffix: key.slice(name.length + 1, -1), tags: t.tags };
      });
      const data = { name, type, contains, thresholds: own.filter((t) => !t.tags).map((t) => t.expr), submetrics: submetrics.length > 0 ? submetrics : null };
      this.buffer += `${JSON.stringify({ type: 'Metric', data, metric: name })}\n`;
    }
    this.timer = setInterval(() => this.flush(), FLUSH_MS);
    this.timer.unref();
    this.flush();
  }

  request(stats: EndpointStats, ms: number, status: number, bytes: number): void {
    const tags = this.tagsOf(stats, status);
    const time = this.now();
    const failed = status >= 200 && status < 400 ? 0 : 1;
    this.point('http_reqs', time, 1, tags);
    this.point('http_req_duration', time, ms, tags);
    this.point('http_req_failed', time, failed, tags);
    if (bytes > 0) this.point('data_received', time, bytes, this.scenarioTags);
  }

  check(name: string, ok: boolean, tags: Record<string, string> | undefined): void {
    const key = tags === undefined ? name : `${name}\u0000${JSON.stringify(tags)}`;
    let t = this.checkTags.get(key);
    if (t === undefined) this.checkTags.set(key, (t = JSON.stringify({ check: name, group: '', ...tags, scenario: this.scenario })));
    this.point('checks', this.now(), ok ? 1 : 0, t);
  }

  iteration(ms: number): void {
    const time = this.now();
    this.point('iterations', time, 1, this.scenarioTags);
    this.point('iteration_duration', time, ms, this.scenarioTags);
  }

  dropped(): void {
    this.point('dropped_iterations', this.now(), 1, this.scenarioTags);
  }

  vus(busy: number, max: number): void {
    const time = this.now();
    this.point('vus', time, busy, '{}');
    this.point('vus_max', time, max, '{}');
  }

  /** Writes what is buffered. */
  flush(): void {
    if (this.buffer.length === 0 || this.closed) return;
    const text = this.buffer;
    this.buffer = '';
    writeSync(this.fd, text);
  }

  close(): void {
    if (this.closed) return;
    clearInterval(this.timer);
    this.flush();
    this.closed = true;
    closeSync(this.fd);
  }

  private point(metric: string, time: string, value: number, tags: string): void {
    if (this.closed) return;
    this.buffer += `{"metric":"${metric}","type":"Point","data":{"time":"${time}","value":${value},"tags":${tags}}}\n`;
    if (this.buffer.length >= CHUNK) this.flush();
  }

  /** k6's tags of a request: the endpoint's name (also its url), method, page size, status. */
  private tagsOf(stats: EndpointStats, status: number): string {
    let byStatus = this.requestTags.get(stats);
    if (byStatus === undefined) this.requestTags.set(stats, (byStatus = new Map()));
    let tags = byStatus.get(status);
    if (tags === undefined) {
      const t: Record<string, string> = {
        expected_response: String(status >= 200 && status < 400),
        group: '',
        method: stats.method,
        name: stats.name,
      };
      if (stats.pageSize !== undefined) t['page_size'] = String(stats.pageSize);
      Object.assign(t, { proto: 'HTTP/1.1', scenario: this.scenario, status: String(status), url: stats.name });
      byStatus.set(status, (tags = JSON.stringify(t)));
    }
    return tags;
  }

  private now(): string {
    const ms = Math.floor(performance.timeOrigin + performance.now());
    if (ms !== this.lastMs) {
      this.lastMs = ms;
      this.lastTime = new Date(ms).toISOString();
    }
    return this.lastTime;
  }
}
