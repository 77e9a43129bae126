import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { APIUserAbortError, toFile } from "openai";
import type { TranscriptionStreamEvent } from "openai/resources/audio/transcriptions";
import { eq } from "drizzle-orm";
import { openDatabase } from "../src/db/open.ts";
import { FAKE_OPENAI_KEY, startFakeOpenAi } from "./fakes/openai.ts";
import { digestOf } from "./fakes/received-audio.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { concat, silence, speak, wavFile } from "./helpers/speech.ts";

// `POST /oai/audio/transcriptions` with `stream: true`, through the official OpenAI SDK's stream:
// transcript.text.delta per final segment as recognized, then transcript.text.done; billed as
// the same request without streaming.

const fake = startFakeOpenAi();
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ OPENAI_API_KEY: FAKE_OPENAI_KEY, OPENAI_BASE_URL: fake.url });
});
afterAll(() => {
  server.stop(0);
  fake.stop();
});

const sdkFor = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${server.url}/oai`, maxRetries: 0 });
/** Two sentences apart, so that the recognizer makes two segments. */
const recording = wavFile(concat([speak("Thank you very much for your help."), silence(1200), speak("The weather is nice today.")]));
const file = () => toFile(recording, "speech.wav", { type: "audio/wav" });

async function collect(stream: AsyncIterable<TranscriptionStreamEvent>) {
  const events: TranscriptionStreamEvent[] = [];
  for await (const ev of stream) events.push(ev);
  return events;
}

describe("/oai/audio/transcriptions with stream: true", () => {
  test("pocketsphinx: a delta per segment, done with the whole text = the joined deltas = the non-streaming transcript; billed the same", async () => {
    const streamed = await fundedAccount(server);
    const events = await collect(await sdkFor(streamed.key).audio.transcriptions.create({ file: await file(), model: "pocketsphinx", stream: true }));
    const deltas = events.filter((e) => e.type === "transcript.text.delta");
    const done = events.at(-1)!;
    expect(done.type).toBe("transcript.text.done");
    if (done.type !== "transcript.text.done") return;
    expect(deltas.length).toBeGreaterThanOrEqual(2); // one per segment, sent as recognized
    expect(deltas.map((d) => d.delta).join("")).toBe(done.text);
    expect(done.text).toContain("thank you");

    const plain = await fundedAccount(server);
    const json = await sdkFor(plain.key).audio.transcriptions.create({ file: await file(), model: "pocketsphinx" });
    expect(done.text).toBe(json.text);
    expect(done.usage).toBeUndefined(); // OpenAI types it as token usage; the bill is per second (below)
    const [a, b] = [await lastActivity(server, streamed.tenantId), await lastActivity(server, plain.tenantId)];
    expect(a).toMatchObject({ surface: "oai", provider: "pocketsphinx", status: "completed", usageUnit: "seconds", usageAmount: b.usageAmount, credits: b.credits });
  }, 30_000);

  test("a model with no streaming file path: the file API gets the file as uploaded; one delta with the whole text, then done", async () => {
    const events = await collect(await sdkFor(server.key).audio.transcriptions.create({ file: await file(), model: "whisper-1", stream: true }));
    expect(fake.transcriptions.at(-1)!.file).toEqual(digestOf([recording]));
    expect(events.map((e) => e.type)).toEqual(["transcript.text.delta", "transcript.text.done"]);
    const [delta, done] = events as unknown as [{ delta: string }, { text: string }];
    expect(delta.delta).toBe(done.text);
    expect(done.text.length).toBeGreaterThan(0);
  });

  test("failures before any text are the plain error; stream with srt is 400 naming response_format", async () => {
    const { key: poor } = await fundedAccount(server, 0);
    const broke = await sdkFor(poor)
      .audio.transcriptions.create({ file: await file(), model: "pocketsphinx", stream: true })
      .catch((e) => e);
    expect(broke).toMatchObject({ status: 429, code: "insufficient_quota" });
    const srt = await sdkFor(server.key)
      .audio.transcriptions.create({ file: await file(), model: "pocketsphinx", stream: true, response_format: "srt" } as never)
      .catch((e) => e);
    expect(srt).toMatchObject({ status: 400, param: "response_format" });
  });
});

/** Long enough that the recognizer is still at it for seconds when the client leaves. */
const LEAVING_LONG = concat(Array.from({ length: 20 }, () => [speak("Thank you very much for your help."), silence(800)]).flat());

/** A server with one decoder and no queue (the next request gets the decoder only once it is released), and an account on it. */
async function withOneDecoder(run: (solo: TestServer, account: { key: string; tenantId: string }) => Promise<void>): Promise<void> {
  const solo = await startTestServer({ AUDIO_WORKERS: "1", LOCAL_STT_DECODERS_PER_WORKER: "1", LOCAL_STT_QUEUE: "0" });
  try {
    await run(solo, await fundedAccount(solo));
  } finally {
    await solo.stop(0);
  }
}

/** One activity record, billed for the audio the recognizer was given, not the whole file: it goes a few seconds ahead of what was heard. */
async function billedWhatWasFed(solo: TestServer, tenantId: string): Promise<void> {
  const { db, schema } = solo.ctx.database;
  let records: (typeof schema.activity.$inferSelect)[] = [];
  for (let i = 0; i < 250 && !records.length; i++, await Bun.sleep(20)) records = await db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId));
  expect(records).toHaveLength(1);
  expect(records[0]).toMatchObject({ provider: "pocketsphinx", status: "completed" });
  expect(records[0].usageAmount).toBeGreaterThanOrEqual(1);
  expect(records[0].usageAmount).toBeLessThan(Math.ceil(LEAVING_LONG.length / 16000));
}

describe("a client that leaves a pocketsphinx stream", () => {
  test("its decoder is released at once (one decoder, no queue: the next request gets it); billed for the audio the recognizer was given, not the whole file", async () => {
    await withOneDecoder(async (solo, account) => {
      const sdk = new OpenAI({ apiKey: account.key, baseURL: `${solo.url}/oai`, maxRetries: 0 });
      const stream = await sdk.audio.transcriptions.create({ file: await toFile(wavFile(LEAVING_LONG), "long.wav"), model: "pocketsphinx", stream: true });
      for await (const ev of stream) if (ev.type === "transcript.text.delta") break; // the SDK aborts its request
      const pocketsphinx = solo.ctx.sttProviders.get("pocketsphinx")!;
      for (let i = 0; i < 100 && pocketsphinx.overloaded!(); i++) await Bun.sleep(20);
      expect(pocketsphinx.overloaded!()).toBeUndefined();
      const next = await collect(
        await new OpenAI({ apiKey: solo.key, baseURL: `${solo.url}/oai`, maxRetries: 0 }).audio.transcriptions.create({ file: await file(), model: "pocketsphinx", stream: true }),
      );
      expect(next.at(-1)?.type).toBe("transcript.text.done");
      await billedWhatWasFed(solo, account.tenantId);
    });
  }, 60_000);
});

describe("a client that leaves a pocketsphinx file transcription (no stream)", () => {
  test("its decoder is released at once; billed for the audio the recognizer was given, not the whole file", async () => {
    await withOneDecoder(async (solo, account) => {
      const leaving = new AbortController();
      const request = new OpenAI({ apiKey: account.key, baseURL: `${solo.url}/oai`, maxRetries: 0 }).audio.transcriptions
        .create({ file: await toFile(wavFile(LEAVING_LONG), "long.wav"), model: "pocketsphinx" }, { signal: leaving.signal })
        .catch((e) => e);
      // The one decoder is the request's: the recognizer has the file.
      const pocketsphinx = solo.ctx.sttProviders.get("pocketsphinx")!;
      for (let i = 0; i < 2000 && !pocketsphinx.overloaded!(); i++) await Bun.sleep(10);
      expect(pocketsphinx.overloaded!()).toBeDefined();
      leaving.abort();
      expect(await request).toBeInstanceOf(APIUserAbortError);
      for (let i = 0; i < 100 && pocketsphinx.overloaded!(); i++) await Bun.sleep(20);
      expect(pocketsphinx.overloaded!()).toBeUndefined();
      await billedWhatWasFed(solo, account.tenantId);
    });
  }, 60_000);
});

describe("a pocketsphinx stream as one of the open sessions", () => {
  /** Long enough that the recognizer is still at it for seconds after its first segment. */
  const long = () => toFile(wavFile(concat(Array.from({ length: 8 }, () => [speak("Thank you very much for your help."), silence(800)]).flat())), "long.wav");

  test("its key revoked (by itself) while it runs: the stream ends with invalid_api_key, billed up to its last segment", async () => {
    const watched = await startTestServer({ ACCESS_CHECK_INTERVAL_MS: "100" });
    try {
      const account = await fundedAccount(watched);
      const stream = await new OpenAI({ apiKey: account.key, baseURL: `${watched.url}/oai`, maxRetries: 0 }).audio.transcriptions.create({ file: await long(), model: "pocketsphinx", stream: true });
      const events: TranscriptionStreamEvent[] = [];
      let error: unknown;
      try {
        for await (const ev of stream) {
          events.push(ev);
          if (events.length === 1)
            expect((await fetch(`${watched.url}/account/keys/${account.key.slice(0, 12)}`, { method: "DELETE", headers: { authorization: `Bearer ${account.key}` } })).status).toBe(204);
        }
      } catch (err) {
        error = err;
      }
      expect(events.some((e) => e.type === "transcript.text.done")).toBe(false);
      expect(error).toMatchObject({ error: { code: "invalid_api_key" } });
      const record = await lastActivity(watched, account.tenantId);
      expect(record).toMatchObject({ provider: "pocketsphinx", status: "failed" });
      expect(record.usageAmount).toBeGreaterThanOrEqual(1);
    } finally {
      await watched.stop(0);
    }
  }, 60_000);

  test("the server stopping while it runs: past the grace period the stream ends with service_unavailable, and its usage is settled", async () => {
    const stopping = await startTestServer();
    const account = await fundedAccount(stopping);
    const stream = await new OpenAI({ apiKey: account.key, baseURL: `${stopping.url}/oai`, maxRetries: 0 }).audio.transcriptions.create({ file: await long(), model: "pocketsphinx", stream: true });
    const events: TranscriptionStreamEvent[] = [];
    let error: unknown;
    let stopped: Promise<void> | undefined;
    try {
      for await (const ev of stream) {
        events.push(ev);
        stopped ??= stopping.stop(0);
      }
    } catch (err) {
      error = err;
    }
    await stopped;
    expect(events.some((e) => e.type === "transcript.text.done")).toBe(false);
    expect(error).toMatchObject({ error: { code: "service_unavailable" } });
    // Settled before the server let go of its database: read it afresh.
    const database = await openDatabase(stopping.ctx.config.databaseUrl);
    try {
      const [record] = await database.db.select().from(database.schema.activity).where(eq(database.schema.activity.tenantId, account.tenantId));
      expect(record).toMatchObject({ provider: "pocketsphinx", status: "completed" });
      expect(record!.usageAmount).toBeGreaterThanOrEqual(1);
    } finally {
      await database.close();
    }
  }, 60_000);
});
