import { readFileSync } from "node:fs";

// A process's resident memory, read from /proc, as the memory tests and benchmarks measure it.

/** The resident set of process `pid`, in KiB. */
export const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]);

/** The peak resident memory of process `pid` while `work` runs (sampled every `everyMs`), above what it held before. */
export async function rssGrowthDuring<T>(pid: number, work: () => Promise<T>, everyMs = 10): Promise<{ result: T; growthMiB: number }> {
  const before = rssKiB(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssKiB(pid))), everyMs);
  try {
    const result = await work();
    peak = Math.max(peak, rssKiB(pid));
    return { result, growthMiB: (peak - before) / 1024 };
  } finally {
    clearInterval(sampler);
  }
}
