/**
 * A small Prometheus registry: counters, gauges and histograms with labels, rendered in the text
 * exposition format (version 0.0.4) on `/metrics`.
 */
type Labels = Readonly<Record<string, string>>;

interface Metric {
  render(): string;
}

function labelKey(names: readonly string[], l: Labels): string {
  return names.map((n) => l[n] ?? '').join('\u0000');
}

function fmtLabels(names: readonly string[], values: readonly string[], extra?: [string, string]): string {
  const parts = names.map((n, i) => `${n}="${escape(values[i] ?? '')}"`);
  if (extra) parts.push(`${extra[0]}="${extra[1]}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

function escape(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

export class Counter implements Metric {
  private readonly values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[] = [],
  ) {}
  inc(l: Labels = {}, by = 1): void {
    const k = labelKey(this.labelNames, l);
    this.values.set(k, (this.values.get(k) ?? 0) + by);
  }
  get(l: Labels = {}): number {
    return this.values.get(labelKey(this.labelNames, l)) ?? 0;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [k, v] of this.values) lines.push(`${this.name}${fmtLabels(this.labelNames, k.split('\u0000'))} ${v}`);
    return lines.join('\n');
  }
}

export class Gauge implements Metric {
  private readonly values = new Map<string, number>();
  /** When set, called before each render to refresh all values. */
  collect?: (g: Gauge) => void;
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[] = [],
  ) {}
  set(l: Labels, v: number): void {
    this.values.set(labelKey(this.labelNames, l), v);
  }
  reset(): void {
    this.values.clear();
  }
  get(l: Labels = {}): number | undefined {
    return this.values.get(labelKey(this.labelNames, l));
  }
  render(): string {
    this.collect?.(this);
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const [k, v] of this.values) lines.push(`${this.name}${fmtLabels(this.labelNames, k.split('\u0000'))} ${v}`);
    return lines.join('\n');
  }
}

export class Histogram implements Metric {
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[] = [],
    readonly buckets: readonly number[] = [
      0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600,
    ],
  ) {}
  observe(l: Labels, seconds: number): void {
    const k = labelKey(this.labelNames, l);
    let s = this.series.get(k);
    if (!s) this.series.set(k, (s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < this.buckets.length; i++) if (seconds <= this.buckets[i]!) s.counts[i]!++;
    s.sum += seconds;
    s.count++;
  }
  count(l: Labels = {}): number {
    return this.series.get(labelKey(this.labelNames, l))?.count ?? 0;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [k, s] of this.series) {
      const vals = k.split('\u0000');
      this.buckets.forEach((b, i) =>
        lines.push(`${this.name}_bucket${fmtLabels(this.labelNames, vals, ['le', String(b)])} ${s.counts[i]}`),
      );
      lines.push(`${this.name}_bucket${fmtLabels(this.labelNames, vals, ['le', '+Inf'])} ${s.count}`);
      lines.push(`${this.name}_sum${fmtLabels(this.labelNames, vals)} ${s.sum}`);
      lines.push(`${this.name}_count${fmtLabels(this.labelNames, vals)} ${s.count}`);
    }
    return lines.join('\n');
  }
}

export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();
  private readonly collectors = new Set<() => string>();
  /** Adds a collector rendering its own families (text format) at scrape time; returns a remover. */
  collector(render: () => string): () => void {
    this.collectors.add(render);
    return () => void this.collectors.delete(render);
  }
  private getOrAdd<T extends Metric>(name: string, make: () => T): T {
    const m = this.metrics.get(name);
    if (m) return m as T;
    const n = make();
    this.metrics.set(name, n);
    return n;
  }
  counter(name: string, help: string, labels: readonly string[] = []): Counter {
    return this.getOrAdd(name, () => new Counter(name, help, labels));
  }
  gauge(name: string, help: string, labels: readonly string[] = []): Gauge {
    return this.getOrAdd(name, () => new Gauge(name, help, labels));
  }
  histogram(name: string, help: string, labels: readonly string[] = [], buckets?: readonly number[]): Histogram {
    return this.getOrAdd(name, () => new Histogram(name, help, labels, buckets));
  }
  render(): string {
    const parts = [...this.metrics.values()].map((m) => m.render());
    for (const c of this.collectors) parts.push(c().trimEnd());
    return parts.filter(Boolean).join('\n') + '\n';
  }
}
