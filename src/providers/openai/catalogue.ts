import { declareCloud } from "../../catalogue/declare.ts";
import { OPENAI_REALTIME_FAMILY } from "./realtime-stt.ts";

// tts-1 / tts-1-hd are priced per 1M characters. gpt-4o-mini-tts is token-priced upstream; the
// published estimate is $0.015 per minute of audio, carried here as $0.015 per 1000 characters.

const FORMATS = ["mp3", "opus", "aac", "flac", "wav", "pcm"] as const;
/** OpenAI's speech is 24 kHz mono, its PCM and its MP3 alike. */
export const OPENAI_TTS_RATE = 24000;
const REALTIME = { streaming: true, synchronous: true, batch: false, inputFormats: OPENAI_REALTIME_FAMILY.inputFormats };

export const OPENAI = declareCloud("openai", {
  name: "OpenAI",
  requiresVoice: true,
  ttsSpeed: true,
  ttsMp3: { sampleRate: OPENAI_TTS_RATE },
  defaults: { tts: { model: "gpt-4o-mini-tts", voice: "alloy" }, stt: { model: "gpt-4o-transcribe" } },
  tts: [
    { id: "tts-1", name: "TTS-1", formats: FORMATS, price: { amount: "15", per: "1000000 characters" } },
    { id: "tts-1-hd", name: "TTS-1 HD", formats: FORMATS, price: { amount: "30", per: "1000000 characters" } },
    {
      id: "gpt-4o-mini-tts",
      name: "GPT-4o mini TTS",
      aliases: ["gpt-4o-mini-tts-2025-12-15"],
      formats: FORMATS,
      instructions: { mode: "native", honored: true },
      price: { amount: "0.015", per: "1000 characters" },
    },
  ],
  stt: [
    { id: "whisper-1", name: "Whisper", aliases: ["whisper"], streaming: false, synchronous: true, batch: false, price: { amount: "0.006", per: "minute" } },
    { id: "gpt-4o-transcribe", name: "GPT-4o Transcribe", ...REALTIME, price: { amount: "0.006", per: "minute" } },
    { id: "gpt-4o-mini-transcribe", name: "GPT-4o mini Transcribe", aliases: ["gpt-4o-mini-transcribe-2025-12-15"], ...REALTIME, price: { amount: "0.003", per: "minute" } },
  ],
});
