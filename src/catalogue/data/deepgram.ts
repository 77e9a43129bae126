import type { ModelSpec, ProviderSpec } from "../types.ts";

// Pay-as-you-go list prices: Nova-3 streaming $0.0077/min, pre-recorded $0.0043/min (one binding
// per price: streaming and file are priced apart), Flux (English and multilingual) $0.0077/min, Aura-2 $0.030 per 1000 characters.

export const DEEPGRAM_MODELS: ModelSpec[] = [
  { canonical: "deepgram/aura-2", name: "Aura-2", capability: "tts", aliases: [] },
  { canonical: "deepgram/nova-3", name: "Nova-3", capability: "stt", aliases: [] },
  { canonical: "deepgram/flux-general-en", name: "Flux (English)", capability: "stt", aliases: ["flux"] },
  { canonical: "deepgram/flux-general-multi", name: "Flux (multilingual)", capability: "stt", aliases: [] },
];

/** Flux takes raw audio at these rates only (no 22.05 kHz). */
const FLUX_INPUT = ["pcm_8000", "pcm_16000", "pcm_24000", "pcm_44100", "pcm_48000", "ulaw_8000"];

export const DEEPGRAM: ProviderSpec = {
  id: "deepgram",
  name: "Deepgram",
  kind: "cloud",
  // Aura's voice is part of the model name (aura-2-<voice>-<lang>); the adapter composes it.
  requiresVoice: true,
  defaults: {
    tts: { model: "aura-2", voice: "thalia-en" },
    stt: { model: "nova-3" },
  },
  bindings: [
    { capability: "tts", id: "aura-2", canonical: "deepgram/aura-2", streaming: true, synchronous: true, formats: ["pcm", "ulaw", "mp3", "opus", "flac", "aac", "wav"], price: { amount: "0.030", per: "1000 characters" } },
    {
      capability: "stt",
      id: "nova-3",
      canonical: "deepgram/nova-3",
      streaming: true,
      synchronous: true,
      batch: false,
      inputFormats: ["pcm_8000", "pcm_16000", "pcm_22050", "pcm_24000", "pcm_44100", "pcm_48000", "ulaw_8000"],
      price: { amount: "0.0077", per: "minute" },
    },
    { capability: "stt", id: "flux-general-en", canonical: "deepgram/flux-general-en", streaming: true, synchronous: false, batch: false, inputFormats: FLUX_INPUT, price: { amount: "0.0077", per: "minute" } },
    { capability: "stt", id: "flux-general-multi", canonical: "deepgram/flux-general-multi", streaming: true, synchronous: false, batch: false, inputFormats: FLUX_INPUT, price: { amount: "0.0077", per: "minute" } },
  ],
};
