import { afterAll, describe, expect, test } from "bun:test";
import { ElevenLabsCloning } from "../src/providers/elevenlabs/cloning.ts";
import { ElevenLabsTts } from "../src/providers/elevenlabs/tts.ts";
import { FAKE_ELEVENLABS_KEY, FAKE_VOICE, startFakeElevenLabs } from "./fakes/elevenlabs.ts";
import { VERIFYING_MS } from "./fakes/elevenlabs-voices.ts";
import { fakeUpstreamOptions } from "./helpers/http-tts.ts";
import { apiFailure, describeCloningFaults, servedCloning, speechRecording } from "./helpers/cloning.ts";

// ElevenLabs instant voice cloning (providers/elevenlabs/cloning.ts) against its fake, through the
// adapter the server builds from ELEVENLABS_API_KEY / ELEVENLABS_BASE_URL. Refusals are
// custom_voices_failed (422) with ElevenLabs' words; the provider's own failures, garbled answers,
// silence and slowness (upstream_error, 502) are checked by describeCloningFaults.

const fake = startFakeElevenLabs();
afterAll(() => fake.stop());
const cloning = servedCloning("elevenlabs", { ELEVENLABS_API_KEY: FAKE_ELEVENLABS_KEY, ELEVENLABS_BASE_URL: fake.url });
const options = fakeUpstreamOptions(FAKE_ELEVENLABS_KEY, fake.url);
const recording = speechRecording();

describe("ElevenLabs voice cloning against the fake", () => {
  test("a clone of two WAV recordings of speech is active, listed among the voices, and removed; removing it again succeeds", async () => {
    const second = speechRecording("take-2.wav", "And this is how I sound when I ask a question?");
    const made = await cloning.clone({ name: "Narrator", description: "Warm and slow", language: "en", model: "eleven_multilingual_v2", files: [recording, second] });
    expect(made).toEqual({ providerVoiceId: expect.any(String), status: "active" });
    expect(fake.clonedVoices.get(made.providerVoiceId)).toMatchObject({
      name: "Narrator",
      description: "Warm and slow",
      labels: { language: "en" },
      files: [
        { name: "take-1.wav", bytes: recording.data.byteLength },
        { name: "take-2.wav", bytes: second.data.byteLength },
      ],
    });
    expect(await cloning.status(made.providerVoiceId)).toEqual({ status: "active" });
    expect((await new ElevenLabsTts(options).voices()).find((v) => v.id === made.providerVoiceId)).toMatchObject({ name: "Narrator", languages: ["en"] });

    await cloning.remove(made.providerVoiceId);
    expect(fake.clonedVoices.has(made.providerVoiceId)).toBe(false);
    expect(await cloning.status(made.providerVoiceId)).toBeUndefined();
    await cloning.remove(made.providerVoiceId); // ElevenLabs answers 400 voice_does_not_exist: already deleted
  });

  test("a voice ElevenLabs never had reads as undefined; its premade voice as active", async () => {
    expect(await cloning.status("nope0000000000000000")).toBeUndefined();
    expect(await cloning.status(FAKE_VOICE)).toEqual({ status: "active" });
  });

  test("recordings ElevenLabs refuses are custom_voices_failed with its message, and make nothing", async () => {
    const notAudio = { name: "notes.wav", type: "audio/wav", data: new TextEncoder().encode("these are not the droids") };
    expect(await apiFailure(cloning.clone({ name: "Bad", files: [recording, notAudio] }))).toEqual({
      code: "custom_voices_failed",
      status: 422,
      message: "elevenlabs refused the voice: File upload is corrupted or unusable: notes.wav is not an audio file that could be read. Please ensure it is playable audio.",
    });
    const empty = { name: "empty.wav", type: "audio/wav", data: new Uint8Array(0) };
    expect((await apiFailure(cloning.clone({ name: "Bad", files: [empty] }))).message).toContain("empty.wav is empty");
    expect(fake.clonedVoices.size).toBe(0);
  });

  test("a request ElevenLabs cannot validate is custom_voices_failed naming the field (FastAPI's 422 detail list)", async () => {
    expect(await apiFailure(cloning.clone({ name: "", files: [recording] }))).toEqual({ code: "custom_voices_failed", status: 422, message: "elevenlabs refused the voice: name: Field required" });
  });

  test("a clone that needs the speaker's verification is processing until ElevenLabs has it verified, then active", async () => {
    fake.fault("verifying");
    const made = await cloning.clone({ name: "Checked", files: [recording] });
    expect(made.status).toBe("processing");
    expect(await cloning.status(made.providerVoiceId)).toEqual({ status: "processing" });
    await Bun.sleep(VERIFYING_MS + 50);
    expect(await cloning.status(made.providerVoiceId)).toEqual({ status: "active" });
    await cloning.remove(made.providerVoiceId);
  });
});

describe("ElevenLabs refusals that echo the key", () => {
  test("the provider's message is passed on with our key cut out", async () => {
    const echo = Bun.serve({
      port: 0,
      fetch: (req) => Response.json({ detail: { status: "invalid_request", message: `bad request from ${req.headers.get("xi-api-key")}` } }, { status: 400 }),
    });
    const err = await apiFailure(new ElevenLabsCloning({ ...options, baseUrl: `http://127.0.0.1:${echo.port}` }).clone({ name: "Echo", files: [recording] }));
    echo.stop(true);
    expect(err).toEqual({ code: "custom_voices_failed", status: 422, message: "elevenlabs refused the voice: bad request from [key]" });
  });
});

describeCloningFaults({
  provider: "elevenlabs",
  cloning,
  adapter: (overrides) => new ElevenLabsCloning({ ...options, ...overrides }),
  fake,
  request: (name) => ({ name, files: [recording] }),
  codes: { 500: "internal_server_error", 429: "too_many_concurrent_requests", 401: "invalid_api_key" },
});
