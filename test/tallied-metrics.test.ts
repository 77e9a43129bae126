import { describe, expect, test } from "bun:test";
import { Counter, Registry } from "prom-client";
import { talliedCounter } from "../src/util/tallied-metrics.ts";

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

  test("reset drops what was kept", async () => {
    const { plain, tallied, counters } = pair();
    for (const c of counters) c.inc({ provider: "openai", kind: "final" }, 5);
    for (const c of counters) c.reset();
    for (const c of counters) c.inc({ provider: "deepgram", kind: "final" });
    expect(await tallied.metrics()).toBe(await plain.metrics());
  });
});
