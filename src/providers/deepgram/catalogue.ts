import { declareCloud } from "../../catalogue/declare.ts";
import { FLUX_FAMILY } from "./flux-stt.ts";
import { NOVA_FAMILY } from "./stt.ts";

// Pay-as-you-go list prices: Nova-3 streaming $0.0077/min, pre-recorded $0.0043/min (one binding
// per price: streaming and file are priced apart), Flux (English and multilingual) $0.0077/min, Aura-2 $0.030 per 1000 characters.

const FLUX = { streaming: true, synchronous: false, batch: false, inputFormats: FLUX_FAMILY.inputFormats };

export const DEEPGRAM = declareCloud("deepgram", {
  name: "Deepgram",
  // Aura's voice is part of the model name (aura-2-<voice>-<lang>); the adapter composes it.
  requiresVoice: true,
  ttsSpeed: true,
  defaults: { tts: { model: "aura-2", voice: "thalia-en" }, stt: { model: "nova-3" } },
  tts: [{ id: "aura-2", name: "Aura-2", formats: ["pcm", "ulaw", "mp3", "opus", "flac", "aac", "wav"], price: { amount: "0.030", per: "1000 characters" } }],
  stt: [
    { id: "nova-3", name: "Nova-3", streaming: true, synchronous: true, batch: false, inputFormats: NOVA_FAMILY.inputFormats, price: { amount: "0.0077", per: "minute" } },
    { id: "flux-general-en", name: "Flux (English)", aliases: ["flux"], ...FLUX, price: { amount: "0.0077", per: "minute" } },
    { id: "flux-general-multi", name: "Flux (multilingual)", ...FLUX, price: { amount: "0.0077", per: "minute" } },
  ],
});
