import type { ModelSpec, ProviderSpec } from "../../catalogue/types.ts";
import { INK_WHISPER_FAMILY } from "./streaming-stt.ts";

// Sonic is billed at one credit per character; at the Scale plan's rate that is $0.03 per 1000
// characters. Ink-Whisper streaming STT lists at $0.13 per hour.

export const CARTESIA_MODELS: ModelSpec[] = [
  { canonical: "cartesia/sonic-3", name: "Sonic 3", capability: "tts", aliases: ["sonic-latest"] },
  { canonical: "cartesia/sonic-2", name: "Sonic 2", capability: "tts", aliases: [] },
  { canonical: "cartesia/ink-whisper", name: "Ink-Whisper", capability: "stt", aliases: [] },
];

export const CARTESIA: ProviderSpec = {
  id: "cartesia",
  name: "Cartesia",
  kind: "cloud",
  requiresVoice: true,
  defaults: {
    tts: { model: "sonic-3", voice: "694f9389-aac1-45b6-b726-9d9369183238" },
    stt: { model: "ink-whisper" },
  },
  bindings: [
    { capability: "tts", id: "sonic-3", canonical: "cartesia/sonic-3", streaming: true, synchronous: true, formats: ["pcm", "ulaw", "wav", "mp3"], price: { amount: "0.03", per: "1000 characters" } },
    { capability: "tts", id: "sonic-2", canonical: "cartesia/sonic-2", streaming: true, synchronous: true, formats: ["pcm", "ulaw", "wav", "mp3"], price: { amount: "0.03", per: "1000 characters" } },
    {
      capability: "stt",
      id: "ink-whisper",
      canonical: "cartesia/ink-whisper",
      streaming: true,
      synchronous: true,
      batch: false,
      inputFormats: INK_WHISPER_FAMILY.inputFormats,
      price: { amount: "0.13", per: "hour" },
    },
  ],
};
