import { type Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import { TalliedHistogram, talliedCounter } from "./util/tallied-metrics.ts";

/** What a worker pool holds now: lanes open on its workers, and lanes waiting for a seat. */
export interface PoolLoad {
  lanes: number;
  waiting: number;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 2, 5];

/**
 * Prometheus metrics (docs/operations.md#metrics lists them, docs/grafana-dashboard.json charts
 * them); one registry per app so tests and several apps in one process stay apart. Counters are
 * tallied: summed per label set and handed to prom-client at each scrape (util/tallied-metrics.ts).
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly pools = new Map<string, () => PoolLoad>();
  private countUpstreamStreams = () => 0;
  private bindings: () => { provider: string; model: string; up: boolean }[] = () => [];

  /** Sessions open now, by channel: counted by the session registry, read at scrape time (a channel once seen stays, at 0). */
  readonly openSessions = new Map<string, number>();

  readonly sessionsOpen = new Gauge({
    name: "voxroute_sessions_open",
    help: "Sessions currently open (WebSocket sessions, and streamed HTTP speech and transcription)",
    labelNames: ["channel"] as const,
    registers: [this.registry],
    collect: () => {
      for (const [channel, open] of this.openSessions) this.sessionsOpen.set({ channel }, open);
    },
  });

  /** Read at scrape time: a number that only grows means streams (and their timers) are leaking. */
  readonly upstreamStreams = new Gauge({
    name: "voxroute_upstream_streams_open",
    help: "Realtime WebSocket streams to upstream providers currently open",
    registers: [this.registry],
    collect: () => {
      this.upstreamStreams.set(this.countUpstreamStreams());
    },
  });

  /** Read at scrape time from the router's provider health (docs/routing.md#provider-health). */
  readonly providerUp = new Gauge({
    name: "voxroute_provider_up",
    help: "Whether a binding (provider × model) is taken by new sessions: 1 up or degraded, 0 down (its circuit open for a cooldown)",
    labelNames: ["provider", "model"] as const,
    registers: [this.registry],
    collect: () => {
      for (const b of this.bindings()) this.providerUp.set({ provider: b.provider, model: b.model }, b.up ? 1 : 0);
    },
  });

  readonly requests = this.counter("voxroute_requests_total", "Sessions by surface, provider and outcome (completed, cut_off, client_left, failed, shutdown)", [
    "surface",
    "provider",
    "status",
  ] as const);

  readonly httpDuration = new TalliedHistogram({
    name: "voxroute_http_request_duration_seconds",
    help: "HTTP requests from arrival to the end of their work (a streamed body's included), by route pattern, method and status",
    labelNames: ["route", "method", "status"] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly sessionDuration = new TalliedHistogram({
    name: "voxroute_session_duration_seconds",
    help: "Sessions from start to end, by surface, transport (ws or http) and outcome",
    labelNames: ["surface", "transport", "outcome"] as const,
    buckets: [0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 900, 1800, 3600],
    registers: [this.registry],
  });

  readonly timeToFirstAudio = new TalliedHistogram({
    name: "voxroute_time_to_first_audio_seconds",
    help: "From the first text reaching the provider to the first audio byte sent to the client",
    labelNames: ["provider"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly sttEventLatency = new TalliedHistogram({
    name: "voxroute_stt_event_latency_seconds",
    help: "From the arrival of the audio a transcript ends with to the transcript, by provider and kind (interim, final)",
    labelNames: ["provider", "kind"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly creditsBilled = this.counter("voxroute_credits_billed_total", "Credits billed (1 USD = 1,000,000 credits), by provider, model and capability", ["provider", "model", "capability"] as const);

  readonly characters = this.counter("voxroute_characters_total", "Characters of text billed for speech, by provider and model", ["provider", "model"] as const);

  readonly audioSeconds = this.counter("voxroute_audio_seconds_total", "Seconds of audio billed for transcription, by provider and model", ["provider", "model"] as const);

  readonly ttsCacheHits = this.counter("voxroute_tts_cache_hits_total", "Utterances played from the TTS cache, by provider", ["provider"] as const);

  readonly ttsCacheMisses = this.counter("voxroute_tts_cache_misses_total", "Utterances looked up in the TTS cache and synthesized, by provider", ["provider"] as const);

  readonly ttsCacheEvictions = this.counter("voxroute_tts_cache_evictions_total", "TTS cache entries let go to stay within their bytes, by tier (memory, disk)", ["tier"] as const);

  readonly ttsCacheBytes = new Gauge({ name: "voxroute_tts_cache_bytes", help: "Bytes the TTS cache holds, by tier (memory, disk)", labelNames: ["tier"] as const, registers: [this.registry] });

  readonly fallbacks = this.counter("voxroute_fallbacks_total", "Candidates given up for the next one, by the provider left and why", ["provider", "reason"] as const);

  readonly upstreamErrors = this.counter("voxroute_upstream_errors_total", "Provider failures, by provider and the error code the client was given", ["provider", "code"] as const);

  readonly refusals = this.counter(
    "voxroute_refusals_total",
    "HTTP requests answered 4xx with an error code (401, 402, 400, 429, …; WebSocket upgrades refused before the upgrade too), by surface and code; sessions closed after their upgrade are not counted",
    ["surface", "code"] as const,
  );

  readonly limitRefusals = this.counter(
    "voxroute_limit_refusals_total",
    "Requests and session opens refused by a tenant's or key's limits (docs/limits.md), by kind (rate, concurrency) and scope (tenant, key)",
    ["kind", "scope"] as const,
  );

  readonly limitsRedisUp = new Gauge({
    name: "voxroute_limits_redis_up",
    help: "Whether the limits' shared counters in Redis answer: 1 yes, 0 no (the instance counts on its own, or refuses with LIMITS_FAIL_CLOSED) or no REDIS_URL",
    registers: [this.registry],
  });

  readonly ledgerWrites = new TalliedHistogram({
    name: "voxroute_ledger_write_seconds",
    help: "One ledger transaction (a batch of settles, holds and credits) from start to commit",
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });

  readonly poolLanes = this.poolGauge("voxroute_pool_lanes", "Lanes (sessions) open on a worker pool's workers: embedded TTS engines, local STT audio, file decoding", (load) => load.lanes);

  readonly poolWaiting = this.poolGauge("voxroute_pool_waiting", "Lanes queued for a free seat on a worker pool", (load) => load.waiting);

  private counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
    return talliedCounter({ name, help, labelNames, registers: [this.registry] });
  }

  /** A gauge of every watched pool, read at each scrape. */
  private poolGauge(name: string, help: string, read: (load: PoolLoad) => number): Gauge<"pool"> {
    const gauge: Gauge<"pool"> = new Gauge({
      name,
      help,
      labelNames: ["pool"] as const,
      registers: [this.registry],
      collect: () => {
        for (const [pool, load] of this.pools) gauge.set({ pool }, read(load()));
      },
    });
    return gauge;
  }

  constructor(withDefaults = true) {
    if (!withDefaults) return;
    collectDefaultMetrics({ register: this.registry, prefix: "voxroute_" });
    // Per-space heap statistics walk the whole heap under Bun (tens of ms on a busy server),
    // stalling every open session at each scrape. Total heap and RSS stay.
    for (const metric of this.registry.getMetricsAsArray()) {
      if (metric.name.includes("heap_space")) this.registry.removeSingleMetric(metric.name);
    }
  }

  /** A worker pool whose load is read at each scrape. */
  watchPool(name: string, load: () => PoolLoad): void {
    this.pools.set(name, load);
  }

  /** The bindings whose health `voxroute_provider_up` shows, read at each scrape. */
  watchBindings(read: () => { provider: string; model: string; up: boolean }[]): void {
    this.bindings = read;
  }

  watchUpstreamStreams(count: () => number): void {
    this.countUpstreamStreams = count;
  }
}
