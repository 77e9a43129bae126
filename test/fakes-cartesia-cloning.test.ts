import { afterAll, describe, expect, test } from "bun:test";
import Cartesia from "@cartesia/cartesia-js";
import { FAKE_CARTESIA_KEY, FAKE_CARTESIA_VOICE, startFakeCartesia } from "./fakes/cartesia.ts";
import { SLOW_CLONE_MS } from "./fakes/cloning.ts";
import { rejectionOf, speechRecording, unusableRecordings, wavUpload } from "./helpers/cloning.ts";

// The Cartesia fake's instant voice cloning, through the official SDK (`voices.clone`,
// `voices.get`, `voices.delete`, `voices.list`): otherwise tests of the adapter against it prove nothing.

const fake = startFakeCartesia();
afterAll(() => fake.stop());
const client = new Cartesia({ apiKey: FAKE_CARTESIA_KEY, baseURL: fake.url, maxRetries: 0 });

const recording = speechRecording().data;
const clip = (bytes: Uint8Array, name = "clip.wav") => wavUpload(bytes, name);
const failure = (p: Promise<unknown>) => rejectionOf<InstanceType<typeof Cartesia.APIError>>(p);
const listed = async () => {
  const ids: string[] = [];
  for await (const voice of client.voices.list()) ids.push(voice.id);
  return ids;
};

describe("Cartesia instant voice cloning on the fake, through the official SDK", () => {
  test("voices.clone sends the clip, name, language and description; the clone is listed, read, speaks, and is deleted (204)", async () => {
    const made = await client.voices.clone({ clip: clip(recording), name: "Narrator", language: "en", description: "Warm and slow" });
    expect(made.id).toBeString();
    expect(made).toMatchObject({ name: "Narrator", language: "en", description: "Warm and slow", user_id: "user_fake", access: "private" });
    expect(fake.clonedVoices.get(made.id)).toMatchObject({
      clip: { name: "clip.wav", bytes: recording.byteLength },
      fields: { name: "Narrator", language: "en", description: "Warm and slow" },
    });
    expect(await listed()).toEqual([FAKE_CARTESIA_VOICE, made.id]);
    expect(await client.voices.get(made.id)).toMatchObject({ id: made.id, name: "Narrator", is_owner: true, locales: [{ locale: "en", is_native: true }] });

    const res = await client.tts.generate({
      model_id: "sonic-3",
      transcript: "Spoken by the clone.",
      voice: { mode: "id", id: made.id } as never,
      output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: 16000 },
    });
    expect((await res.arrayBuffer()).byteLength / 2 / 16000).toBeGreaterThan(0.5);

    const deleted = await client.voices.delete(made.id).withResponse();
    expect(deleted.response.status).toBe(204);
    expect(fake.clonedVoices.has(made.id)).toBe(false);
    expect(await listed()).toEqual([FAKE_CARTESIA_VOICE]);
    const gone = await failure(client.voices.get(made.id));
    expect(gone).toBeInstanceOf(Cartesia.NotFoundError);
    expect((await failure(client.voices.delete(made.id)))?.status).toBe(404);
  });

  test("a clip that is not audio, an empty one and one too short are refused with 400 and a message", async () => {
    for (const [bytes, reason] of unusableRecordings()) {
      const err = await failure(client.voices.clone({ clip: clip(bytes, "notes.wav"), name: "Bad", language: "en" }));
      expect(err).toBeInstanceOf(Cartesia.BadRequestError);
      expect(err?.error).toMatchObject({ error_code: "invalid_clip", message: expect.stringContaining(reason) });
    }
    expect(fake.clonedVoices.size).toBe(0);
  });

  test("an injected 500 is Cartesia's error object, and nothing is made", async () => {
    fake.fault("500");
    const err = await failure(client.voices.clone({ clip: clip(recording), name: "Later", language: "en" }));
    expect(err).toBeInstanceOf(Cartesia.InternalServerError);
    expect(err?.error).toMatchObject({ error_code: "internal_error" });
    expect(fake.clonedVoices.size).toBe(0);
  });

  test("slow: the clone is answered after SLOW_CLONE_MS", async () => {
    fake.fault("slow");
    const started = performance.now();
    const made = await client.voices.clone({ clip: clip(recording), name: "Patient", language: "en" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(SLOW_CLONE_MS - 20);
    expect(fake.clonedVoices.has(made.id)).toBe(true);
    await client.voices.delete(made.id);
  });
});
