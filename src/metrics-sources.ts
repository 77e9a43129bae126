import type { Ledger } from "./ledger/ledger.ts";
import type { Meter } from "./ledger/meter.ts";
import type { Limiter } from "./limits/limiter.ts";
import type { Metrics, PoolLoad } from "./metrics.ts";
import { openUpstreamStreams } from "./providers/upstream-ws.ts";

/**
 * Feeds the metrics that the ledger and the worker pools know of: usage as settled (credits by
 * capability, characters or seconds by provider and model), ledger write times, pools' load, and
 * the upstream streams the providers hold open, and the limits' refusals and Redis.
 */
export function feedMetrics(metrics: Metrics, sources: { meter: Meter; ledger: Ledger; pools: Record<string, { load(): PoolLoad }>; limits?: Limiter }): void {
  sources.meter.observe(({ binding, units, credits }) => {
    const labels = { provider: binding.provider.id, model: binding.canonical };
    metrics.creditsBilled.inc({ ...labels, capability: binding.capability }, credits);
    if (binding.capability === "tts") metrics.characters.inc(labels, units);
    else metrics.audioSeconds.inc(labels, units);
  });
  sources.ledger.observeWrites((seconds) => metrics.ledgerWrites.observe(seconds));
  for (const [name, pool] of Object.entries(sources.pools)) metrics.watchPool(name, () => pool.load());
  metrics.watchUpstreamStreams(openUpstreamStreams);
  sources.limits?.observe({
    refused: ({ kind, scope }) => metrics.limitRefusals.inc({ kind, scope }),
    redisUp: (up) => metrics.limitsRedisUp.set(up ? 1 : 0),
  });
}
