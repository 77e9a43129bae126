import { inspect } from "node:util";
import { Counter, type CounterConfiguration, type LabelValues, type Metric, type Registry } from "prom-client";

// prom-client sorts, hashes and checks a counter's labels on every inc, and on a session's path
// (its settle, its close) that is most of what a counter costs. A tallied counter sums its
// increments under a key of their label values instead, and hands each sum to prom-client when it
// is collected (every scrape, and `get()`): the same totals, the label work paid once per label
// set and scrape. An increment prom-client would refuse goes to it at once, and throws where it
// was given, as before. Histograms (below) count their observations into buckets themselves: handed
// over one by one, prom-client would hash each of them anyway.

type Labels = LabelValues<string>;

/** The series' key: its label values in `names`' order, a missing one apart from the text "undefined" (prom-client's hash skips it). */
function keyOf(labels: Labels, names: readonly string[]): string {
  let key = "";
  for (const name of names) {
    const value = labels[name];
    key += value === undefined ? "\u0001\u0000" : `${value}\u0000`;
  }
  return key;
}

/** Whether every label is one of `names`: prom-client refuses any other, on every call. */
function known(labels: Labels, names: readonly string[]): boolean {
  for (const name in labels) if (!names.includes(name)) return false;
  return true;
}

/** A counter whose increments are summed per label set until it is collected. */
export function talliedCounter<L extends string>(config: CounterConfiguration<L> & { labelNames: readonly L[] }): Counter<L> {
  const sums = new Map<string, { labels: Labels; sum: number }>();
  const counter = new Counter({
    ...config,
    collect() {
      for (const { labels, sum } of sums.values()) inc(labels, sum);
      sums.clear();
    },
  });
  const inc = counter.inc.bind(counter) as (labels?: Labels | number, value?: number) => void;
  const reset = counter.reset.bind(counter);
  counter.reset = () => {
    sums.clear();
    reset();
  };
  counter.inc = ((labels?: Labels | number, value: number = 1) => {
    if (typeof labels !== "object" || !Number.isFinite(value) || value < 0 || !known(labels, config.labelNames)) return inc(labels, value);
    const key = keyOf(labels, config.labelNames);
    const kept = sums.get(key);
    if (kept) kept.sum += value;
    else sums.set(key, { labels: { ...labels }, sum: value });
  }) as Counter<L>["inc"];
  return counter;
}

interface HistogramConfig<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
  buckets: number[];
  registers?: Registry[];
}

/** A value of the metric as prom-client's registry reads it: `sharedLabels` are its series'. */
interface HistogramValue {
  labels: Labels;
  sharedLabels?: Labels;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

interface HistogramData {
  name: string;
  help: string;
  type: "histogram";
  values: HistogramValue[];
  aggregator: "sum";
}

/** One label set's observations: per bucket (not cumulative), the sum and the count. */
interface Observed {
  labels: Labels;
  counts: number[];
  sum: number;
  count: number;
}

/**
 * A histogram that counts each observation into its label set's buckets at once, under a key of
 * its label values, where prom-client's sorts, hashes and checks the labels of every observation.
 * Registered as a metric of its own, it gives the registry what prom-client's `Histogram` gives:
 * the same exposition, the same `get()`; a label outside its names throws as prom-client's does.
 */
export class TalliedHistogram<L extends string = string> {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  private readonly labelNames: readonly L[];
  private readonly bounds: readonly number[];
  private observed = new Map<string, Observed>();

  constructor(config: HistogramConfig<L>) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames ?? [];
    this.bounds = [...config.buckets];
    // As prom-client's: a histogram without labels shows its one (empty) series from the start.
    if (this.labelNames.length === 0) this.entry({}, "");
    for (const registry of config.registers ?? []) registry.registerMetric(this as unknown as Metric);
  }

  observe(labels: Partial<Record<L, string | number>> | number, value?: number): void {
    const [set, v] = typeof labels === "number" ? [{} as Labels, labels] : [labels as Labels, value as number];
    if (!known(set, this.labelNames))
      throw new Error(`Added label "${Object.keys(set).find((name) => !this.labelNames.includes(name as L))}" is not included in initial labelset: ${inspect(this.labelNames)}`);
    if (!Number.isFinite(v)) throw new TypeError(`Value is not a valid number: ${inspect(v)}`);
    const key = keyOf(set, this.labelNames);
    const o = this.observed.get(key) ?? this.entry(set, key);
    o.sum += v;
    o.count++;
    const { bounds } = this;
    for (let i = 0; i < bounds.length; i++) {
      if (v <= bounds[i]!) {
        o.counts[i]!++;
        break;
      }
    }
  }

  private entry(labels: Labels, key: string): Observed {
    const o = { labels: { ...labels }, counts: this.bounds.map(() => 0), sum: 0, count: 0 };
    this.observed.set(key, o);
    return o;
  }

  /** What the registry formats: prom-client's `Histogram.getForPromString()`, value for value. */
  async getForPromString(): Promise<HistogramData> {
    const bucket = `${this.name}_bucket`;
    const values: HistogramValue[] = [];
    for (const o of this.observed.values()) {
      let cumulative = 0;
      for (const [i, le] of this.bounds.entries()) {
        cumulative += o.counts[i]!;
        values.push({ labels: { le }, sharedLabels: o.labels, value: cumulative, metricName: bucket, exemplar: null });
      }
      values.push(
        { labels: { le: "+Inf" }, sharedLabels: o.labels, value: o.count, metricName: bucket, exemplar: null },
        { labels: {}, sharedLabels: o.labels, value: o.sum, metricName: `${this.name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: o.labels, value: o.count, metricName: `${this.name}_count`, exemplar: undefined },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** prom-client's `Histogram.get()`: each value's own labels with its series' labels after them. */
  async get(): Promise<HistogramData> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return data;
  }

  reset(): void {
    this.observed = new Map();
  }
}
