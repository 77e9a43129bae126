import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { APIError, APIUserAbortError, toFile } from "openai";
import type { TranscriptionStreamEvent } from "openai/resources/audio/transcriptions";
import { PcmDecoder } from "../src/audio/decode.ts";
import { probeDuration } from "../src/audio/probe.ts";
import { billedSeconds } from "../src/ledger/usage.ts";
import { fitted } from "../src/sessions/file-stream.ts";
import { startFakeAssemblyAi } from "./fakes/assemblyai.ts";
import { startFakeDeepgram } from "./fakes/deepgram.ts";
import { startFakeOpenAi } from "./fakes/openai.ts";
import { digestOf } from "./fakes/received-audio.ts";
import { assemblyAiAt, deepgramAt, openAiAt } from "./fakes/server-env.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { openAiSdk } from "./helpers/sdk-clients.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { concat, silence, speak, wavFile } from "./helpers/speech.ts";

// `POST /oai/audio/transcriptions` with `stream: true` on models with a streaming binding: the
// file is decoded and sent through the streaming session (the one /v1/stt runs), a delta per
// final segment; billed as the same file without streaming; a failure after some text is an
// error event billed once; a client that leaves stops the provider's work (both paths).

const assemblyai = startFakeAssemblyAi();
const deepgram = startFakeDeepgram();
const openai = startFakeOpenAi();
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ ...assemblyAiAt(assemblyai), ...deepgramAt(deepgram), ...openAiAt(openai) });
});
afterAll(() => stopServerAndFakes(server, assemblyai, deepgram, openai));

const CREDITS = 10_000_000;
/** A balance too small for a hold written behind (docs/account.md): the request waits for its hold, as the tests of that wait need. */
const AWAITED_HOLD_CREDITS = 5_000;
const sdkFor = (apiKey: string) => openAiSdk(server, apiKey);
/** Two sentences with pauses after each: the AssemblyAI fake ends a turn at each pause. */
const pcm = concat([speak("Thank you very much for your help."), silence(1200), speak("The weather is nice today."), silence(600)]);
const recording = wavFile(pcm);
const billed = Math.ceil(pcm.length / 16000);
const wav = () => toFile(recording, "speech.wav", { type: "audio/wav" });
const mp3Bytes = await Bun.file(new URL("./fixtures/speech.mp3", import.meta.url)).bytes();
const mp3 = () => toFile(mp3Bytes, "speech.mp3", { type: "audio/mpeg" });

/**
 * The audio the router is documented to stream for a file (docs/compat-oai.md): decoded at the
 * provider's rate, then at most the billed seconds, then fitted to them (src/sessions/file-stream.ts). The decoding
 * and resampling are the router's own, tested against ffmpeg in stt-files.test.ts and
 * resampler.test.ts; what is checked with it here is that their output reached the provider
 * whole and in order.
 */
async function routerAudio(file: Uint8Array, rate: number): Promise<Uint8Array[]> {
  const probe = probeDuration(file);
  const seconds = billedSeconds(probe.seconds);
  const decoder = await PcmDecoder.open(file, probe.container, rate);
  const samples = decoder.read(seconds * rate);
  decoder.free();
  const decoded = (async function* () {
    yield new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
  })();
  const pieces: Uint8Array[] = [];
  for await (const piece of fitted(Object.assign(decoded, { close: () => {} }), rate, seconds)) pieces.push(piece);
  return pieces;
}

/** The speech as an 8-bit PCM WAV: a container the router measures but does not decode (16-bit PCM only). */
function wav8(samples: Int16Array, rate = 16000): Uint8Array {
  const file = new Uint8Array(44 + samples.length);
  const v = new DataView(file.buffer);
  const text = (at: number, s: string) => file.set(new TextEncoder().encode(s), at);
  text(0, "RIFF");
  v.setUint32(4, 36 + samples.length, true);
  text(8, "WAVEfmt ");
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true); // PCM
  v.setUint16(22, 1, true); // mono
  v.setUint32(24, rate, true);
  v.setUint32(28, rate, true); // bytes a second
  v.setUint16(32, 1, true); // block alignment
  v.setUint16(34, 8, true); // bits
  text(36, "data");
  v.setUint32(40, samples.length, true);
  for (let i = 0; i < samples.length; i++) file[44 + i] = (samples[i]! >> 8) + 128;
  return file;
}

async function collect(stream: AsyncIterable<TranscriptionStreamEvent>) {
  const events: TranscriptionStreamEvent[] = [];
  let error: unknown;
  try {
    for await (const ev of stream) events.push(ev);
  } catch (err) {
    error = err;
  }
  const deltas = events.flatMap((e) => (e.type === "transcript.text.delta" ? [e.delta] : []));
  const done = events.find((e) => e.type === "transcript.text.done");
  return { events, deltas, done: done?.type === "transcript.text.done" ? done : undefined, error };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 250 && !check(); i++) await Bun.sleep(20);
  expect(check()).toBe(true);
};

/** The ledger's holds wait until `release` (which puts the ledger back as it was); `held` resolves once one is asked for. */
function holdReserves() {
  const ledger = server.ctx.meter.ledger;
  const reserve = ledger.reserve;
  let holding!: () => void;
  const held = new Promise<void>((resolve) => (holding = resolve));
  let releasing!: () => void;
  const released = new Promise<void>((resolve) => (releasing = resolve));
  ledger.reserve = async (...args) => {
    holding();
    await released;
    return reserve.apply(ledger, args);
  };
  const release = () => {
    releasing();
    ledger.reserve = reserve;
  };
  return { held, release };
}

async function ledgerOf(tenantId: string, funded = CREDITS) {
  const { db, schema } = server.ctx.database;
  const records = await db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId));
  const [balance] = await db.select().from(schema.balances).where(eq(schema.balances.tenantId, tenantId));
  return { records, spent: funded - (balance?.paidCredits ?? funded) };
}

describe("/oai/audio/transcriptions stream: true through a streaming provider", () => {
  test("AssemblyAI: a delta per turn as it ends, joined = done.text; the audio went over the socket, billed by the file's duration", async () => {
    const account = await fundedAccount(server, CREDITS);
    const { deltas, done, error } = await collect(await sdkFor(account.key).audio.transcriptions.create({ file: await wav(), model: "universal-streaming-english", stream: true }));
    expect(error).toBeUndefined();
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(deltas.slice(1).every((d) => d.startsWith(" ") && !d.startsWith("  "))).toBe(true);
    expect(deltas.join("")).toBe(done!.text);
    expect(done!.text).toContain("thank you");
    expect(done).not.toHaveProperty("usage"); // OpenAI's is token usage; this bill is per second
    expect(done).not.toHaveProperty("logprobs");

    const socket = assemblyai.streaming.at(-1)!;
    expect(socket.query.get("sample_rate")).toBe("16000");
    expect(socket.received.digest()).toEqual(digestOf(await routerAudio(recording, 16000)));
    expect(socket.audioBytes).toBeGreaterThan((billed - 1) * 32000);
    expect(socket.audioBytes).toBeLessThanOrEqual(billed * 32000);
    expect(socket.texts.map((t) => JSON.parse(t).type)).toContain("Terminate");
    const { records, spent } = await ledgerOf(account.tenantId);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ surface: "oai", provider: "assemblyai", status: "completed", usageUnit: "seconds", usageAmount: billed });
    expect(spent).toBe(records[0]!.credits);
  }, 30_000);

  test("Deepgram Nova with an MP3: streamed over /v1/listen's socket, not the prerecorded API; billed exactly as the same request without stream", async () => {
    const streamed = await fundedAccount(server, CREDITS);
    const [sockets, posts] = [deepgram.connections.length, deepgram.prerecorded.length];
    const { deltas, done, error } = await collect(await sdkFor(streamed.key).audio.transcriptions.create({ file: await mp3(), model: "nova-3", stream: true }));
    expect(error).toBeUndefined();
    expect(deltas.length).toBeGreaterThanOrEqual(1);
    expect(deltas.join("")).toBe(done!.text);
    expect(done!.text).toContain("thank you");
    expect(deepgram.connections.length).toBe(sockets + 1);
    expect(deepgram.connections.at(-1)!.received.digest()).toEqual(digestOf(await routerAudio(mp3Bytes, 16000)));
    expect(deepgram.prerecorded.length).toBe(posts);

    const plain = await fundedAccount(server, CREDITS);
    const json = await sdkFor(plain.key).audio.transcriptions.create({ file: await mp3(), model: "nova-3" });
    expect(deepgram.prerecorded.length).toBe(posts + 1);
    expect(deepgram.prerecorded.at(-1)!.file).toEqual(digestOf([mp3Bytes])); // the file API gets the file as uploaded
    const [a, b] = [await ledgerOf(streamed.tenantId), await ledgerOf(plain.tenantId)];
    expect(a.records).toHaveLength(1);
    expect(a.records[0]).toMatchObject({ provider: "deepgram", status: "completed", usageAmount: (json.usage as { seconds: number }).seconds, credits: b.records[0]!.credits });
    expect(a.spent).toBe(b.spent);
  });

  test("a WAV the decoders cannot read (8-bit): held for and tried for streaming, then given as uploaded to the prerecorded API, on the same hold; one record", async () => {
    const account = await fundedAccount(server, CREDITS);
    const [sockets, posts] = [deepgram.connections.length, deepgram.prerecorded.length];
    const eightBit = wav8(pcm);
    const { deltas, done, error } = await collect(
      await sdkFor(account.key).audio.transcriptions.create({ file: await toFile(eightBit, "speech.wav", { type: "audio/wav" }), model: "nova-3", stream: true }),
    );
    expect(error).toBeUndefined();
    expect(deltas).toEqual([done!.text]);
    expect(done!.text).toContain("thank you");
    expect(deepgram.connections.length).toBe(sockets);
    expect(deepgram.prerecorded.length).toBe(posts + 1);
    expect(deepgram.prerecorded.at(-1)!.file).toEqual(digestOf([eightBit]));
    const { records, spent } = await ledgerOf(account.tenantId);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ provider: "deepgram", status: "completed", outcome: "completed", usageAmount: billed });
    expect(spent).toBe(records[0]!.credits);
  });

  test("OpenAI realtime transcription (24 kHz PCM only): the file resampled to 24 kHz, a delta per turn, joined = done.text", async () => {
    const account = await fundedAccount(server, CREDITS);
    const { deltas, done, error } = await collect(await sdkFor(account.key).audio.transcriptions.create({ file: await wav(), model: "gpt-4o-transcribe", stream: true }));
    expect(error).toBeUndefined();
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(deltas.join("")).toBe(done!.text);
    const session = openai.realtime.at(-1)!;
    expect(session.updates[0]).toMatchObject({ audio: { input: { format: { type: "audio/pcm", rate: 24000 } } } });
    expect(session.received.digest()).toEqual(digestOf(await routerAudio(recording, 24000)));
    expect(session.audioBytes).toBeGreaterThan((billed - 1) * 48000);
    expect(session.audioBytes).toBeLessThanOrEqual(billed * 48000);
    expect(await lastActivity(server, account.tenantId)).toMatchObject({ provider: "openai", status: "completed", usageAmount: billed });
  });

  test("a silent recording: the provider is sent silence of the documented length, and answers no text", async () => {
    const account = await fundedAccount(server, CREDITS);
    const quiet = wavFile(silence(2500));
    const { deltas, done, error } = await collect(
      await sdkFor(account.key).audio.transcriptions.create({ file: await toFile(quiet, "quiet.wav", { type: "audio/wav" }), model: "gpt-4o-transcribe", stream: true }),
    );
    expect(error).toBeUndefined();
    expect(deltas).toEqual([]);
    expect(done!.text).toBe("");
    const expected = digestOf(await routerAudio(quiet, 24000));
    expect(expected.bytes).toBe(2.5 * 48000); // 2.5 s at 24 kHz: within the 3 s billed, nothing cut or added
    expect(openai.realtime.at(-1)!.received.digest()).toEqual(digestOf([new Uint8Array(expected.bytes)])); // zeros, every one of them
  });

  test("the upstream failing after a turn: the delta, then OpenAI's error event; billed once, up to the last final", async () => {
    const account = await fundedAccount(server, CREDITS);
    assemblyai.fault("drop-after-turn");
    const { deltas, done, error } = await collect(await sdkFor(account.key).audio.transcriptions.create({ file: await wav(), model: "universal-streaming-english", stream: true }));
    expect(deltas).toHaveLength(1);
    expect(done).toBeUndefined();
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).error).toMatchObject({ type: "api_error", code: "upstream_error" });
    const { records, spent } = await ledgerOf(account.tenantId);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ provider: "assemblyai", status: "failed" });
    expect(records[0]!.usageAmount).toBeGreaterThanOrEqual(1);
    expect(records[0]!.usageAmount).toBeLessThan(billed);
    expect(spent).toBe(records[0]!.credits);
  }, 30_000);

  test("a provider that stops reading: the file waits on its socket, and once it has read nothing for the upstream idle timeout, the plain 502 upstream_error, billed nothing", async () => {
    const account = await fundedAccount(server, CREDITS);
    const tenMinutes = wavFile(silence(600_000)); // 19 MB of PCM: more than the sockets' kernel buffers take
    deepgram.fault("deaf");
    const error = await sdkFor(account.key)
      .audio.transcriptions.create({ file: await toFile(tenMinutes, "ten.wav", { type: "audio/wav" }), model: "nova-3", stream: true })
      .catch((err) => err);
    expect(error).toBeInstanceOf(APIError);
    expect(error).toMatchObject({ status: 502, error: { type: "api_error", code: "upstream_error", message: "deepgram read nothing of what was sent for 10000 ms" } });
    expect(deepgram.connections.at(-1)!.audioBytes).toBe(0);
    const { records, spent } = await ledgerOf(account.tenantId);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ provider: "deepgram", status: "failed", usageAmount: 0 });
    expect(spent).toBe(0);
  }, 60_000);

  test("a client that leaves after the first delta: the provider's socket is closed, no more audio goes, billed for the audio it was given", async () => {
    const account = await fundedAccount(server, CREDITS);
    const stream = await sdkFor(account.key).audio.transcriptions.create({ file: await wav(), model: "universal-streaming-english", stream: true });
    const socket = () => assemblyai.streaming.at(-1)!;
    for await (const ev of stream) if (ev.type === "transcript.text.delta") break; // the SDK aborts its request
    await until(() => socket().closed !== undefined);
    const given = socket().audioBytes;
    expect(given).toBeLessThan(pcm.byteLength);
    const record = await lastActivity(server, account.tenantId);
    expect(record).toMatchObject({ provider: "assemblyai", status: "completed" });
    expect(record.usageAmount).toBeGreaterThanOrEqual(Math.ceil(given / 32000));
    expect(record.usageAmount).toBeLessThan(billed);
    expect(socket().audioBytes).toBe(given);
    const { records, spent } = await ledgerOf(account.tenantId);
    expect(records).toHaveLength(1);
    expect(spent).toBe(record.credits);
  }, 30_000);

  test("a client that leaves while the file's hold is being taken: no provider is given the file, nothing is billed", async () => {
    const account = await fundedAccount(server, AWAITED_HOLD_CREDITS);
    const sockets = deepgram.connections.length;
    // The ledger takes the request's hold only once the client has gone.
    const { held, release } = holdReserves();
    try {
      const leaving = new AbortController();
      const request = sdkFor(account.key)
        .audio.transcriptions.create({ file: await mp3(), model: "nova-3", stream: true }, { signal: leaving.signal })
        .catch((e) => e);
      await held;
      leaving.abort();
      expect(await request).toBeInstanceOf(APIUserAbortError);
      // Requests on other connections answered after the socket closed: the server has seen it close.
      for (let i = 0; i < 3; i++) await fetch(`${server.url}/healthz`);
    } finally {
      release();
    }
    let records: Awaited<ReturnType<typeof ledgerOf>>["records"] = [];
    for (let i = 0; i < 250 && !records.length; i++, await Bun.sleep(20)) ({ records } = await ledgerOf(account.tenantId));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ status: "failed", outcome: "client_left", usageAmount: 0, credits: 0 });
    expect((await ledgerOf(account.tenantId, AWAITED_HOLD_CREDITS)).spent).toBe(0);
    expect(deepgram.connections.length).toBe(sockets);
  });

  test("a shutdown past its grace while the file's hold is being taken ends the streaming session the file goes on to open", async () => {
    const account = await fundedAccount(server, AWAITED_HOLD_CREDITS);
    const sockets = deepgram.connections.length;
    // The ledger takes the request's hold only once the server's grace period is over.
    const { held, release } = holdReserves();
    let request: Promise<unknown>;
    try {
      request = sdkFor(account.key)
        .audio.transcriptions.create({ file: await mp3(), model: "nova-3", stream: true })
        .then((stream) => collect(stream))
        .catch((e) => e);
      await held;
      // The registry's drain with no grace: what a stopping server does once its grace period is over.
      await server.ctx.sessions.drain(0);
    } finally {
      release();
    }
    const answer = await request;
    expect(answer).toBeInstanceOf(APIError);
    expect(answer).toMatchObject({ status: 503, error: { code: "service_unavailable" } });
    let records: Awaited<ReturnType<typeof ledgerOf>>["records"] = [];
    for (let i = 0; i < 250 && !records.length; i++, await Bun.sleep(20)) ({ records } = await ledgerOf(account.tenantId));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ status: "failed", outcome: "shutdown", usageAmount: 0, credits: 0 });
    expect(deepgram.connections.length).toBe(sockets);
  });

  test("a client that leaves while a file API has the file: its request is cancelled, billed the whole file it was given", async () => {
    const account = await fundedAccount(server, CREDITS);
    const asked = openai.transcriptions.length;
    openai.fault("stall");
    const leaving = new AbortController();
    const request = sdkFor(account.key)
      .audio.transcriptions.create({ file: await wav(), model: "whisper-1", stream: true }, { signal: leaving.signal })
      .catch((e) => e);
    await until(() => openai.transcriptions.length > asked);
    expect(openai.transcriptions.at(-1)!.file).toEqual(digestOf([recording]));
    leaving.abort();
    expect(await request).toBeInstanceOf(APIUserAbortError);
    await until(() => openai.openRequests() === 0);
    const record = await lastActivity(server, account.tenantId);
    expect(record).toMatchObject({ provider: "openai", status: "completed", usageAmount: billed });
    const { records, spent } = await ledgerOf(account.tenantId);
    expect(records).toHaveLength(1);
    expect(spent).toBe(record.credits);
  });
});
