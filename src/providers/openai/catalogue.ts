import type { ModelSpec, ProviderSpec } from "../../catalogue/types.ts";
import { OPENAI_REALTIME_FAMILY } from "./realtime-stt.ts";

// tts-1 / tts-1-hd are priced per 1M characters. gpt-4o-mini-tts is token-priced upstream; the
// published estimate is $0.015 per minute of audio, carried here as $0.015 per 1000 characters.

export const OPENAI_MODELS: ModelSpec[] = [
  { canonical: "openai/tts-1", name: "TTS-1", capability: "tts", aliases: [] },
  { canonical: "openai/tts-1-hd", name: "TTS-1 HD", capability: "tts", aliases: [] },
  { canonical: "openai/gpt-4o-mini-tts", name: "GPT-4o mini TTS", capability: "tts", aliases: ["gpt-4o-mini-tts-2025-12-15"] },
  { canonical: "openai/whisper-1", name: "Whisper", capability: "stt", aliases: ["whisper"] },
  { canonical: "openai/gpt-4o-transcribe", name: "GPT-4o Transcribe", capability: "stt", aliases: [] },
  { canonical: "openai/gpt-4o-mini-transcribe", name: "GPT-4o mini Transcribe", capability: "stt", aliases: ["gpt-4o-mini-transcribe-2025-12-15"] },
];

const FORMATS = ["mp3", "opus", "aac", "flac", "wav", "pcm"] as const;

export const OPENAI: ProviderSpec = {
  id: "openai",
  name: "OpenAI",
  kind: "cloud",
  requiresVoice: true,
  defaults: {
    tts: { model: "gpt-4o-mini-tts", voice: "alloy" },
    stt: { model: "gpt-4o-transcribe" },
  },
  bindings: [
    { capability: "tts", id: "tts-1", canonical: "openai/tts-1", streaming: true, synchronous: true, formats: [...FORMATS], price: { amount: "15", per: "1000000 characters" } },
    { capability: "tts", id: "tts-1-hd", canonical: "openai/tts-1-hd", streaming: true, synchronous: true, formats: [...FORMATS], price: { amount: "30", per: "1000000 characters" } },
    {
      capability: "tts",
      id: "gpt-4o-mini-tts",
      canonical: "openai/gpt-4o-mini-tts",
      streaming: true,
      synchronous: true,
      formats: [...FORMATS],
      instructions: { mode: "native", honored: true },
      price: { amount: "0.015", per: "1000 characters" },
    },
    { capability: "stt", id: "whisper-1", canonical: "openai/whisper-1", streaming: false, synchronous: true, batch: false, price: { amount: "0.006", per: "minute" } },
    {
      capability: "stt",
      id: "gpt-4o-transcribe",
      canonical: "openai/gpt-4o-transcribe",
      streaming: true,
      synchronous: true,
      batch: false,
      inputFormats: OPENAI_REALTIME_FAMILY.inputFormats,
      price: { amount: "0.006", per: "minute" },
    },
    {
      capability: "stt",
      id: "gpt-4o-mini-transcribe",
      canonical: "openai/gpt-4o-mini-transcribe",
      streaming: true,
      synchronous: true,
      batch: false,
      inputFormats: OPENAI_REALTIME_FAMILY.inputFormats,
      price: { amount: "0.003", per: "minute" },
    },
  ],
};
