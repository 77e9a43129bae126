import { Counter, type CounterConfiguration, Histogram, type HistogramConfiguration, type LabelValues } from "prom-client";

// prom-client sorts, hashes and checks a metric's labels on every inc and observe, and on a
// session's path (its settle, its close, each transcript, each HTTP answer) that is most of what a
// metric costs. These metrics keep what they are told under a key of their label values instead,
// and hand it to prom-client when they are collected (every scrape, and `get()`): the same sums
// and buckets, the label work paid once per label set and scrape. A histogram that nobody scrapes
// hands its observations over every FLUSH_AT of them, so what it keeps stays bounded. A value
// prom-client would refuse goes to it at once, and throws where it was given, as before.

type Labels = LabelValues<string>;
const FLUSH_AT = 4096;

function keyOf(labels: Labels, names: readonly string[]): string {
  let key = "";
  for (const name of names) key += `${labels[name]}\u0000`;
  return key;
}

/** Runs `flush` before the metric's own collect (if any) and drops what is kept on reset. */
function collectAfter(metric: Counter<string> | Histogram<string>, flush: () => void, drop: () => void): void {
  const own = metric as unknown as { collect?: () => unknown; reset(): void };
  const collect = own.collect;
  own.collect = () => {
    flush();
    return collect?.call(metric);
  };
  const reset = own.reset.bind(metric);
  own.reset = () => {
    drop();
    reset();
  };
}

/** A counter whose increments are summed per label set until it is collected. */
export function talliedCounter<L extends string>(config: CounterConfiguration<L> & { labelNames: readonly L[] }): Counter<L> {
  const counter = new Counter(config);
  const names = config.labelNames;
  const sums = new Map<string, { labels: Labels; sum: number }>();
  const inc = counter.inc.bind(counter) as (labels?: Labels | number, value?: number) => void;
  collectAfter(
    counter,
    () => {
      for (const { labels, sum } of sums.values()) inc(labels, sum);
      sums.clear();
    },
    () => sums.clear(),
  );
  counter.inc = ((labels?: Labels | number, value: number = 1) => {
    if (typeof labels !== "object" || !Number.isFinite(value) || value < 0) return inc(labels, value);
    const key = keyOf(labels, names);
    const kept = sums.get(key);
    if (kept) kept.sum += value;
    else sums.set(key, { labels: { ...labels }, sum: value });
  }) as Counter<L>["inc"];
  return counter;
}

/** A histogram whose observations are kept per label set until it is collected, or FLUSH_AT of them are. */
export function talliedHistogram<L extends string>(config: HistogramConfiguration<L> & { labelNames: readonly L[] }): Histogram<L> {
  const histogram = new Histogram(config);
  const names = config.labelNames;
  const kept = new Map<string, { labels: Labels; values: number[] }>();
  let count = 0;
  const observe = histogram.observe.bind(histogram) as (labels: Labels | number, value?: number) => void;
  const flush = () => {
    for (const { labels, values } of kept.values()) for (const value of values) observe(labels, value);
    kept.clear();
    count = 0;
  };
  collectAfter(histogram, flush, () => {
    kept.clear();
    count = 0;
  });
  histogram.observe = ((labels: Labels | number, value?: number) => {
    if (typeof labels !== "object" || !Number.isFinite(value)) return observe(labels, value);
    const key = keyOf(labels, names);
    const entry = kept.get(key);
    if (entry) entry.values.push(value!);
    else kept.set(key, { labels: { ...labels }, values: [value!] });
    if (++count >= FLUSH_AT) flush();
  }) as Histogram<L>["observe"];
  return histogram;
}
