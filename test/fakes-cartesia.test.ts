import { afterAll, describe, expect, test } from "bun:test";
import Cartesia from "@cartesia/cartesia-js";
import { FAKE_CARTESIA_KEY, FAKE_CARTESIA_VOICE, startFakeCartesia } from "./fakes/cartesia.ts";

// The fake must be good enough for the official SDK: otherwise tests against it prove nothing.

const fake = startFakeCartesia();
afterAll(() => fake.stop());
const client = new Cartesia({ apiKey: FAKE_CARTESIA_KEY, baseURL: fake.url, maxRetries: 0 });

describe("the Cartesia fake, through the official SDK", () => {
  test("tts.generate streams real raw PCM at the asked rate", async () => {
    const res = await client.tts.generate({
      model_id: "sonic-3",
      transcript: "Hello from the fake.",
      voice: { mode: "id", id: FAKE_CARTESIA_VOICE } as never,
      output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: 16000 },
    });
    const audio = new Uint8Array(await res.arrayBuffer());
    expect(audio.length / 2 / 16000).toBeGreaterThan(0.8);
    expect(fake.requests.at(-1)).toMatchObject({ body: { model_id: "sonic-3", transcript: "Hello from the fake." }, authorization: `Bearer ${FAKE_CARTESIA_KEY}`, version: "2026-08-14" });
  });

  test("stt.transcribe answers text and word timings", async () => {
    const file = new File([await Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer()], "speech.wav", { type: "audio/wav" });
    const res = await client.stt.transcribe({ file, model: "ink-whisper", language: "en", timestamp_granularities: ["word"] });
    expect(res.text).toBe("Thank you very much. For your help.");
    expect(res.words?.[0]).toEqual({ word: "Thank", start: 0, end: 0.35 });
    expect(fake.transcriptions.at(-1)!.fields).toMatchObject({ model: ["ink-whisper"], language: ["en"] });
  });

  test("errors come as Cartesia error objects the SDK understands", async () => {
    fake.fault("429");
    const err = await client.tts
      .generate({ model_id: "sonic-3", transcript: "x", voice: FAKE_CARTESIA_VOICE as never, output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: 16000 } })
      .then(() => undefined, (e: InstanceType<typeof Cartesia.APIError>) => e);
    expect(err).toBeInstanceOf(Cartesia.RateLimitError);
    expect(err?.status).toBe(429);
    expect(err?.error).toMatchObject({ error_code: "rate_limited" });
  });
});
