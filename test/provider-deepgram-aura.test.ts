import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DeepgramTts } from "../src/providers/deepgram/tts.ts";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram } from "./fakes/deepgram.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { describeHttpTtsFaults, speakOnce, startEchoServer } from "./helpers/http-tts.ts";
import type { TestServer } from "./helpers/server.ts";
import { totalBytes } from "./helpers/ws-client.ts";

// Deepgram Aura TTS against its fake, through /v1/tts: the voice folded into the model name,
// options on the wire, and every HTTP fault with and without a fallback.

const fake = startFakeDeepgram();
let server: TestServer;
const options = { apiKey: FAKE_DEEPGRAM_KEY, baseUrl: fake.http, connectTimeoutMs: 1000, idleTimeoutMs: 300 };

beforeAll(async () => {
  // "dg-echo" is the same adapter serving the test model, so faults can meet a fallback.
  server = await startEchoServer({ DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY, DEEPGRAM_BASE_URL: fake.http }, Object.assign(new DeepgramTts(options), { id: "dg-echo" }), "aura-2");
});
afterAll(async () => {
  await server.stop(0);
  fake.stop();
});

const speak = (query: string, key?: string) => speakOnce(server, query, "Hello from Aura. ", key);

describe("Deepgram Aura through /v1/tts", () => {
  test("a session streams 24 kHz linear16; the voice is folded into the model name", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const rec = await speak("model=aura-2&voice=thalia-en&speed=1.2", key);
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(rec.events.find((e) => e.type === "service.tts_audio_started")).toMatchObject({ provider: "deepgram", encoding: "pcm_s16le", sample_rate: 24000 });
    expect(totalBytes(rec.audio) / 2 / 24000).toBeGreaterThan(0.7);
    expect(fake.speak.at(-1)).toEqual({
      query: { model: "aura-2-thalia-en", encoding: "linear16", sample_rate: "24000", container: "none", speed: "1.2" },
      body: { text: "Hello from Aura." },
      authorization: `Token ${FAKE_DEEPGRAM_KEY}`,
    });
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "deepgram", status: "completed", usageAmount: 17, credits: 510 });
  });

  test("format=mp3 passes Aura's MP3 through", async () => {
    const rec = await speak("model=aura-2&voice=thalia-en&format=mp3");
    expect(rec.close.code).toBe(1000);
    expect(Buffer.concat(rec.audio)[0]).toBe(0xff);
    expect(fake.speak.at(-1)!.query.encoding).toBe("mp3");
  });

  test("a non-numeric speed is refused before anything is sent upstream", async () => {
    const before = fake.speak.length;
    const rec = await speak("model=aura-2&voice=thalia-en&speed=fast");
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(rec.events.at(-1)).toMatchObject({ type: "service.tts_error", message: 'deepgram option speed must be a number, not "fast"' });
    expect(fake.speak.length).toBe(before);
  });

  test("voices are the Aura-2 models of GET /v1/models", async () => {
    expect(await new DeepgramTts(options).voices()).toEqual([{ id: "thalia-en", name: "thalia", languages: ["en", "en-US"] }]);
  });
});

describeHttpTtsFaults("Deepgram Aura", { server: () => server, fake, echoId: "dg-echo", voice: "thalia-en" });
