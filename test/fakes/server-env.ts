import { FAKE_ASSEMBLYAI_KEY } from "./assemblyai.ts";
import { FAKE_CARTESIA_KEY } from "./cartesia.ts";
import { FAKE_DEEPGRAM_KEY } from "./deepgram.ts";
import { FAKE_ELEVENLABS_KEY } from "./elevenlabs.ts";
import { FAKE_OPENAI_KEY } from "./openai.ts";

// The server settings that point one cloud provider at its running fake, to spread into
// startTestServer's env: `startTestServer({ ...elevenLabsAt(fake), ...cartesiaAt(other) })`.

export const elevenLabsAt = (fake: { url: string }) => ({ ELEVENLABS_API_KEY: FAKE_ELEVENLABS_KEY, ELEVENLABS_BASE_URL: fake.url });
export const cartesiaAt = (fake: { url: string }) => ({ CARTESIA_API_KEY: FAKE_CARTESIA_KEY, CARTESIA_BASE_URL: fake.url });
export const openAiAt = (fake: { url: string }) => ({ OPENAI_API_KEY: FAKE_OPENAI_KEY, OPENAI_BASE_URL: fake.url });
export const deepgramAt = (fake: { http: string }) => ({ DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY, DEEPGRAM_BASE_URL: fake.http });
export const assemblyAiAt = (fake: { url: string }) => ({ ASSEMBLYAI_API_KEY: FAKE_ASSEMBLYAI_KEY, ASSEMBLYAI_BASE_URL: fake.url });

/** Every shipped provider switched on, the cloud ones with a placeholder key: for config and catalogue tests, which call none of them. */
export const EVERY_PROVIDER_ON = {
  ESPEAK_ENABLED: "true",
  ELEVENLABS_API_KEY: "k",
  OPENAI_API_KEY: "k",
  DEEPGRAM_API_KEY: "k",
  CARTESIA_API_KEY: "k",
  ASSEMBLYAI_API_KEY: "k",
};
