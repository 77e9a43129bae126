import { afterAll, describe, expect, test } from "bun:test";
import { ElevenLabsClient, ElevenLabsError } from "@elevenlabs/elevenlabs-js";
import { FAKE_ELEVENLABS_KEY, FAKE_VOICE, startFakeElevenLabs } from "./fakes/elevenlabs.ts";

// The fake must be good enough for the official SDK: otherwise tests against it prove nothing.

const fake = startFakeElevenLabs();
afterAll(() => fake.stop());
const client = new ElevenLabsClient({ apiKey: FAKE_ELEVENLABS_KEY, baseUrl: fake.url, maxRetries: 0 });

const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: ElevenLabsError) => e);

async function bytes(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

describe("the ElevenLabs fake, through the official SDK", () => {
  test("textToSpeech.stream streams real PCM at the asked rate, with the SDK's wire names", async () => {
    const audio = await bytes(
      await client.textToSpeech.stream(FAKE_VOICE, { text: "Hello from the fake.", modelId: "eleven_flash_v2_5", outputFormat: "pcm_16000", voiceSettings: { stability: 0.4 } }),
    );
    expect(audio.length / 2 / 16000).toBeGreaterThan(0.8);
    const sent = fake.requests.at(-1)!;
    expect(sent).toMatchObject({ voiceId: FAKE_VOICE, query: { output_format: "pcm_16000" }, body: { text: "Hello from the fake.", model_id: "eleven_flash_v2_5", voice_settings: { stability: 0.4 } }, apiKey: FAKE_ELEVENLABS_KEY });
  });

  test("the default output is MP3", async () => {
    const audio = await bytes(await client.textToSpeech.stream(FAKE_VOICE, { text: "An MP3." }));
    expect(audio[0]).toBe(0xff);
  });

  test("speechToText.convert answers text and word timings", async () => {
    const file = new Blob([await Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer()], { type: "audio/wav" });
    const res = (await client.speechToText.convert({ modelId: "scribe_v1", file, languageCode: "en" })) as { text: string; words: { type: string }[] };
    expect(res.text).toBe("Thank you very much. For your help.");
    expect(res.words.filter((w) => w.type === "word").length).toBe(7);
    expect(fake.transcriptions.at(-1)).toMatchObject({ fields: { model_id: "scribe_v1", language_code: "en" }, apiKey: FAKE_ELEVENLABS_KEY });
  });

  test("errors come as ElevenLabs detail objects the SDK understands", async () => {
    fake.fault("429");
    const err = await failure(client.textToSpeech.stream(FAKE_VOICE, { text: "x" }));
    expect(err).toBeInstanceOf(ElevenLabsError);
    expect(err?.statusCode).toBe(429);
    expect(err?.body).toEqual({ detail: { status: "too_many_concurrent_requests", message: expect.any(String) } });
    const bad = new ElevenLabsClient({ apiKey: "wrong", baseUrl: fake.url, maxRetries: 0 });
    expect((await failure(bad.textToSpeech.stream(FAKE_VOICE, { text: "x" })))?.statusCode).toBe(401);
    expect((await failure(client.textToSpeech.stream("no-such-voice", { text: "x" })))?.statusCode).toBe(404);
  });
});
