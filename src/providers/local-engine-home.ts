import type { ModelSpec, PriceSpec, ProviderSpec } from "../catalogue/types.ts";
import type { EngineName } from "../../workers/engine-protocol.ts";
import type { ProviderRuntime } from "./home.ts";
import { LocalEngineProvider } from "./local-engine-provider.ts";

// Embedded TTS engines run in the engine workers. Priced low so that a welcome grant lets a
// newcomer try them at once.

interface LocalEngineEntry {
  name: string;
  /** Default false: the engine has a voice of its own. */
  requiresVoice?: boolean;
  model: ModelSpec;
  /** The engine's own model id. */
  modelId: string;
  voice: string;
  price: PriceSpec;
  /** The engine honours the `speed` option (its own pace setting), everywhere or within a range. */
  ttsSpeed?: ProviderSpec["ttsSpeed"];
}

/** Every embedded engine streams and synthesizes, as PCM or as MP3 encoded in its worker. */
export function localEngineSpec(id: EngineName, e: LocalEngineEntry): ProviderSpec {
  return {
    id,
    name: e.name,
    kind: "local",
    requiresVoice: e.requiresVoice ?? false,
    ...(e.ttsSpeed ? { ttsSpeed: e.ttsSpeed } : {}),
    defaults: { tts: { model: e.modelId, voice: e.voice } },
    bindings: [{ capability: "tts", id: e.modelId, canonical: e.model.canonical, streaming: true, synchronous: true, formats: ["pcm", "mp3"], price: e.price }],
  };
}

/** Its adapter is always built (its voices are listed whether or not it is served). */
export const localEngineAdapter =
  <S>(id: EngineName) =>
  (_settings: S, runtime: ProviderRuntime) =>
    new LocalEngineProvider(id, id, runtime.engines);
