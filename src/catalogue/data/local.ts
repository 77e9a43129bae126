import type { ModelSpec, ProviderSpec } from "../types.ts";

// Embedded engines. Priced low so that a welcome grant lets a newcomer try them at once.

export const LOCAL_MODELS: ModelSpec[] = [
  { canonical: "cmu/flite", name: "Flite", capability: "tts", aliases: ["flite-1"] },
  { canonical: "svox/pico", name: "SVOX Pico", capability: "tts", aliases: ["svox-pico", "pico-tts"] },
  { canonical: "espeak/espeak-ng", name: "eSpeak NG", capability: "tts", aliases: ["espeak"] },
];

const LOCAL_TTS = { capability: "tts", streaming: true, synchronous: true, formats: ["pcm", "mp3"] } as const;

export const FLITE: ProviderSpec = {
  id: "flite",
  name: "Flite (embedded)",
  kind: "local",
  requiresVoice: false,
  defaults: { tts: { model: "flite", voice: "slt" } },
  bindings: [{ ...LOCAL_TTS, formats: [...LOCAL_TTS.formats], id: "flite", canonical: "cmu/flite", price: { amount: "0.0000125", per: "character" } }],
};

export const SVOX_PICO: ProviderSpec = {
  id: "svox-pico",
  name: "SVOX Pico (embedded)",
  kind: "local",
  // Pico has no built-in voice: the voice names the language resource pair to load.
  requiresVoice: true,
  defaults: { tts: { model: "pico", voice: "en-US" } },
  bindings: [{ ...LOCAL_TTS, formats: [...LOCAL_TTS.formats], id: "pico", canonical: "svox/pico", price: { amount: "0.0000125", per: "character" } }],
};

export const ESPEAK_NG: ProviderSpec = {
  id: "espeak-ng",
  name: "eSpeak NG (embedded, GPL-3.0, opt-in)",
  kind: "local",
  requiresVoice: false,
  defaults: { tts: { model: "espeak-ng", voice: "en-us" } },
  bindings: [{ ...LOCAL_TTS, formats: [...LOCAL_TTS.formats], id: "espeak-ng", canonical: "espeak/espeak-ng", price: { amount: "0.00001", per: "character" } }],
};
