import { afterAll, describe, expect, test } from "bun:test";
import { CartesiaCloning } from "../src/providers/cartesia/cloning.ts";
import { CartesiaTts } from "../src/providers/cartesia/tts.ts";
import { FAKE_CARTESIA_KEY, FAKE_CARTESIA_VOICE, startFakeCartesia } from "./fakes/cartesia.ts";
import { fakeUpstreamOptions } from "./helpers/http-tts.ts";
import { apiFailure, describeCloningFaults, servedCloning, speechRecording } from "./helpers/cloning.ts";

// Cartesia instant voice cloning (providers/cartesia/cloning.ts) against its fake, through the
// adapter the server builds from CARTESIA_API_KEY / CARTESIA_BASE_URL; the failures every adapter
// meets alike are checked by describeCloningFaults. A Cartesia clone is usable once answered: there
// is no processing state to wait through.

const fake = startFakeCartesia();
afterAll(() => fake.stop());
const cloning = servedCloning("cartesia", { CARTESIA_API_KEY: FAKE_CARTESIA_KEY, CARTESIA_BASE_URL: fake.url });
const options = fakeUpstreamOptions(FAKE_CARTESIA_KEY, fake.url);
const recording = speechRecording("clip.wav");

describe("Cartesia voice cloning against the fake", () => {
  test("a clone of a WAV recording of speech is active, listed among the voices, and removed; removing it again succeeds", async () => {
    const made = await cloning.clone({ name: "Narrator", description: "Warm and slow", language: "en-US", model: "sonic-3", files: [recording] });
    expect(made).toEqual({ providerVoiceId: expect.any(String), status: "active" });
    const sent = fake.clonedVoices.get(made.providerVoiceId)!;
    expect(sent.clip).toMatchObject({ name: "clip.wav", bytes: recording.data.byteLength });
    // The language by its ISO 639-1 code, as Cartesia names them; the model is not Cartesia's to take.
    expect(sent.fields).toEqual({ name: "Narrator", language: "en", description: "Warm and slow" });
    expect(await cloning.status(made.providerVoiceId)).toEqual({ status: "active" });
    expect((await new CartesiaTts(options).voices()).find((v) => v.id === made.providerVoiceId)).toMatchObject({ name: "Narrator", languages: ["en"] });

    await cloning.remove(made.providerVoiceId);
    expect(fake.clonedVoices.has(made.providerVoiceId)).toBe(false);
    expect(await cloning.status(made.providerVoiceId)).toBeUndefined();
    await cloning.remove(made.providerVoiceId); // 404: already deleted
  });

  test("a voice Cartesia never had reads as undefined; its public voice as active", async () => {
    expect(await cloning.status("00000000-0000-0000-0000-000000000000")).toBeUndefined();
    expect(await cloning.status(FAKE_CARTESIA_VOICE)).toEqual({ status: "active" });
  });

  test("clips Cartesia refuses, and a request without the language it needs, are custom_voices_failed with its message", async () => {
    const notAudio = { name: "notes.wav", type: "audio/wav", data: new TextEncoder().encode("these are not the droids") };
    expect(await apiFailure(cloning.clone({ name: "Bad", language: "en", files: [notAudio] }))).toEqual({
      code: "custom_voices_failed",
      status: 422,
      message: "cartesia refused the voice: The clip could not be used: notes.wav is not an audio file that could be read",
    });
    const empty = { name: "empty.wav", type: "audio/wav", data: new Uint8Array(0) };
    expect((await apiFailure(cloning.clone({ name: "Bad", language: "en", files: [empty] }))).message).toContain("empty.wav is empty");
    expect(await apiFailure(cloning.clone({ name: "Bad", files: [recording] }))).toEqual({ code: "custom_voices_failed", status: 422, message: "cartesia refused the voice: language is required" });
    expect(fake.clonedVoices.size).toBe(0);
  });

  test("more than one recording is custom_voices_failed before anything is sent: Cartesia clones from one clip", async () => {
    fake.fault("500"); // would be met by any request that went out
    expect(await apiFailure(cloning.clone({ name: "Two", language: "en", files: [recording, speechRecording("clip-2.wav")] }))).toEqual({
      code: "custom_voices_failed",
      status: 422,
      message: "cartesia clones a voice from exactly one recording, not 2",
    });
    expect(await apiFailure(cloning.clone({ name: "None", language: "en", files: [] }))).toMatchObject({ code: "custom_voices_failed" });
    expect((await apiFailure(cloning.clone({ name: "Next", language: "en", files: [recording] }))).message).toBe("cartesia answered 500 (internal_error)");
  });
});

describeCloningFaults({
  provider: "cartesia",
  cloning,
  adapter: (overrides) => new CartesiaCloning({ ...options, ...overrides }),
  fake,
  request: (name) => ({ name, language: "en", files: [recording] }),
  codes: { 500: "internal_error", 429: "rate_limited", 401: "unauthorized" },
});
