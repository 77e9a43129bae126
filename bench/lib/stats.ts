// How every benchmark states its numbers. Percentiles use the nearest rank (the smallest sample
// with at least p% of the samples at or below it); p99 is stated only with 200 samples or more.
// "Added" latency is the percentile of paired differences: sample i of one path minus sample i of
// the path it is compared with, both sent the same text to the same upstream at the same moment
// of their round.

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

export function median(xs: number[]): number {
  return percentile(xs, 50);
}

/** p50, and p99 when there are enough samples to state one. */
export function spread(xs: number[], unit = "ms", digits = 2): string {
  const f = (x: number) => `${x.toFixed(digits)} ${unit}`;
  const p99 = xs.length >= 200 ? `p99 ${f(percentile(xs, 99))}` : `p99 n/a (${xs.length} samples)`;
  return `p50 ${f(percentile(xs, 50))}  ${p99}`;
}

/** Sample i of `a` minus sample i of `b`. */
export function paired(a: number[], b: number[]): number[] {
  if (a.length !== b.length) throw new Error(`unpaired samples: ${a.length} vs ${b.length}`);
  return a.map((x, i) => x - b[i]);
}

/** Arrival offsets for a round: all at once (burst), or uniformly random within `windowMs`. */
export function arrivals(n: number, windowMs: number): number[] {
  return Array.from({ length: n }, () => (windowMs > 0 && n > 1 ? Math.random() * windowMs : 0));
}

/** Runs `fn` now when `ms` is 0 (a true burst), else after `ms`. */
export function at(ms: number, fn: () => void): void {
  if (ms === 0) fn();
  else setTimeout(fn, ms);
}

export const PATTERNS = [
  { name: "burst", windowMs: 0 },
  { name: "spread 1 s", windowMs: 1000 },
] as const;

export const levels = (fallback = "1,50,200,500") => (process.env.BENCH_LEVELS ?? fallback).split(",").map(Number);

/** Runs `run` once at each offset (ms from now, as `at` does); resolves with the results in offset order. */
export function atEach<T>(offsets: number[], run: () => Promise<T>): Promise<T[]> {
  return Promise.all(offsets.map((offset) => new Promise<T>((resolve, reject) => at(offset, () => run().then(resolve, reject)))));
}
