import { type Env, envReader, integer } from "./env.ts";

// The router's TTS cache (docs/tts-cache.md).

export interface TtsCacheConfig {
  /** `TTS_CACHE_BYTES`: bytes of utterances kept in memory; 0 turns the cache off. */
  bytes: number;
  /** `TTS_CACHE_DIR`: a directory whose entries outlive a restart (none: memory only). */
  dir?: string;
  /** `TTS_CACHE_DIR_BYTES`: the most the directory holds. */
  dirBytes: number;
  /** `TTS_CACHE_SCOPE`: `tenant` (a tenant hits only its own entries) or `shared`. */
  scope: "tenant" | "shared";
  /** `TTS_CACHE_PROVIDERS`: `all`, or the ids of the providers whose audio may be kept. */
  providers: "all" | string[];
  /** `TTS_CACHE_PRICE_FACTOR`: a hit's characters cost the model's price times this (a decimal). */
  priceFactor: string;
}

export function ttsCache(env: Env): TtsCacheConfig {
  const scope = env.TTS_CACHE_SCOPE || "tenant";
  if (scope !== "tenant" && scope !== "shared") throw new Error(`config: TTS_CACHE_SCOPE must be tenant or shared, got "${scope}"`);
  const providers = envReader(env).list("TTS_CACHE_PROVIDERS");
  const priceFactor = env.TTS_CACHE_PRICE_FACTOR || "1";
  if (!/^\d+(\.\d{1,6})?$/.test(priceFactor)) throw new Error(`config: TTS_CACHE_PRICE_FACTOR must be a decimal >= 0 with at most 6 decimals, got "${priceFactor}"`);
  return {
    bytes: integer(env, "TTS_CACHE_BYTES", 64 * 1024 * 1024),
    dir: env.TTS_CACHE_DIR || undefined,
    dirBytes: integer(env, "TTS_CACHE_DIR_BYTES", 1024 * 1024 * 1024, 1),
    scope,
    providers: providers.length === 0 || providers.includes("all") ? "all" : providers,
    priceFactor,
  };
}
