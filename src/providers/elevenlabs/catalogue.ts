import { declareCloud } from "../../catalogue/declare.ts";

// List prices per 1000 characters / per hour of audio, as published for API usage.

const FORMATS = ["mp3", "pcm", "ulaw", "opus"] as const;
/** The MP3 its sessions ask for (`mp3_44100_128`), ElevenLabs' default. */
export const ELEVENLABS_MP3 = { sampleRate: 44100, kbps: 128 } as const;
const FILES = { streaming: false, synchronous: true, batch: false };

export const ELEVENLABS = declareCloud("elevenlabs", {
  name: "ElevenLabs",
  requiresVoice: true,
  ttsSpeed: true,
  ttsMp3: ELEVENLABS_MP3,
  cloneFee: "0.30",
  defaults: { tts: { model: "eleven_flash_v2_5", voice: "JBFqnCBsd6RMkjVDRZzb" }, stt: { model: "scribe_v2_realtime", synchronousModel: "scribe_v1" } },
  tts: [
    { id: "eleven_multilingual_v2", name: "Eleven Multilingual v2", formats: FORMATS, price: { amount: "0.10", per: "1000 characters" } },
    { id: "eleven_flash_v2_5", name: "Eleven Flash v2.5", formats: FORMATS, price: { amount: "0.05", per: "1000 characters" } },
    { id: "eleven_turbo_v2_5", name: "Eleven Turbo v2.5", formats: FORMATS, price: { amount: "0.05", per: "1000 characters" } },
    // v3 is not offered on the stream-input WebSocket.
    { id: "eleven_v3", name: "Eleven v3", formats: FORMATS, streaming: false, price: { amount: "0.10", per: "1000 characters" } },
  ],
  stt: [
    { id: "scribe_v1", name: "Scribe v1", ...FILES, price: { amount: "0.40", per: "hour" } },
    { id: "scribe_v2", name: "Scribe v2", ...FILES, price: { amount: "0.40", per: "hour" } },
    { id: "scribe_v2_realtime", name: "Scribe v2 Realtime", streaming: true, synchronous: false, batch: false, price: { amount: "0.40", per: "hour" } },
  ],
});
