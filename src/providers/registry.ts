import type { EnginePool } from "../../workers/engine-pool.ts";
import { LocalEngineProvider } from "./local-engine-provider.ts";
import type { TtsProvider } from "./types.ts";

/** The TTS adapters this build has, by provider id. Cloud adapters join here as they land. */
export function ttsProviders(pool: EnginePool): TtsProvider[] {
  return [
    new LocalEngineProvider("flite", "flite", pool),
    new LocalEngineProvider("svox-pico", "svox-pico", pool),
    new LocalEngineProvider("espeak-ng", "espeak-ng", pool),
  ];
}
