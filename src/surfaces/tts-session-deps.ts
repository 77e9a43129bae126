import type { AppContext } from "../context.ts";
import type { TtsPort, TtsSessionDeps } from "../sessions/tts-events.ts";

/** What a surface's TTS session needs from the router: its providers, cache, logs, metrics and health, speaking to `port`. */
export function ttsSessionDeps(ctx: AppContext, port: TtsPort, surface: string, transport: "ws" | "http" = "ws"): TtsSessionDeps {
  return {
    provider: (pid) => ctx.providers.get(pid),
    ttsCache: ctx.ttsCache,
    port,
    log: ctx.log,
    metrics: ctx.metrics,
    connectTimeoutMs: ctx.config.providerConnectTimeoutMs,
    health: ctx.health,
    surface,
    transport,
  };
}
