import { Counter, type CounterConfiguration, type LabelValues } from "prom-client";

// prom-client sorts, hashes and checks a counter's labels on every inc, and on a session's path
// (its settle, its close) that is most of what a counter costs. A tallied counter sums its
// increments under a key of their label values instead, and hands each sum to prom-client when it
// is collected (every scrape, and `get()`): the same totals, the label work paid once per label
// set and scrape. An increment prom-client would refuse goes to it at once, and throws where it
// was given, as before. Histograms are not tallied: prom-client hashes every observation it is
// handed, so keeping them would only move that work (in bursts) and add the keeping to it.

type Labels = LabelValues<string>;

function keyOf(labels: Labels, names: readonly string[]): string {
  let key = "";
  for (const name of names) key += `${labels[name]}\u0000`;
  return key;
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
    if (typeof labels !== "object" || !Number.isFinite(value) || value < 0) return inc(labels, value);
    const key = keyOf(labels, config.labelNames);
    const kept = sums.get(key);
    if (kept) kept.sum += value;
    else sums.set(key, { labels: { ...labels }, sum: value });
  }) as Counter<L>["inc"];
  return counter;
}
