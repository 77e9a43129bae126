import { declareCloud } from "../../catalogue/declare.ts";
import { INK_WHISPER_FAMILY } from "./streaming-stt.ts";

// Sonic is billed at one credit per character; at the Scale plan's rate that is $0.03 per 1000
// characters. Ink-Whisper streaming STT lists at $0.13 per hour.

const FORMATS = ["pcm", "ulaw", "wav", "mp3"] as const;
/** The MP3 its sessions ask `/tts/bytes` for. */
export const CARTESIA_MP3 = { sampleRate: 44100, kbps: 128 } as const;

export const CARTESIA = declareCloud("cartesia", {
  name: "Cartesia",
  requiresVoice: true,
  ttsSpeed: true,
  ttsMp3: CARTESIA_MP3,
  cloneFee: "0.30",
  defaults: { tts: { model: "sonic-3", voice: "694f9389-aac1-45b6-b726-9d9369183238" }, stt: { model: "ink-whisper" } },
  tts: [
    { id: "sonic-3", name: "Sonic 3", aliases: ["sonic-latest"], formats: FORMATS, price: { amount: "0.03", per: "1000 characters" } },
    { id: "sonic-2", name: "Sonic 2", formats: FORMATS, price: { amount: "0.03", per: "1000 characters" } },
  ],
  stt: [{ id: "ink-whisper", name: "Ink-Whisper", streaming: true, synchronous: true, batch: false, inputFormats: INK_WHISPER_FAMILY.inputFormats, price: { amount: "0.13", per: "hour" } }],
});
