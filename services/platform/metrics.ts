import client from 'prom-client';
import type { RequestHandler } from 'express';

let defaultsCollected = false;

type HttpLabels = Record<'service' | 'method' | 'route' | 'status', string>;

interface Series {
  labels: HttpLabels;
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  counts: Float64Array;
  sum: number;
  count: number;
}

/** A series' key in the map: its four label values, joined. */
const seriesKey = (labels: HttpLabels): string => `${labels.service}\u0000${labels.method}\u0000${labels.route}\u0000${labels.status}`;

/**
 * A latency histogram in Prometheus' format, registered with prom-client's registry like its own
 * metrics. Every HTTP request observes it, and prom-client's Histogram sorts, validates and hashes
 * its label object on each observe (measured: 9 % of POST /validate's throughput); here a request
 * costs a string key, a map lookup and a bucket scan, and the formatting happens at scrape time.
 */
export class RequestLatencyHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #bounds: readonly number[];
  readonly #series = new Map<string, Series>();

  constructor(options: { name: string; help: string; buckets: readonly number[]; registry?: client.Registry }) {
    this.name = options.name;
    this.help = options.help;
    this.#bounds = [...options.buckets].sort((a, b) => a - b);
    // The one cast left here: prom-client types registerMetric as taking its own four classes, and
    // its Histogram has no way to set bucket counts from outside (only observe, which hashes its
    // label object per call: the 9 % above), so nothing of its own can be filled at scrape time
    // as BoundedCounter does. The registry reads only name, help, type, aggregator and get(),
    // which this class has; the unit test compares the scrape with prom-client's own Histogram.
    (options.registry ?? client.register).registerMetric(this as unknown as client.Metric);
  }

  observe(labels: HttpLabels, seconds: number): void {
    this.#observeIn(seriesKey(labels), labels, seconds);
  }

  /**
   * observe() for one fixed set of labels, its series' key worked out once: a hot route answers with
   * the same few label sets, and building the key per answer was garbage on its path (issue 37).
   */
  observerOf(labels: HttpLabels): (seconds: number) => void {
    const fixed = { ...labels };
    const key = seriesKey(fixed);
    return (seconds) => this.#observeIn(key, fixed, seconds);
  }

  #observeIn(key: string, labels: HttpLabels, seconds: number): void {
    let series = this.#series.get(key);
    if (!series) {
      series = { labels: { ...labels }, counts: new Float64Array(this.#bounds.length + 1), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    let i = 0;
    while (i < this.#bounds.length && seconds > this.#bounds[i]!) i++;
    series.counts[i]! += 1;
    series.sum += seconds;
    series.count += 1;
  }

  /** What prom-client's registry asks every metric for when it is scraped. */
  get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const { labels, counts, sum, count } of this.#series.values()) {
      let cumulative = 0;
      this.#bounds.forEach((le, i) => {
        cumulative += counts[i]!;
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.#series.clear();
  }
}

/** A series' label values: one of its list each, or `other`, the series a value outside the list counts in. */
type LabelValues<L extends Record<string, readonly string[]>> = { [K in keyof L]: L[K][number] | 'other' };

/**
 * A counter whose every label takes its values from a fixed list, so its series are a bounded set
 * known at start (each exported from 0, which is what rate() and increase() need): a value outside
 * its list counts as "other", so no caller can put an id, a key or a path into a label. Counting is
 * a string key and a map lookup, cheap enough for the /validate hot path (prom-client's Counter
 * hashes and validates its label object on every inc); a prom-client Counter is what the registry
 * scrapes, filled from these series only when scraped.
 */
export class BoundedCounter<L extends Record<string, readonly string[]>> {
  readonly name: string;
  readonly help: string;
  readonly #names: readonly string[];
  readonly #allowed: readonly ReadonlySet<string>[];
  readonly #series = new Map<string, { labels: Record<string, string>; value: number }>();

  constructor(options: { name: string; help: string; labels: L; registry?: client.Registry }) {
    this.name = options.name;
    this.help = options.help;
    this.#names = Object.keys(options.labels);
    const lists = this.#names.map((n) => [...new Set([...(options.labels[n] ?? []), 'other'])]);
    this.#allowed = lists.map((l) => new Set(l));
    let combinations: string[][] = [[]];
    for (const list of lists) combinations = combinations.flatMap((c) => list.map((v) => [...c, v]));
    for (const values of combinations) {
      this.#series.set(values.join('\u0000'), { labels: Object.fromEntries(this.#names.map((n, i) => [n, values[i]!])), value: 0 });
    }
    const series = this.#series;
    new client.Counter({
      name: options.name,
      help: options.help,
      labelNames: this.#names,
      registers: [options.registry ?? client.register],
      collect() {
        this.reset();
        for (const { labels, value } of series.values()) this.inc(labels, value);
      },
    });
  }

  inc(labels: LabelValues<L>, by = 1): void {
    let key = '';
    for (let i = 0; i < this.#names.length; i++) {
      const value = (labels as Record<string, string>)[this.#names[i]!];
      key += (i === 0 ? '' : '\u0000') + (value !== undefined && this.#allowed[i]!.has(value) ? value : 'other');
    }
    const series = this.#series.get(key);
    if (series) series.value += by;
  }

  /** The current count of one series (tests read it instead of parsing a scrape). */
  value(labels: LabelValues<L>): number {
    return this.#series.get(this.#names.map((n) => (labels as Record<string, string>)[n]).join('\u0000'))?.value ?? 0;
  }

  reset(): void {
    for (const series of this.#series.values()) series.value = 0;
  }
}

export const httpMetrics = {
  duration: new RequestLatencyHistogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request latency by service, route and status',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  }),
};

export function collectDefaultMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  client.collectDefaultMetrics({ prefix: 'svc_' });
}

export function metricsMiddleware(service: string): RequestHandler {
  return (req, res, next) => {
    const start = performance.now();
    res.once('finish', () => {
      // The matched route pattern, never the raw URL: keeps label cardinality bounded.
      const route = (req.route as { path?: string } | undefined)?.path ?? (res.statusCode === 404 ? 'unmatched' : req.baseUrl || 'other');
      httpMetrics.duration.observe(
        { service, method: req.method, route: String(route), status: String(res.statusCode) },
        (performance.now() - start) / 1000,
      );
    });
    next();
  };
}

export const metricsHandler: RequestHandler = async (_req, res) => {
  res.setHeader('Content-Type', client.register.contentType);
  res.send(await client.register.metrics());
};
