import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import { createKey } from "./helpers/accounts.ts";
import { openDatabase } from "../src/db/open.ts";
import { probeDuration } from "../src/audio/probe.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { billedSeconds } from "../src/ledger/usage.ts";
import { FilePool } from "../src/pools/file-pool.ts";
import { fitted } from "../src/sessions/file-stream.ts";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram } from "./fakes/deepgram.ts";
import { type AudioDigest, ReceivedAudio } from "./fakes/received-audio.ts";
import { peakRssMiB, resetPeak, spawnServer, type ServerProcess } from "./helpers/process.ts";

// Long, low-bitrate uploads with `stream: true` (an hour of 8 kb/s MP3 is 3.6 MB; as 16 kHz PCM,
// 115 MB) against a server in its own process, whose peak resident memory is read from /proc.
// A key that cannot pay for the file is refused before any of it is decoded; a funded file is
// decoded a batch at a time as its provider takes it, so the server's memory does not grow with
// the file's length.

const dir = mkdtempSync(join(tmpdir(), "voxroute-long-mp3-"));
const deepgram = startFakeDeepgram();
let server: ServerProcess;
let database: Awaited<ReturnType<typeof openDatabase>>;

beforeAll(async () => {
  const databaseUrl = `sqlite://${join(dir, "db.sqlite")}`;
  server = await spawnServer({ DATABASE_URL: databaseUrl, DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY, DEEPGRAM_BASE_URL: deepgram.http });
  database = await openDatabase(databaseUrl);
}, 60_000);
afterAll(async () => {
  server?.proc.kill("SIGKILL");
  await database?.close();
  deepgram.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** `minutes` of a tone as 8 kHz mono MP3 at 8 kb/s, the lowest bitrate MP3 has (made once per length). */
async function lowBitrateMp3(minutes: number): Promise<Uint8Array> {
  const path = join(dir, `${minutes}.mp3`);
  if (!(await Bun.file(path).exists())) {
    const made = Bun.spawn(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", `sine=frequency=300:sample_rate=8000:duration=${minutes * 60}`, "-ac", "1", "-ar", "8000", "-b:a", "8k", path]);
    expect(await made.exited).toBe(0);
  }
  return Bun.file(path).bytes();
}

/** A key whose account holds `credits` (a million to the dollar). */
async function keyWith(credits: number): Promise<string> {
  const { key, tenantId } = await createKey(database, `long-${crypto.randomUUID()}`);
  await new Ledger(database).credit(tenantId, { credits, type: "adjustment", description: "test" });
  return key;
}

const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${server.url}/oai`, maxRetries: 0 });
const balanceOf = async (key: string) => (await (await fetch(`${server.url}/account/balance`, { headers: { authorization: `Bearer ${key}` } })).json()) as { paid_credits: number };

describe("a long, low-bitrate MP3 with stream: true", () => {
  test("from a key holding $0.01: 429 insufficient_quota, nothing paid, and the server's memory does not grow by the file's decoded size", async () => {
    const hour = await lowBitrateMp3(60);
    const key = await keyWith(10_000); // $0.01: nova-3 at $0.0077 a minute pays for a second, not the hour
    const held = resetPeak(server.proc.pid);
    const refused = await sdk(key)
      .audio.transcriptions.create({ file: await toFile(hour, "hour.mp3", { type: "audio/mpeg" }), model: "nova-3", stream: true })
      .catch((err) => err);
    const grew = peakRssMiB(server.proc.pid) - held;
    console.log(`peak growth while refusing the hour: ${grew.toFixed(1)} MiB`);
    expect(refused).toMatchObject({ status: 429, code: "insufficient_quota" });
    expect((await balanceOf(key)).paid_credits).toBe(10_000);
    // The hour decodes to 115 MB of PCM (and the decoder's float samples besides): none of it was made.
    expect(grew).toBeLessThan(64);
    expect(deepgram.connections).toHaveLength(0);
  }, 120_000);

  test("funded: ten minutes and two hours stream in full, and the 110 minutes more raise the server's peak memory by less than their decoded audio", async () => {
    const key = await keyWith(100_000_000);
    const peakWhile = async (minutes: number) => {
      const file = await lowBitrateMp3(minutes);
      const held = resetPeak(server.proc.pid);
      const events = [];
      for await (const ev of await sdk(key).audio.transcriptions.create({ file: await toFile(file, `${minutes}.mp3`, { type: "audio/mpeg" }), model: "nova-3", stream: true })) events.push(ev);
      const grew = peakRssMiB(server.proc.pid) - held;
      expect(events.at(-1)?.type).toBe("transcript.text.done");
      // The whole file went to the provider as 16 kHz PCM (the nova fake counts it): its length, within the second begun.
      const sent = deepgram.connections.at(-1)!.audioBytes;
      expect(sent).toBeGreaterThanOrEqual(minutes * 60 * 32_000);
      expect(sent).toBeLessThanOrEqual((minutes * 60 + 1) * 32_000);
      return grew;
    };
    await peakWhile(1); // what a first file costs once (code compiled, the decoder's WebAssembly built) is not a file's length
    const short = await peakWhile(10);
    const long = await peakWhile(120);
    console.log(`peak growth: ${short.toFixed(1)} MiB for 10 minutes, ${long.toFixed(1)} MiB for 120`);
    // Decoded whole, the 110 minutes more are 211 MB more of 16 kHz PCM (and more than twice that
    // in the decoder's samples), all held at once. Decoded as the provider takes them, what they
    // add is what garbage the collector lets stand, which does not grow with the length.
    expect(long - short).toBeLessThan((110 * 60 * 32_000) / 2 ** 20);
  }, 300_000);
});

/**
 * What the router is documented to give a streaming provider for an MP3: its audio decoded to PCM
 * at `rate` and fitted to its billed seconds (docs/compat-oai.md), as a digest.
 */
async function streamedDigest(file: Uint8Array, rate: number): Promise<AudioDigest> {
  const seconds = billedSeconds(probeDuration(file).seconds);
  const pool = new FilePool(1);
  try {
    const audio = new ReceivedAudio();
    for await (const piece of fitted(await pool.decode(file, "MPEG", rate, { maxSamples: seconds * rate, chunkSamples: rate / 10 }), rate, seconds)) audio.add(piece);
    return audio.digest();
  } finally {
    await pool.close();
  }
}

/**
 * How fast the slow provider reads (60 times real time): slower than the server decodes a
 * low-bitrate MP3 into 16 kHz PCM (15 MB/s on an idle machine, 3–4 under a full test run).
 */
const SLOW_READ_BYTES_PER_SECOND = 2_000_000;

describe("a long file with stream: true to a provider that reads slowly", () => {
  test("two hours: the server decodes the file as the provider reads it, so its peak memory grows no more than when the provider reads at once; the provider hears the file whole and in order", async () => {
    const key = await keyWith(100_000_000);
    const hours = await lowBitrateMp3(120);
    const tenMinutes = await lowBitrateMp3(10);
    const tenMinutesSent = await streamedDigest(tenMinutes, 16_000);
    /** Streams `file`; the server's peak growth meanwhile, and the digest of the audio the provider received. */
    const stream = async (file: Uint8Array, bytesPerSecond?: number) => {
      deepgram.readSlowly(bytesPerSecond);
      const held = resetPeak(server.proc.pid);
      const events = [];
      for await (const ev of await sdk(key).audio.transcriptions.create({ file: await toFile(file, "long.mp3", { type: "audio/mpeg" }), model: "nova-3", stream: true })) events.push(ev);
      const grew = peakRssMiB(server.proc.pid) - held;
      expect(events.at(-1)).toMatchObject({ type: "transcript.text.done", text: "thank you very much for your help" });
      return { grew, received: deepgram.connections.at(-1)!.received.digest() };
    };
    try {
      await stream(await lowBitrateMp3(1)); // what a first file costs once (code compiled, the decoder's WebAssembly built) is not a file's length
      const atOnce = await stream(hours);
      const short = await stream(tenMinutes, SLOW_READ_BYTES_PER_SECOND);
      const slowly = await stream(hours, SLOW_READ_BYTES_PER_SECOND);
      console.log(`peak growth: ${atOnce.grew.toFixed(1)} MiB for two hours read at once; read slowly, ${short.grew.toFixed(1)} MiB for ten minutes, ${slowly.grew.toFixed(1)} MiB for two hours`);
      expect(short.received).toEqual(tenMinutesSent);
      expect(slowly.received).toEqual(atOnce.received);
      expect(slowly.received.bytes).toBeGreaterThanOrEqual(120 * 60 * 32_000);
      // Sent as fast as it decodes, most of the two hours (230 MB of PCM) would wait in the server
      // for the slow provider, on top of what decoding them leaves for the garbage collector.
      // Sent as the provider reads, at most the high-water mark waits (docs/compat-oai.md): what
      // the two peaks differ by is the collector's timing, nowhere near a quarter of the audio.
      expect(slowly.grew - atOnce.grew).toBeLessThan((120 * 60 * 32_000) / 4 / 2 ** 20);
      // And, as read at once (the test above), the 110 minutes more raise the peak by less than their decoded audio.
      expect(slowly.grew - short.grew).toBeLessThan((110 * 60 * 32_000) / 2 ** 20);
    } finally {
      deepgram.readSlowly(undefined);
    }
  }, 600_000);
});

describe("a file worker's decoding", () => {
  test("gives no more audio than the request holds, and lets go of a file whose reader stopped", async () => {
    const pool = new FilePool(1);
    try {
      const file = await lowBitrateMp3(2);
      let samples = 0;
      for await (const chunk of await pool.decode(file, "MPEG", 16000, { maxSamples: 30 * 16000, chunkSamples: 1600 })) samples += chunk.byteLength / 2;
      expect(samples).toBe(30 * 16000);
      expect(pool.load().lanes).toBe(0);
      const stopped = await pool.decode(file, "MPEG", 16000, { maxSamples: 120 * 16000, chunkSamples: 1600 });
      expect(pool.load().lanes).toBe(1);
      for await (const chunk of stopped) if (chunk.byteLength) break;
      expect(pool.load().lanes).toBe(0);
    } finally {
      await pool.close();
    }
  });
});
