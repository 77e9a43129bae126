import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { desc, eq } from "drizzle-orm";
import { createKey } from "../src/accounts/keys.ts";
import { probeDuration } from "../src/audio/probe.ts";
import { ApiError } from "../src/errors.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer } from "./helpers/ws-client.ts";

// File transcription and duration probing on real files of each container (test/fixtures:
// "Thank you very much for your help." by Flite, 2.745 s, converted with ffmpeg).

const fixture = async (name: string) => new Uint8Array(await Bun.file(new URL(`./fixtures/${name}`, import.meta.url)).arrayBuffer());

describe("duration probing", () => {
  const cases: [string, string, number][] = [
    ["speech.wav", "WAVE", 2.745],
    ["speech.mp3", "MPEG", 2.844],
    ["speech.flac", "FLAC", 2.745],
    ["speech.ogg", "Ogg", 2.745],
    ["speech.webm", "EBML/webm", 2.761], // from its blocks (the header says 2.753)
    ["speech.m4a", "M4A/isom/iso2", 2.809],
  ];
  for (const [name, container, seconds] of cases) {
    test(`${name}: ${seconds} s from its ${container} container`, async () => {
      const probe = await probeDuration(await fixture(name));
      expect(probe.container).toBe(container);
      expect(probe.seconds).toBeCloseTo(seconds, 2);
    });
  }

  test("the bytes decide, not a wrong declared type: a WAV sent as audio/mpeg is still a WAV", async () => {
    const wav = await fixture("speech.wav");
    expect(await probeDuration(wav, "audio/mpeg")).toMatchObject({ container: "WAVE", seconds: 2.745 });
    expect(await probeDuration(await fixture("speech.ogg"), "video/webm")).toMatchObject({ container: "Ogg" });
  });

  test("WebM: the blocks decide, so a browser recording without a header duration is measured, and a header that lies is not believed", async () => {
    const webm = await fixture("speech.webm");
    const at = webm.findIndex((b, i) => b === 0x44 && webm[i + 1] === 0x89); // the Duration element
    const size = webm[at + 2]! & 0x7f;
    const lying = webm.slice();
    new DataView(lying.buffer, at + 3, size).setFloat64(0, 1.0); // "1 ms"
    const missing = webm.slice();
    missing[at] = 0xec; // a Void element in its place, as MediaRecorder writes no duration
    missing[at + 1] = 0x80 | (size + 1);
    for (const file of [lying, missing]) expect((await probeDuration(file, "audio/webm")).seconds).toBeCloseTo(2.761, 2);
  });

  test("a corrupt or empty file is 422 indeterminate_audio_duration, never a guess", async () => {
    for (const bytes of [await fixture("corrupt.mp3"), new Uint8Array(0), new TextEncoder().encode("RIFF....WAVEnot really")]) {
      const err = await probeDuration(bytes).catch((e) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(err.code).toBe("indeterminate_audio_duration");
      expect(err.status).toBe(422);
    }
  });
});

describe.skipIf(!localSttAvailable)("POST /v1/stt/transcriptions with the local recognizer", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.stop(0));

  const multipart = async (file: string, fields: Record<string, string>, key = server.key) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.set(k, v);
    form.set("file", new Blob([await fixture(file)]), file);
    const res = await fetch(`${server.url}/v1/stt/transcriptions`, { method: "POST", headers: bearer(key), body: form });
    return { status: res.status, body: (await res.json()) as any };
  };

  test("multipart WAV: the transcript, its segments, the probed duration and whole seconds billed", async () => {
    const { key, tenantId } = await createKey(server.ctx.database, `files-${crypto.randomUUID()}`);
    await server.ctx.meter.ledger.credit(tenantId, { credits: 1_000_000, type: "adjustment", description: "test" });
    const { status, body } = await multipart("speech.wav", { model: "pocketsphinx-en-us" }, key);
    expect(status).toBe(200);
    expect(body).toMatchObject({ text: "thank you very much for your help", provider: "pocketsphinx", model: "cmu/pocketsphinx-en-us", duration_seconds: 2.745, billed_seconds: 3 });
    expect(body.segments).toEqual([expect.objectContaining({ text: "thank you very much for your help" })]);
    const { db, schema } = server.ctx.database;
    const [record] = await db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId)).orderBy(desc(schema.activity.startedAt));
    expect(record).toMatchObject({ capability: "stt", usageUnit: "seconds", usageAmount: 3, credits: 30, status: "completed" });
  });

  test("a transcription in flight counts as an open session, so a shutdown lets it finish and settle", async () => {
    const pending = multipart("speech.wav", { model: "pocketsphinx-en-us" });
    let seen = false;
    for (let i = 0; i < 200 && !seen; i++) {
      seen = server.ctx.sessions.size > 0;
      await Bun.sleep(5);
    }
    expect(seen).toBe(true);
    expect((await pending).status).toBe(200);
    for (let i = 0; i < 50 && server.ctx.sessions.size > 0; i++) await Bun.sleep(10);
    expect(server.ctx.sessions.size).toBe(0);
  });

  test("raw MP3 body with the fields in the query", async () => {
    const res = await fetch(`${server.url}/v1/stt/transcriptions?model=pocketsphinx-en-us&language=en`, {
      method: "POST",
      headers: { ...bearer(server.key), "content-type": "audio/mpeg" },
      body: await fixture("speech.mp3"),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).text).toBe("thank you very much for your help");
  });

  test("a container the embedded recognizer cannot read is 422 validation; a corrupt file 422 indeterminate_audio_duration", async () => {
    expect(await multipart("speech.flac", { model: "pocketsphinx-en-us" })).toMatchObject({ status: 422, body: { error: "validation" } });
    expect(await multipart("corrupt.mp3", { model: "pocketsphinx-en-us" })).toMatchObject({ status: 422, body: { error: "indeterminate_audio_duration" } });
  });

  test("bad requests: no key 401, no model 400, unknown field 400, no file 400, no balance 402", async () => {
    const noKey = await fetch(`${server.url}/v1/stt/transcriptions`, { method: "POST", body: await fixture("speech.wav") });
    expect(noKey.status).toBe(401);
    expect((await multipart("speech.wav", {})).body).toMatchObject({ error: "model_required" });
    expect((await multipart("speech.wav", { model: "pocketsphinx-en-us", temperature: "0" })).status).toBe(200); // unknown multipart fields are not ours to judge
    const unknown = await fetch(`${server.url}/v1/stt/transcriptions?model=pocketsphinx-en-us&colour=blue`, { method: "POST", headers: { ...bearer(server.key), "content-type": "audio/wav" }, body: await fixture("speech.wav") });
    expect(unknown.status).toBe(400);
    const form = new FormData();
    form.set("model", "pocketsphinx-en-us");
    const noFile = await fetch(`${server.url}/v1/stt/transcriptions`, { method: "POST", headers: bearer(server.key), body: form });
    expect(noFile.status).toBe(400);
    const { key: broke } = await createKey(server.ctx.database, `files-broke-${crypto.randomUUID()}`);
    expect((await multipart("speech.wav", { model: "pocketsphinx-en-us" }, broke)).status).toBe(402);
  });
});
