/**
 * A small Prometheus registry: counters, gauges and histograms with labels, rendered in the text
 * exposition format. Enough for `/metrics`; no dependency.
 *
 * @module
 */

/** A series' labels, name to value. */
export type Labels = Record<string, string>;

/** What the registry renders: one metric family. */
export interface Metric {
  /** The family's name (`cloud_controller_manager_operations_total`). */
  readonly name: string;
  /** The family in the Prometheus text format. */
  render(): string;
}

function labelKey(labels: Labels): string {
  const keys = Object.keys(labels).sort();
  return keys.map((k) => `${k}="${escapeLabel(labels[k])}"`).join(",");
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function header(name: string, help: string, type: string): string {
  return `# HELP ${name} ${help.replace(/\n/g, " ")}\n# TYPE ${name} ${type}\n`;
}

function sample(name: string, key: string, value: number): string {
  return `${name}${key ? `{${key}}` : ""} ${Number.isFinite(value) ? value : value > 0 ? "+Inf" : "-Inf"}\n`;
}

/** A monotonically increasing count per label set. */
export class Counter implements Metric {
  #values = new Map<string, number>();
  /** A family `name` described by `help`. */
  constructor(readonly name: string, readonly help: string) {}
  /** Adds `by` (default 1) to the series with these labels. */
  inc(labels: Labels = {}, by = 1): void {
    const key = labelKey(labels);
    this.#values.set(key, (this.#values.get(key) ?? 0) + by);
  }
  /** Current value of one series (0 when never incremented). */
  get(labels: Labels = {}): number {
    return this.#values.get(labelKey(labels)) ?? 0;
  }
  /** Sum over every series. */
  total(): number {
    let sum = 0;
    for (const v of this.#values.values()) sum += v;
    return sum;
  }
  /** See {@link Metric.render}. */
  render(): string {
    let out = header(this.name, this.help, "counter");
    for (const [key, value] of this.#values) out += sample(this.name, key, value);
    return out;
  }
}

/** A value that goes up and down per label set. */
export class Gauge implements Metric {
  #values = new Map<string, number>();
  /** A family `name` described by `help`. */
  constructor(readonly name: string, readonly help: string) {}
  /** Sets the series with these labels. */
  set(labels: Labels, value: number): void {
    this.#values.set(labelKey(labels), value);
  }
  /** Adds `by` (may be negative). */
  add(labels: Labels, by: number): void {
    const key = labelKey(labels);
    this.#values.set(key, (this.#values.get(key) ?? 0) + by);
  }
  /** Current value of one series. */
  get(labels: Labels = {}): number {
    return this.#values.get(labelKey(labels)) ?? 0;
  }
  /** Drops every series (before setting the current ones, when label sets come and go). */
  clear(): void {
    this.#values.clear();
  }
  /** See {@link Metric.render}. */
  render(): string {
    let out = header(this.name, this.help, "gauge");
    for (const [key, value] of this.#values) out += sample(this.name, key, value);
    return out;
  }
}

/** Default buckets in seconds, from 1 ms to ~2 min. */
export const DEFAULT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Observations counted into cumulative buckets per label set. */
export class Histogram implements Metric {
  #series = new Map<string, { counts: number[]; sum: number; count: number }>();
  /** A family `name` described by `help`, with these bucket bounds (seconds). */
  constructor(readonly name: string, readonly help: string, readonly buckets: number[] = DEFAULT_BUCKETS) {}
  /** Records one observation. */
  observe(labels: Labels, value: number): void {
    const key = labelKey(labels);
    let s = this.#series.get(key);
    if (!s) this.#series.set(key, s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 });
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]) s.counts[i]++;
    s.sum += value;
    s.count++;
  }
  /** Number of observations of one series. */
  count(labels: Labels = {}): number {
    return this.#series.get(labelKey(labels))?.count ?? 0;
  }
  /** See {@link Metric.render}. */
  render(): string {
    let out = header(this.name, this.help, "histogram");
    for (const [key, s] of this.#series) {
      const prefix = key ? `${key},` : "";
      this.buckets.forEach((b, i) => out += sample(`${this.name}_bucket`, `${prefix}le="${b}"`, s.counts[i]));
      out += sample(`${this.name}_bucket`, `${prefix}le="+Inf"`, s.count);
      out += sample(`${this.name}_sum`, key, s.sum);
      out += sample(`${this.name}_count`, key, s.count);
    }
    return out;
  }
}

/** A set of metrics rendered together. Registering a name twice returns the first metric. */
export class Registry {
  #metrics = new Map<string, Metric>();
  #collectors: (() => void)[] = [];

  /** Runs `refresh` before every render, for values read on demand (memory, CPU). */
  onCollect(refresh: () => void): void {
    this.#collectors.push(refresh);
  }

  /** Gets or creates a counter. */
  counter(name: string, help: string): Counter {
    return this.#register(name, () => new Counter(name, help), Counter);
  }
  /** Gets or creates a gauge. */
  gauge(name: string, help: string): Gauge {
    return this.#register(name, () => new Gauge(name, help), Gauge);
  }
  /** Gets or creates a histogram. */
  histogram(name: string, help: string, buckets?: number[]): Histogram {
    return this.#register(name, () => new Histogram(name, help, buckets), Histogram);
  }
  /** The Prometheus text exposition of every metric. */
  /** See {@link Metric.render}. */
  render(): string {
    for (const refresh of this.#collectors) refresh();
    return [...this.#metrics.values()].map((m) => m.render()).join("");
  }

  #register<T extends Metric>(name: string, make: () => T, type: abstract new (...args: never[]) => T): T {
    const existing = this.#metrics.get(name);
    if (existing) {
      if (!(existing instanceof type)) {
        throw new TypeError(`metric ${name} is already registered with another type`);
      }
      return existing;
    }
    const metric = make();
    this.#metrics.set(name, metric);
    return metric;
  }
}
