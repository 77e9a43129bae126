import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { createKey } from "./helpers/accounts.ts";
import { openDatabase, type Database } from "../src/db/open.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { AUDIO_BACKLOG_BYTES } from "../src/providers/audio-backlog.ts";
import { MAX_AUDIO_PIECE } from "../src/sessions/tts-audio-out.ts";
import { FAKE_CARTESIA_KEY, FAKE_CARTESIA_VOICE, startFakeCartesia, type FakeCartesia } from "./fakes/cartesia.ts";
import { transcriptChars } from "./fakes/cartesia-realtime.ts";
import { speech } from "./fakes/http-fake.ts";
import { cpuSeconds, heldMiB, rssMiB, spawnServer, type ServerProcess } from "./helpers/process.ts";
import { RawHttpRequest, RawWebSocket } from "./helpers/raw-client.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// Clients that stop reading, on raw sockets whose kernel buffers fill, against the server in its
// own process: synthesis must pause (the server stops using CPU) with the server's memory bounded,
// and once the clients read again each gets all of its audio and is billed once for it.
// The text repeats one sentence, and every sentence is its own utterance, so the complete audio
// is exactly that many times the audio of one sentence.

const SENTENCE = "The quick brown fox jumps over the lazy dog. ";
/** The /v1/tts and stream-input frame limit is 2000 characters; frames are cut anywhere, the provider joins them. */
const frames = (text: string) => Array.from({ length: Math.ceil(text.length / 2000) }, (_, i) => text.slice(i * 2000, (i + 1) * 2000));

/** More than the server may hold for three paused readers, over what it held before. */
const MEMORY_BOUND_MIB = 40;

let server: ServerProcess;
let database: Database;
let fake: FakeCartesia;

beforeAll(async () => {
  fake = startFakeCartesia();
  const databaseUrl = `sqlite://${join(tempDir("voxroute-bp-"), "db.sqlite")}`;
  database = await openDatabase(databaseUrl);
  server = await spawnServer({ DATABASE_URL: databaseUrl, TTS_WORKERS: "2", PICO_VOICES_URL: "", CARTESIA_API_KEY: FAKE_CARTESIA_KEY, CARTESIA_BASE_URL: fake.url });
});
afterAll(async () => {
  server?.proc.kill("SIGKILL");
  await database?.close();
  fake?.stop();
});

async function account() {
  const { key, tenantId } = await createKey(database, `bp-${crypto.randomUUID()}`);
  await new Ledger(database).credit(tenantId, { credits: 1_000_000_000, type: "adjustment", description: "test" });
  return { key, tenantId };
}

/** Waits until the server process (nearly) stops using CPU; false if it is still busy at the deadline. */
async function untilIdle(deadlineMs: number): Promise<boolean> {
  const end = performance.now() + deadlineMs;
  let last = cpuSeconds(server.proc.pid);
  while (performance.now() < end) {
    await Bun.sleep(2000);
    const now = cpuSeconds(server.proc.pid);
    if (now - last < 0.1) return true;
    last = now;
  }
  return false;
}

/** The server's memory (the main thread's heap and buffers, where sessions keep audio; the resident set), its most over a few seconds. */
async function memoryPeak() {
  let held = 0;
  let rss = 0;
  for (let i = 0; i < 5; i++) {
    held = Math.max(held, await heldMiB(server));
    rss = Math.max(rss, rssMiB(server.proc.pid));
    await Bun.sleep(500);
  }
  return { held, rss };
}

const audioOfFrames = (texts: string[]) =>
  Buffer.concat(
    texts
      .map((t) => JSON.parse(t))
      .filter((f) => typeof f.audio === "string")
      .map((f) => Buffer.from(f.audio, "base64")),
  );

/** `/v1/tts` with Flite's 8 kHz voice: every frame sent at once, then close. */
async function nativeSession(key: string, text: string) {
  const ws = await RawWebSocket.open(server.wsUrl("/v1/tts?model=flite&voice=kal"), { Authorization: `Bearer ${key}` });
  for (const t of frames(text)) ws.send({ type: "text", text: t });
  ws.send({ type: "close" });
  return ws;
}

/** `/el` stream-input, PCM at the voice's own 8 kHz (base64 in JSON frames). */
async function elSession(key: string, text: string) {
  const ws = await RawWebSocket.open(server.wsUrl("/el/v1/text-to-speech/kal/stream-input?model_id=flite&output_format=pcm_8000"), { "xi-api-key": key });
  ws.send({ text: " " });
  for (const t of frames(text)) ws.send({ text: t });
  ws.send({ text: "" });
  return ws;
}

/** `/oai` speech as WAV (24 kHz: resampled from 8 kHz). */
function oaiRequest(key: string, text: string) {
  return RawHttpRequest.post(
    `${server.url}/oai/audio/speech`,
    { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    JSON.stringify({ model: "flite", voice: "kal", input: text, response_format: "wav" }),
  );
}

/** Cartesia Sonic over its WebSocket (the fake), 24 kHz PCM. */
async function cartesiaSession(key: string, text: string) {
  const ws = await RawWebSocket.open(server.wsUrl(`/v1/tts?model=sonic-3&voice=${FAKE_CARTESIA_VOICE}`), { Authorization: `Bearer ${key}` });
  for (const t of frames(text)) ws.send({ type: "text", text: t });
  ws.send({ type: "close" });
  return ws;
}

/** Samples (16-bit mono) in a WAV file, as ffmpeg decodes it. */
async function wavSamples(bytes: Uint8Array): Promise<number> {
  const file = join(tempDir("voxroute-bp-"), "speech.wav");
  writeFileSync(file, bytes);
  const ff = Bun.spawn(["ffmpeg", "-v", "error", "-i", file, "-f", "s16le", "-ac", "1", "-"], { stdout: "pipe", stderr: "pipe" });
  const pcm = await new Response(ff.stdout).arrayBuffer();
  expect(await ff.exited).toBe(0);
  return pcm.byteLength / 2;
}

/** The tenant's activity records and whether its books balance: every debit is one settled session. */
async function billing(tenantId: string) {
  const { db, schema } = database;
  for (let i = 0; i < 100; i++) {
    const holds = await db.select().from(schema.holds).where(eq(schema.holds.tenantId, tenantId));
    if (holds.length === 0) break;
    await Bun.sleep(50);
  }
  const records = await db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId));
  const [balance] = await db.select().from(schema.balances).where(eq(schema.balances.tenantId, tenantId));
  const charged = records.reduce((n, r) => n + r.credits, 0);
  return { records, charged, spent: 1_000_000_000 - balance.paidCredits, held: balance.paidHeld };
}

describe("a client that stops reading", () => {
  test("/v1/tts, /el stream-input and /oai speech paused: synthesis stops with memory bounded; resumed, each gets all its audio, billed once", async () => {
    // One sentence through each surface: the engine and resampler are loaded, and the audio of one sentence is known.
    const warm = await account();
    const one = await nativeSession(warm.key, SENTENCE);
    const oneEl = await elSession(warm.key, SENTENCE);
    const oneOai = await oaiRequest(warm.key, SENTENCE);
    await Promise.all([one.closed, oneEl.closed, oneOai.done]);
    const sentenceBytes = one.binaryBytes;
    expect(sentenceBytes).toBeGreaterThan(16000); // about 2.5 s at 8 kHz
    expect(audioOfFrames(oneEl.texts).byteLength).toBe(sentenceBytes);
    expect(oneOai.status).toBe(200);

    expect(await untilIdle(30_000)).toBe(true);
    const before = await memoryPeak();

    // ~55,800 characters on /v1/tts (about an hour of speech), a quarter of it on /el, OpenAI's most on /oai.
    const texts = { native: SENTENCE.repeat(1240), el: SENTENCE.repeat(310), oai: SENTENCE.repeat(91) };
    const { key, tenantId } = await account();
    const native = await nativeSession(key, texts.native);
    native.pause();
    const el = await elSession(key, texts.el);
    el.pause();
    const oai = await oaiRequest(key, texts.oai);
    oai.pause();

    // Synthesis pauses once the backlog bound and the sockets' buffers are full, long before the hour is spoken.
    expect(await untilIdle(90_000)).toBe(true);
    const paused = await memoryPeak();
    console.log(`paused: held ${before.held.toFixed(1)} → ${paused.held.toFixed(1)} MiB, rss ${before.rss.toFixed(0)} → ${paused.rss.toFixed(0)} MiB`);
    expect(paused.held - before.held).toBeLessThan(MEMORY_BOUND_MIB);
    // The resident set moves with the engine workers' garbage (a WASM instance per utterance), so
    // only a gross growth shows there; what the sessions hold is in the main thread's figure above.
    expect(paused.rss - before.rss).toBeLessThan(3 * MEMORY_BOUND_MIB);

    native.resume();
    el.resume();
    oai.resume();
    await Promise.all([native.closed, el.closed, oai.done]);

    expect(native.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(native.binaryBytes).toBe(1240 * sentenceBytes);
    expect(el.close?.code).toBe(1000);
    expect(JSON.parse(el.texts.at(-1)!)).toEqual({ isFinal: true });
    expect(audioOfFrames(el.texts).byteLength).toBe(310 * sentenceBytes);
    expect(oai.status).toBe(200);
    expect(oai.complete).toBe(true);
    // The 8 kHz audio at 24 kHz, short by at most the resampler's delay.
    expect(Math.abs((await wavSamples(Buffer.concat(oai.body))) - 91 * (sentenceBytes / 2) * 3)).toBeLessThan(200);

    const { records, charged, spent, held } = await billing(tenantId);
    expect(records.map((r) => [r.surface, r.status, r.usageAmount]).sort()).toEqual([
      ["el", "completed", texts.el.length],
      ["native", "completed", texts.native.length],
      ["oai", "completed", texts.oai.length],
    ]);
    expect(spent).toBe(charged);
    expect(held).toBe(0);
  }, 600_000);

  test("a cloud WebSocket upstream (Cartesia) is given no more text while the client reads nothing; resumed, all the audio arrives, billed once", async () => {
    expect(await untilIdle(30_000)).toBe(true);
    const before = await memoryPeak();
    const { key, tenantId } = await account();
    const text = SENTENCE.repeat(310);
    const ws = await cartesiaSession(key, text);
    ws.pause();

    const received = () => transcriptChars(fake.ttsSockets.at(-1)!);
    for (let i = 0; i < 100 && fake.ttsSockets.length === 0; i++) await Bun.sleep(50);
    expect(await untilIdle(60_000)).toBe(true);
    const given = received();
    await Bun.sleep(2000);
    // At most two windows of text whose audio the client has not read, and it stays there.
    expect(received()).toBe(given);
    expect(given).toBeLessThan(text.length / 2);
    const paused = await memoryPeak();
    console.log(`cartesia paused: ${given} of ${text.length} characters given; held ${before.held.toFixed(1)} → ${paused.held.toFixed(1)} MiB`);
    expect(paused.held - before.held).toBeLessThan(MEMORY_BOUND_MIB);

    ws.resume();
    await ws.closed;
    expect(ws.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(received()).toBe(text.length);
    expect(ws.binaryBytes).toBe(310 * speech(SENTENCE.trim(), 24000).byteLength);
    const { records, charged, spent, held } = await billing(tenantId);
    expect(records.map((r) => [r.provider, r.status, r.usageAmount])).toEqual([["cartesia", "completed", text.length]]);
    expect(spent).toBe(charged);
    expect(held).toBe(0);
  }, 300_000);

  test("a client that pauses after the first audio, then leaves, pays for the sentences the engine was given, not the text it sent", async () => {
    const warm = await account();
    const one = await nativeSession(warm.key, SENTENCE);
    await one.closed;
    const sentenceBytes = one.binaryBytes;

    expect(await untilIdle(30_000)).toBe(true);
    const { key, tenantId } = await account();
    const text = SENTENCE.repeat(1240);
    const ws = await nativeSession(key, text);
    await ws.pauseAfterFirstAudio();
    expect(await untilIdle(90_000)).toBe(true);
    // The audio that left the server: read by the client, or in the kernel's buffers (with a few frame headers).
    const sent = ws.binaryBytes + ws.queuedInKernel();
    ws.destroy();

    const { records, charged, spent, held } = await billing(tenantId);
    expect(records.map((r) => [r.status, r.usageAmount])).toEqual([["failed", expect.any(Number)]]);
    const billed = records[0].usageAmount;
    console.log(`flite paused then left: ${billed} of ${text.length} characters billed, ${(sent / sentenceBytes).toFixed(1)} sentences' audio sent`);
    // Every utterance is one sentence with its trailing space: a whole number of sentences was given,
    // at least those whose audio left the server, and at most those plus what the engine may run
    // ahead of the socket (the backlog bound, the utterance being sent, a frame in Bun's buffer, a
    // frame the client has half read).
    expect(billed % SENTENCE.length).toBe(0);
    const sentences = billed / SENTENCE.length;
    expect(sentences * sentenceBytes).toBeGreaterThanOrEqual(sent - MAX_AUDIO_PIECE);
    expect(sentences * sentenceBytes).toBeLessThanOrEqual(sent + AUDIO_BACKLOG_BYTES + 2 * sentenceBytes + 2 * MAX_AUDIO_PIECE);
    expect(billed).toBeLessThan(text.length / 4);
    expect(spent).toBe(charged);
    expect(held).toBe(0);
  }, 180_000);

  test("a client of a WebSocket upstream (Cartesia) that pauses, then leaves, pays for the text Cartesia received", async () => {
    expect(await untilIdle(30_000)).toBe(true);
    const { key, tenantId } = await account();
    const text = SENTENCE.repeat(620);
    const ws = await cartesiaSession(key, text);
    await ws.pauseAfterFirstAudio();
    expect(await untilIdle(60_000)).toBe(true);
    const given = transcriptChars(fake.ttsSockets.at(-1)!);
    ws.destroy();

    const { records, charged, spent, held } = await billing(tenantId);
    console.log(`cartesia paused then left: ${records[0]?.usageAmount} billed, ${given} of ${text.length} characters given`);
    expect(given).toBeLessThan(text.length / 4);
    expect(records.map((r) => [r.provider, r.status, r.usageAmount])).toEqual([["cartesia", "failed", given]]);
    expect(spent).toBe(charged);
    expect(held).toBe(0);
  }, 180_000);

  test("the error event and close sent while the client is behind still reach it, after the audio", async () => {
    const { key } = await account();
    const ws = await RawWebSocket.open(server.wsUrl("/v1/tts?model=flite&voice=slt"), { Authorization: `Bearer ${key}` });
    ws.pause();
    // Numbers are spoken as words: one utterance of minutes of audio, megabytes handed over at once.
    ws.send({ type: "text", text: "9999999 ".repeat(60) });
    ws.send({ type: "flush" });
    expect(await untilIdle(60_000)).toBe(true);
    ws.send("not a frame"); // the session ends with 1003 while the socket is full
    await Bun.sleep(1000);
    ws.resume();
    await ws.closed;
    expect(ws.binaryBytes).toBeGreaterThan(2 * 1024 * 1024);
    expect(JSON.parse(ws.texts.at(-1)!)).toMatchObject({ type: "service.tts_error", code: "invalid_tts_frame" });
    expect(ws.close).toEqual({ code: 1003, reason: "invalid_tts_frame" });
  }, 120_000);
});
