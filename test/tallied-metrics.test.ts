import { describe, expect, test } from "bun:test";
import { Counter, Histogram, Registry } from "prom-client";
import { TalliedHistogram, talliedCounter } from "../src/util/tallied-metrics.ts";

// A tallied counter hands prom-client its sums when it is collected: its exposition must be the
// one a plain prom-client counter given the same calls prints, whenever it is scraped.

const labelNames = ["provider", "kind"] as const;

function pair() {
  const plain = new Registry();
  const tallied = new Registry();
  return {
    plain,
    tallied,
    counters: [new Counter({ name: "c_total", help: "c", labelNames, registers: [plain] }), talliedCounter({ name: "c_total", help: "c", labelNames, registers: [tallied] })],
  };
}

describe("tallied counters", () => {
  test("the exposition equals prom-client's own for the same calls, scraped between calls and at the end", async () => {
    const { plain, tallied, counters } = pair();
    for (let i = 0; i < 10_000; i++) {
      const labels = { provider: ["openai", "deepgram", "fixed"][i % 3]!, kind: i % 2 ? "final" : "interim" };
      for (const c of counters) c.inc(labels, i % 7);
      if (i === 3_000) expect(await tallied.metrics()).toBe(await plain.metrics());
    }
    for (const c of counters) c.inc({ provider: "once", kind: "final" });
    expect(await tallied.metrics()).toBe(await plain.metrics());
    expect(await tallied.metrics()).toBe(await plain.metrics()); // collected twice: nothing handed over twice
    const interim = (await counters[1]!.get()).values.find((v) => v.labels.provider === "openai" && v.labels.kind === "interim");
    let expected = 0;
    for (let i = 0; i < 10_000; i += 6) expected += i % 7;
    expect(interim?.value).toBe(expected);
  });

  test("a label object changed after the call does not change what was counted", async () => {
    const labels = { provider: "openai", kind: "final" };
    const counter = talliedCounter({ name: "c_total", help: "c", labelNames, registers: [] });
    counter.inc(labels, 2);
    labels.provider = "changed";
    expect((await counter.get()).values).toEqual([{ labels: { provider: "openai", kind: "final" }, value: 2 }]);
  });

  test("a value prom-client refuses throws where it is given, and the scrape still works", async () => {
    const { plain, tallied, counters } = pair();
    for (const c of counters) expect(() => c.inc({ provider: "openai", kind: "final" }, -1)).toThrow();
    for (const c of counters) c.inc({ provider: "openai", kind: "final" }, 3);
    expect(await tallied.metrics()).toBe(await plain.metrics());
  });

  test("a label outside its names throws where it is given, also on a label set already counted, and the scrape still works", async () => {
    const { plain, tallied, counters } = pair();
    for (const c of counters) c.inc({ provider: "openai", kind: "final" }, 2);
    for (const c of counters) expect(() => c.inc({ provider: "openai", kind: "final", region: "eu" } as never, 1)).toThrow('Added label "region" is not included in initial labelset');
    expect(await tallied.metrics()).toBe(await plain.metrics());
  });

  test("reset drops what was kept", async () => {
    const { plain, tallied, counters } = pair();
    for (const c of counters) c.inc({ provider: "openai", kind: "final" }, 5);
    for (const c of counters) c.reset();
    for (const c of counters) c.inc({ provider: "deepgram", kind: "final" });
    expect(await tallied.metrics()).toBe(await plain.metrics());
  });
});

describe("tallied histograms", () => {
  const buckets = [0.005, 0.01, 0.05, 0.1, 1];
  function histograms(names: readonly string[]) {
    const plain = new Registry();
    const tallied = new Registry();
    const config = { name: "h_seconds", help: "h", labelNames: names, buckets };
    return { plain, tallied, histograms: [new Histogram({ ...config, registers: [plain] }), new TalliedHistogram({ ...config, registers: [tallied] })] as const };
  }

  test("the same observations give prom-client's exposition and get(), value for value: on the bounds, past the last, labels in any order", async () => {
    const { plain, tallied, histograms: both } = histograms(labelNames);
    const values = [0, 0.005, 0.0051, 0.01, 0.07, 0.1, 1, 1.5, 30, 0.003];
    for (let i = 0; i < 2_000; i++) {
      const labels = i % 3 ? { provider: ["openai", "deepgram", "local"][i % 3]!, kind: i % 2 ? "final" : "interim" } : { kind: "final", provider: "openai" };
      for (const h of both) h.observe(labels, values[i % values.length]! * (1 + (i % 5) / 1000));
    }
    expect(await tallied.metrics()).toBe(await plain.metrics());
    expect(await both[1].get()).toEqual((await both[0].get()) as never);
  });

  test("without labels: the one series shows from the start, and after reset none until the next observation, as prom-client's", async () => {
    const { plain, tallied, histograms: both } = histograms([]);
    expect(await tallied.metrics()).toBe(await plain.metrics());
    for (const h of both) h.observe(0.02);
    expect(await tallied.metrics()).toBe(await plain.metrics());
    for (const h of both) h.reset();
    expect(await tallied.metrics()).toBe(await plain.metrics());
    for (const h of both) h.observe(3);
    expect(await tallied.metrics()).toBe(await plain.metrics());
  });

  test("a label outside its names and a value that is no number throw, as prom-client's do, and what was counted stays right", async () => {
    const { plain, tallied, histograms: both } = histograms(labelNames);
    for (const h of both) h.observe({ provider: "openai", kind: "final" }, 0.03);
    for (const h of both) {
      expect(() => h.observe({ provider: "openai", region: "eu" } as never, 1)).toThrow('Added label "region" is not included in initial labelset');
      expect(() => h.observe({ provider: "openai", kind: "final", region: "eu" } as never, 1)).toThrow('Added label "region" is not included in initial labelset');
      expect(() => h.observe({ provider: "openai", kind: "final" }, Number.NaN)).toThrow("Value is not a valid number");
      h.observe({ provider: "openai", kind: "final" }, 0.2);
    }
    expect(await tallied.metrics()).toBe(await plain.metrics());
  });

  test('a label left out is one series with the label undefined, apart from the text "undefined", as in prom-client\'s', async () => {
    const { plain, tallied, histograms: both } = histograms(labelNames);
    for (const h of both) {
      h.observe({ provider: "openai" }, 0.02);
      h.observe({ provider: "openai", kind: undefined } as never, 0.2);
      h.observe({ provider: "openai", kind: "undefined" }, 2);
    }
    expect(await tallied.metrics()).toBe(await plain.metrics());
  });
});
