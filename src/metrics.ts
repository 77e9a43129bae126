import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { openUpstreamStreams } from "./providers/upstream-ws.ts";

/** Prometheus metrics; one registry per app so tests and several apps in one process stay apart. */
export class Metrics {
  readonly registry = new Registry();

  readonly sessionsOpen = new Gauge({
    name: "voxroute_sessions_open",
    help: "WebSocket sessions currently open",
    labelNames: ["channel"] as const,
    registers: [this.registry],
  });

  /** Read at scrape time: a number that only grows means streams (and their timers) are leaking. */
  readonly upstreamStreams = new Gauge({
    name: "voxroute_upstream_streams_open",
    help: "Realtime WebSocket streams to upstream providers currently open",
    registers: [this.registry],
    collect() {
      this.set(openUpstreamStreams());
    },
  });

  readonly requests = new Counter({
    name: "voxroute_requests_total",
    help: "Requests and sessions by surface, provider and final status",
    labelNames: ["surface", "provider", "status"] as const,
    registers: [this.registry],
  });

  readonly timeToFirstAudio = new Histogram({
    name: "voxroute_time_to_first_audio_seconds",
    help: "From the first text reaching the provider to the first audio byte sent to the client",
    labelNames: ["provider"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 2, 5],
    registers: [this.registry],
  });

  constructor(withDefaults = true) {
    if (!withDefaults) return;
    collectDefaultMetrics({ register: this.registry, prefix: "voxroute_" });
    // Per-space heap statistics walk the whole heap under Bun (tens of ms on a busy server),
    // stalling every open session at each scrape. Total heap and RSS stay.
    for (const metric of this.registry.getMetricsAsArray()) {
      if (metric.name.includes("heap_space")) this.registry.removeSingleMetric(metric.name);
    }
  }
}
