import { afterAll, describe, expect, test } from "bun:test";
import { ElevenLabsClient, ElevenLabsError } from "@elevenlabs/elevenlabs-js";
import { SLOW_CLONE_MS } from "./fakes/cloning.ts";
import { FAKE_ELEVENLABS_KEY, FAKE_VOICE, startFakeElevenLabs } from "./fakes/elevenlabs.ts";
import { VERIFYING_MS } from "./fakes/elevenlabs-voices.ts";
import { rejectionOf, speechRecording, unusableRecordings, wavUpload } from "./helpers/cloning.ts";

// The ElevenLabs fake's instant voice cloning, through the official SDK (`voices.ivc.create`,
// `voices.get`, `voices.delete`, `voices.getAll`): otherwise tests of the adapter against it prove nothing.

const fake = startFakeElevenLabs();
afterAll(() => fake.stop());
const client = new ElevenLabsClient({ apiKey: FAKE_ELEVENLABS_KEY, baseUrl: fake.url, maxRetries: 0 });

const recording = speechRecording().data;
const file = (bytes: Uint8Array, name = "take-1.wav") => wavUpload(bytes, name);
const failure = (p: Promise<unknown>) => rejectionOf<ElevenLabsError>(p);

describe("ElevenLabs instant voice cloning on the fake, through the official SDK", () => {
  test("ivc.create sends name, every file, description and labels; the clone is listed, read, speaks, and is deleted", async () => {
    const made = await client.voices.ivc.create({
      name: "Narrator",
      files: [file(recording), file(recording, "take-2.wav")],
      description: "Warm and slow",
      labels: { language: "en" },
      removeBackgroundNoise: true,
    });
    expect(made).toEqual({ voiceId: expect.any(String), requiresVerification: false });
    expect(fake.clonedVoices.get(made.voiceId)).toEqual({
      voiceId: made.voiceId,
      name: "Narrator",
      description: "Warm and slow",
      labels: { language: "en" },
      removeBackgroundNoise: "true",
      // Bun's multipart spells audio/wav audio/x-wav on the way.
      files: [
        { name: "take-1.wav", type: expect.stringMatching(/^audio\/(x-)?wav$/), bytes: recording.byteLength },
        { name: "take-2.wav", type: expect.stringMatching(/^audio\/(x-)?wav$/), bytes: recording.byteLength },
      ],
    });

    const listed = await client.voices.getAll();
    expect(listed.voices.map((v) => [v.voiceId, v.category])).toEqual([
      [FAKE_VOICE, "premade"],
      [made.voiceId, "cloned"],
    ]);
    const voice = await client.voices.get(made.voiceId);
    expect(voice).toMatchObject({ voiceId: made.voiceId, name: "Narrator", category: "cloned", labels: { language: "en" }, voiceVerification: { requiresVerification: false } });
    expect(voice.samples?.map((s) => s.fileName)).toEqual(["take-1.wav", "take-2.wav"]);

    const audio = new Uint8Array(await new Response(await client.textToSpeech.stream(made.voiceId, { text: "Spoken by the clone.", outputFormat: "pcm_16000" })).arrayBuffer());
    expect(audio.length / 2 / 16000).toBeGreaterThan(0.5);

    expect(await client.voices.delete(made.voiceId)).toEqual({ status: "ok" });
    expect(fake.clonedVoices.has(made.voiceId)).toBe(false);
    expect((await client.voices.getAll()).voices.map((v) => v.voiceId)).toEqual([FAKE_VOICE]);
    const gone = await failure(client.voices.get(made.voiceId));
    expect(gone?.statusCode).toBe(404);
    expect(gone?.body).toMatchObject({ detail: { status: "voice_not_found" } });
    const again = await failure(client.voices.delete(made.voiceId));
    expect(again?.statusCode).toBe(400);
    expect(again?.body).toMatchObject({ detail: { status: "voice_does_not_exist" } });
  });

  test("a file that is not audio, an empty one and one too short are refused with 400 and a message", async () => {
    for (const [bytes, reason] of unusableRecordings()) {
      const err = await failure(client.voices.ivc.create({ name: "Bad", files: [file(recording, "good.wav"), file(bytes, "notes.wav")] }));
      expect(err).toBeInstanceOf(ElevenLabsError);
      expect(err?.statusCode).toBe(400);
      expect(err?.body).toMatchObject({ detail: { status: "invalid_audio", message: expect.stringContaining(reason) } });
    }
    expect(fake.clonedVoices.size).toBe(0);
  });

  test("an injected 500 is ElevenLabs' error object, and nothing is made", async () => {
    fake.fault("500");
    const err = await failure(client.voices.ivc.create({ name: "Later", files: [file(recording)] }));
    expect(err?.statusCode).toBe(500);
    expect(err?.body).toEqual({ detail: { status: "internal_server_error", message: expect.any(String) } });
    expect(fake.clonedVoices.size).toBe(0);
  });

  test("slow: the clone is answered after SLOW_CLONE_MS", async () => {
    fake.fault("slow");
    const started = performance.now();
    const made = await client.voices.ivc.create({ name: "Patient", files: [file(recording)] });
    expect(performance.now() - started).toBeGreaterThanOrEqual(SLOW_CLONE_MS - 20);
    expect(fake.clonedVoices.has(made.voiceId)).toBe(true);
    await client.voices.delete(made.voiceId);
  });

  test("verifying: the clone requires verification and reads as unverified for VERIFYING_MS, then as verified", async () => {
    fake.fault("verifying");
    const made = await client.voices.ivc.create({ name: "Checked", files: [file(recording)] });
    expect(made.requiresVerification).toBe(true);
    expect((await client.voices.get(made.voiceId)).voiceVerification).toMatchObject({ requiresVerification: true, isVerified: false });
    await Bun.sleep(VERIFYING_MS + 50);
    expect((await client.voices.get(made.voiceId)).voiceVerification).toMatchObject({ requiresVerification: true, isVerified: true });
    await client.voices.delete(made.voiceId);
  });
});
