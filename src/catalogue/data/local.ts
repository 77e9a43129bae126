import type { ModelSpec, PriceSpec, ProviderSpec } from "../types.ts";

// Embedded engines. Priced low so that a welcome grant lets a newcomer try them at once.

export const LOCAL_MODELS: ModelSpec[] = [
  { canonical: "cmu/flite", name: "Flite", capability: "tts", aliases: ["flite-1"] },
  { canonical: "svox/pico", name: "SVOX Pico", capability: "tts", aliases: ["svox-pico", "pico-tts"] },
  { canonical: "espeak/espeak-ng", name: "eSpeak NG", capability: "tts", aliases: ["espeak"] },
  { canonical: "cmu/pocketsphinx-en-us", name: "PocketSphinx (US English)", capability: "stt", aliases: ["pocketsphinx"] },
];

interface LocalEngineEntry {
  id: string;
  name: string;
  requiresVoice: boolean;
  model: string;
  canonical: string;
  voice: string;
  price: PriceSpec;
}

/** Every embedded engine streams and synthesizes, as PCM or as MP3 encoded in its worker. */
function localEngine(e: LocalEngineEntry): ProviderSpec {
  return {
    id: e.id,
    name: e.name,
    kind: "local",
    requiresVoice: e.requiresVoice,
    defaults: { tts: { model: e.model, voice: e.voice } },
    bindings: [{ capability: "tts", id: e.model, canonical: e.canonical, streaming: true, synchronous: true, formats: ["pcm", "mp3"], price: e.price }],
  };
}

export const FLITE = localEngine({
  id: "flite",
  name: "Flite (embedded)",
  requiresVoice: false,
  model: "flite",
  canonical: "cmu/flite",
  voice: "slt",
  price: { amount: "0.0000125", per: "character" },
});

export const SVOX_PICO = localEngine({
  id: "svox-pico",
  name: "SVOX Pico (embedded)",
  // Pico has no built-in voice: the voice names the language resource pair to load.
  requiresVoice: true,
  model: "pico",
  canonical: "svox/pico",
  voice: "en-US",
  price: { amount: "0.0000125", per: "character" },
});

export const ESPEAK_NG = localEngine({
  id: "espeak-ng",
  name: "eSpeak NG (embedded, GPL-3.0, opt-in)",
  requiresVoice: false,
  model: "espeak-ng",
  canonical: "espeak/espeak-ng",
  voice: "en-us",
  price: { amount: "0.00001", per: "character" },
});

/** CMU PocketSphinx from Debian's packages: served when the library and model are installed. */
export const POCKETSPHINX: ProviderSpec = {
  id: "pocketsphinx",
  name: "PocketSphinx (embedded)",
  kind: "local",
  requiresVoice: false,
  defaults: { stt: { model: "pocketsphinx-en-us" } },
  bindings: [
    {
      capability: "stt",
      id: "pocketsphinx-en-us",
      canonical: "cmu/pocketsphinx-en-us",
      streaming: true,
      synchronous: true,
      batch: false,
      inputFormats: ["pcm_16000"],
      price: { amount: "0.0006", per: "minute" },
    },
  ],
};
