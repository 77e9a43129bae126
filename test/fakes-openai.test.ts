import { afterAll, describe, expect, test } from "bun:test";
import OpenAI, { toFile } from "openai";
import { FAKE_OPENAI_KEY, startFakeOpenAi } from "./fakes/openai.ts";

// The fake must be good enough for the official SDK: otherwise tests against it prove nothing.

const fake = startFakeOpenAi();
afterAll(() => fake.stop());
const client = new OpenAI({ apiKey: FAKE_OPENAI_KEY, baseURL: fake.url, maxRetries: 0 });

describe("the OpenAI fake, through the official SDK", () => {
  test("audio.speech.create streams real 24 kHz PCM", async () => {
    const res = await client.audio.speech.create({ model: "gpt-4o-mini-tts", voice: "alloy", input: "Hello from the fake.", response_format: "pcm" });
    const audio = new Uint8Array(await res.arrayBuffer());
    expect(audio.length / 2 / 24000).toBeGreaterThan(0.8);
    expect(fake.speech.at(-1)!.body).toMatchObject({ model: "gpt-4o-mini-tts", voice: "alloy", response_format: "pcm" });
  });

  test("audio.transcriptions.create answers json and verbose_json", async () => {
    const file = await toFile(new Uint8Array(await Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer()), "speech.wav");
    const json = await client.audio.transcriptions.create({ model: "whisper-1", file });
    expect(json.text.length).toBeGreaterThan(0);
    const verbose = await client.audio.transcriptions.create({ model: "whisper-1", file, response_format: "verbose_json" });
    expect(verbose.segments?.length).toBe(1);
  });

  test("errors come as OpenAI error objects the SDK understands", async () => {
    fake.fault("429");
    const err = await client.audio.speech.create({ model: "tts-1", voice: "alloy", input: "x" }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.code).toBe("rate_limit_exceeded");
    const bad = new OpenAI({ apiKey: "sk-wrong", baseURL: fake.url, maxRetries: 0 });
    expect(await bad.audio.speech.create({ model: "tts-1", voice: "alloy", input: "x" }).catch((e) => e)).toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
