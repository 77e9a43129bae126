import type { ModelSpec, ProviderSpec } from "../../catalogue/types.ts";

// List prices per 1000 characters / per hour of audio, as published for API usage.

export const ELEVENLABS_MODELS: ModelSpec[] = [
  { canonical: "elevenlabs/eleven_multilingual_v2", name: "Eleven Multilingual v2", capability: "tts", aliases: [] },
  { canonical: "elevenlabs/eleven_flash_v2_5", name: "Eleven Flash v2.5", capability: "tts", aliases: [] },
  { canonical: "elevenlabs/eleven_turbo_v2_5", name: "Eleven Turbo v2.5", capability: "tts", aliases: [] },
  { canonical: "elevenlabs/eleven_v3", name: "Eleven v3", capability: "tts", aliases: [] },
  { canonical: "elevenlabs/scribe_v1", name: "Scribe v1", capability: "stt", aliases: [] },
  { canonical: "elevenlabs/scribe_v2", name: "Scribe v2", capability: "stt", aliases: [] },
  { canonical: "elevenlabs/scribe_v2_realtime", name: "Scribe v2 Realtime", capability: "stt", aliases: [] },
];

const FORMATS = ["mp3", "pcm", "ulaw", "opus"] as const;

export const ELEVENLABS: ProviderSpec = {
  id: "elevenlabs",
  name: "ElevenLabs",
  kind: "cloud",
  requiresVoice: true,
  defaults: {
    tts: { model: "eleven_flash_v2_5", voice: "JBFqnCBsd6RMkjVDRZzb" },
    stt: { model: "scribe_v2_realtime", synchronousModel: "scribe_v1" },
  },
  bindings: [
    {
      capability: "tts",
      id: "eleven_multilingual_v2",
      canonical: "elevenlabs/eleven_multilingual_v2",
      streaming: true,
      synchronous: true,
      formats: [...FORMATS],
      price: { amount: "0.10", per: "1000 characters" },
    },
    {
      capability: "tts",
      id: "eleven_flash_v2_5",
      canonical: "elevenlabs/eleven_flash_v2_5",
      streaming: true,
      synchronous: true,
      formats: [...FORMATS],
      price: { amount: "0.05", per: "1000 characters" },
    },
    {
      capability: "tts",
      id: "eleven_turbo_v2_5",
      canonical: "elevenlabs/eleven_turbo_v2_5",
      streaming: true,
      synchronous: true,
      formats: [...FORMATS],
      price: { amount: "0.05", per: "1000 characters" },
    },
    // v3 is not offered on the stream-input WebSocket.
    { capability: "tts", id: "eleven_v3", canonical: "elevenlabs/eleven_v3", streaming: false, synchronous: true, formats: [...FORMATS], price: { amount: "0.10", per: "1000 characters" } },
    { capability: "stt", id: "scribe_v1", canonical: "elevenlabs/scribe_v1", streaming: false, synchronous: true, batch: false, price: { amount: "0.40", per: "hour" } },
    { capability: "stt", id: "scribe_v2", canonical: "elevenlabs/scribe_v2", streaming: false, synchronous: true, batch: false, price: { amount: "0.40", per: "hour" } },
    { capability: "stt", id: "scribe_v2_realtime", canonical: "elevenlabs/scribe_v2_realtime", streaming: true, synchronous: false, batch: false, price: { amount: "0.40", per: "hour" } },
  ],
};
