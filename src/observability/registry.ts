// A minimal Prometheus registry: counters and fixed-bucket histograms keyed by
// label values, rendered in the text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/). Written here
// rather than taken from prom-client to keep the binary free of a dependency
// for ~100 lines; the format details that matter are named where they occur.

export type Labels = Record<string, string>;

// Label values escape backslash, double quote and newline (exposition format, "Text format details").
const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const escapeHelp = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");

function labelText(names: readonly string[], values: readonly string[], extra = ""): string {
  const parts = names.map((name, i) => `${name}="${escapeLabel(values[i]!)}"`);
  if (extra) parts.push(extra);
  return parts.length ? `{${parts.join(",")}}` : "";
}

// Prometheus floats: integers print bare, +Inf as "+Inf".
const number = (x: number) => (x === Infinity ? "+Inf" : String(x));

abstract class Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  protected key(labels: Labels): string[] {
    return this.labelNames.map((name) => {
      const value = labels[name];
      if (value === undefined) throw new Error(`${this.name}: label "${name}" missing`);
      return value;
    });
  }

  abstract render(): string;
}

export class Counter extends Metric {
  private readonly series = new Map<string, { values: string[]; count: number }>();

  inc(labels: Labels = {}, by = 1): void {
    const values = this.key(labels);
    const id = values.join("\u0000");
    const entry = this.series.get(id) ?? this.series.set(id, { values, count: 0 }).get(id)!;
    entry.count += by;
  }

  get(labels: Labels = {}): number {
    return this.series.get(this.key(labels).join("\u0000"))?.count ?? 0;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} counter`];
    for (const { values, count } of this.series.values()) lines.push(`${this.name}${labelText(this.labelNames, values)} ${number(count)}`);
    return lines.join("\n");
  }
}

export class Histogram extends Metric {
  private readonly series = new Map<string, { values: string[]; counts: number[]; sum: number; count: number }>();

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    /** Upper bounds, ascending; +Inf is implied. */
    readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames);
    if (buckets.some((b, i) => i > 0 && b <= buckets[i - 1]!)) throw new Error(`${name}: buckets must ascend`);
  }

  observe(labels: Labels, value: number): void {
    const values = this.key(labels);
    const id = values.join("\u0000");
    const entry = this.series.get(id) ?? this.series.set(id, { values, counts: this.buckets.map(() => 0), sum: 0, count: 0 }).get(id)!;
    // Counts are stored per bucket and made cumulative on render, as `le` requires.
    const index = this.buckets.findIndex((bound) => value <= bound);
    if (index >= 0) entry.counts[index]! += 1;
    entry.sum += value;
    entry.count += 1;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} histogram`];
    for (const { values, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += counts[i]!;
        lines.push(`${this.name}_bucket${labelText(this.labelNames, values, `le="${number(bound)}"`)} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket${labelText(this.labelNames, values, 'le="+Inf"')} ${count}`);
      lines.push(`${this.name}_sum${labelText(this.labelNames, values)} ${number(sum)}`);
      lines.push(`${this.name}_count${labelText(this.labelNames, values)} ${count}`);
    }
    return lines.join("\n");
  }
}

/** A gauge read at scrape time (e.g. a database count), so it is never stale. */
export class Gauge extends Metric {
  constructor(
    name: string,
    help: string,
    private readonly read: () => number | Promise<number>,
  ) {
    super(name, help, []);
  }

  async collect(): Promise<string> {
    return `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} gauge\n${this.name} ${number(await this.read())}`;
  }

  render(): string {
    throw new Error("a Gauge is rendered with collect()");
  }
}

/** The content type of the text format; scrapers negotiate on it. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
