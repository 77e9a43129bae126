import type { ModelSpec, ProviderSpec } from "../../catalogue/types.ts";
import { FLUX_FAMILY } from "./flux-stt.ts";
import { NOVA_FAMILY } from "./stt.ts";

// Pay-as-you-go list prices: Nova-3 streaming $0.0077/min, pre-recorded $0.0043/min (one binding
// per price: streaming and file are priced apart), Flux (English and multilingual) $0.0077/min, Aura-2 $0.030 per 1000 characters.

export const DEEPGRAM_MODELS: ModelSpec[] = [
  { canonical: "deepgram/aura-2", name: "Aura-2", capability: "tts", aliases: [] },
  { canonical: "deepgram/nova-3", name: "Nova-3", capability: "stt", aliases: [] },
  { canonical: "deepgram/flux-general-en", name: "Flux (English)", capability: "stt", aliases: ["flux"] },
  { canonical: "deepgram/flux-general-multi", name: "Flux (multilingual)", capability: "stt", aliases: [] },
];

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
    {
      capability: "tts",
      id: "aura-2",
      canonical: "deepgram/aura-2",
      streaming: true,
      synchronous: true,
      formats: ["pcm", "ulaw", "mp3", "opus", "flac", "aac", "wav"],
      price: { amount: "0.030", per: "1000 characters" },
    },
    {
      capability: "stt",
      id: "nova-3",
      canonical: "deepgram/nova-3",
      streaming: true,
      synchronous: true,
      batch: false,
      inputFormats: NOVA_FAMILY.inputFormats,
      price: { amount: "0.0077", per: "minute" },
    },
    {
      capability: "stt",
      id: "flux-general-en",
      canonical: "deepgram/flux-general-en",
      streaming: true,
      synchronous: false,
      batch: false,
      inputFormats: FLUX_FAMILY.inputFormats,
      price: { amount: "0.0077", per: "minute" },
    },
    {
      capability: "stt",
      id: "flux-general-multi",
      canonical: "deepgram/flux-general-multi",
      streaming: true,
      synchronous: false,
      batch: false,
      inputFormats: FLUX_FAMILY.inputFormats,
      price: { amount: "0.0077", per: "minute" },
    },
  ],
};
