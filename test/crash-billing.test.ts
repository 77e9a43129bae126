import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { accountIn } from "./helpers/accounts.ts";
import { AUDIO_BACKLOG_BYTES } from "../src/providers/audio-backlog.ts";
import { MAX_AUDIO_PIECE } from "../src/sessions/tts-audio-out.ts";
import { FAKE_CARTESIA_KEY, FAKE_CARTESIA_VOICE, startFakeCartesia } from "./fakes/cartesia.ts";
import { transcriptChars } from "./fakes/cartesia-realtime.ts";
import { FIXED_CHUNK, TEST_MODEL } from "./fakes/fixed-pcm-provider.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { killServer, spawnServer, type ServerProcess } from "./helpers/process.ts";
import { RawWebSocket } from "./helpers/raw-client.ts";
import { frames, silence } from "./helpers/speech.ts";
import { bearer, connect, type Client } from "./helpers/ws-client.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// A server killed with SIGKILL in the middle of streaming sessions bills what it had delivered:
// the restarted server settles each orphaned hold from its last checkpoint (status
// `interrupted`), at the hold's rate, and releases the rest. Checked from outside, through the
// /account endpoints, against what the client itself sent and received. TEST_MODEL costs 10
// credits per character; PocketSphinx 10 credits per second.

const INITIAL = 10_000_000;
/** Audio per flush from the `fixed` provider: 25 chunks of 20 ms. */
const CHUNKS_PER_FLUSH = 25;

const running: ServerProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
const cartesia = startFakeCartesia();
afterAll(async () => {
  for (const s of running) s.proc.kill("SIGKILL");
  for (const c of cleanups.reverse()) await c();
  cartesia.stop();
});

async function start(databaseUrl: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  // A short hold lifetime, so that the restarted server finds the dead sessions' holds lapsed soon.
  const server = await spawnServer({
    DATABASE_URL: databaseUrl,
    TTS_WORKERS: "1",
    AUDIO_WORKERS: "1",
    HOLD_TTL_MS: "3000",
    FIXED_CHUNKS: String(CHUNKS_PER_FLUSH),
    CARTESIA_API_KEY: FAKE_CARTESIA_KEY,
    CARTESIA_BASE_URL: cartesia.url,
    ...env,
  });
  running.push(server);
  return server;
}

const get = async (server: ServerProcess, key: string, path: string) => (await fetch(`${server.url}${path}`, { headers: bearer(key) })).json() as Promise<any>;

/** The account's one activity record, once the restarted server has settled it (bounded wait). */
async function settledRecord(server: ServerProcess, key: string) {
  for (let i = 0; i < 150; i++) {
    const { items } = await get(server, key, "/account/activity");
    if (items.length) return items;
    await Bun.sleep(100);
  }
  throw new Error("the interrupted session was never settled");
}

const nextEvent = (c: Client, type: string, after: number) =>
  (async () => {
    for (;;) {
      const i = c.rec.events.findIndex((e, n) => n >= after && e.type === type);
      if (i >= 0) return i;
      await Bun.sleep(5);
    }
  })();

/**
 * Streams text frames in real time: each frame is flushed and its audio (0.5 s) played before the
 * next is sent. Killed right after the last frame's audio arrived, before its checkpoint is due.
 */
const frameText = (i: number) => `Frame number ${i + 1} of a long story. `;

async function ttsKilledMidStream(server: ServerProcess, key: string, frameCount: number) {
  const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(key));
  await nextEvent(c, "service.tts_session_ready", 0);
  const sent: number[] = [];
  let seen = 0;
  for (let i = 0; i < frameCount; i++) {
    const text = frameText(i);
    c.send({ type: "text", text });
    c.send({ type: "flush" });
    sent.push([...text].length);
    seen = (await nextEvent(c, "service.tts_flushed", seen)) + 1;
    if (i + 1 < frameCount) await Bun.sleep(500); // the client plays the audio
  }
  await killServer(server);
  return { sent, audioBytes: c.rec.audio.reduce((n, a) => n + a.byteLength, 0) };
}

const SENTENCE = "The quick brown fox jumps over the lazy dog. ";

/**
 * Sends a long text at once, reads the first audio, then stops reading: the router holds the rest
 * of the text back. Killed once no more audio has left the server for a few seconds (the session
 * is stalled on the socket and its checkpoint written); returns the audio bytes that had left it.
 */
async function pausedThenKilled(server: ServerProcess, key: string, path: string, text: string) {
  const ws = await RawWebSocket.open(server.wsUrl(path), bearer(key));
  for (let at = 0; at < text.length; at += 2000) ws.send({ type: "text", text: text.slice(at, at + 2000) });
  await ws.pauseAfterFirstAudio();
  const sent = () => ws.binaryBytes + ws.queuedInKernel();
  for (let last = -1, i = 0; i < 60 && sent() !== last; i++) {
    last = sent();
    await Bun.sleep(3000);
  }
  const audio = sent();
  await killServer(server);
  return audio;
}

/** Streams silence in real time, 20 ms frames, then is killed at once. */
async function sttKilledMidStream(server: ServerProcess, key: string, ms: number) {
  const c = connect(server.wsUrl("/v1/stt?model=pocketsphinx-en-us&audio_format=pcm_16000"), bearer(key));
  await c.opened;
  let bytes = 0;
  for (const f of frames(silence(ms))) {
    c.ws.send(f);
    bytes += f.byteLength;
    await Bun.sleep(20);
  }
  await killServer(server);
  return { seconds: bytes / 32_000 };
}

/** Balance, activity and transactions agree: the record's credits were debited once, nothing stays held. */
async function expectBooks(server: ServerProcess, key: string, record: any) {
  const balance = await get(server, key, "/account/balance");
  expect(balance.paid_credits).toBe(INITIAL - record.credits);
  expect(balance.spendable_paid_credits).toBe(balance.paid_credits);
  const { items: transactions } = await get(server, key, "/account/transactions");
  expect(transactions.map((t: any) => t.credits)).toEqual([INITIAL]);
  const { items: usage } = await get(server, key, "/account/usage");
  expect(usage).toMatchObject([{ requests: 1, failed: 1, credits: record.credits }]);
}

function crashSuite(name: string, databaseUrl: () => Promise<string>, skip: boolean) {
  describe.skipIf(skip)(`${name}: a server killed mid-stream bills what it had delivered`, () => {
    test("TTS: the text whose audio was sent is billed after the restart, at most one text frame short", async () => {
      const url = await databaseUrl();
      const key = await accountIn(url, INITIAL);
      const { sent, audioBytes } = await ttsKilledMidStream(await start(url), key, 6);
      expect(audioBytes).toBe(sent.length * CHUNKS_PER_FLUSH * FIXED_CHUNK.byteLength); // every frame was heard in full

      const restarted = await start(url);
      const [record, ...others] = await settledRecord(restarted, key);
      expect(others).toEqual([]);
      const delivered = sent.reduce((a, b) => a + b, 0);
      expect(record).toMatchObject({ status: "interrupted", provider: "fixed", model: TEST_MODEL, capability: "tts", usage_unit: "characters" });
      expect(record.usage_amount).toBeLessThanOrEqual(delivered);
      expect(record.usage_amount).toBeGreaterThanOrEqual(delivered - sent.at(-1)!);
      expect(record.credits).toBe(record.usage_amount * 10);
      await expectBooks(restarted, key, record);
      await killServer(restarted);
    }, 60_000);

    test("TTS with the router's cache: the characters it played are billed after the restart at its price factor, as a settle bills them", async () => {
      const url = await databaseUrl();
      const server = await start(url, { TTS_CACHE_BYTES: String(16 << 20), TTS_CACHE_SCOPE: "shared", TTS_CACHE_PRICE_FACTOR: "0.5" });
      // Another account speaks the first three frames: the cache keeps them.
      const warm = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(await accountIn(url, INITIAL)));
      for (let i = 0; i < 3; i++) {
        warm.send({ type: "text", text: frameText(i) });
        warm.send({ type: "flush" });
      }
      warm.send({ type: "close" });
      expect((await warm.closed).close).toEqual({ code: 1000, reason: "tts_complete" });
      const key = await accountIn(url, INITIAL);
      const { sent } = await ttsKilledMidStream(server, key, 6);
      const fromCache = sent.slice(0, 3).reduce((a, b) => a + b, 0);

      const restarted = await start(url);
      const [record, ...others] = (await settledRecord(restarted, key)) as any[];
      expect(others).toEqual([]);
      expect(record).toMatchObject({ status: "interrupted", provider: "fixed", usage_unit: "characters", cached_units: fromCache });
      expect(record.usage_amount).toBeGreaterThanOrEqual(sent.reduce((a, b) => a + b, 0) - sent.at(-1)!);
      // 10 credits a character from the provider, 5 from the cache (before: every character at 10).
      expect(record.credits).toBe((record.usage_amount - fromCache) * 10 + fromCache * 5);
      await expectBooks(restarted, key, record);
      await killServer(restarted);
    }, 60_000);

    test("TTS over a WebSocket upstream, client paused: the checkpoint is the text Cartesia was given, not the text written", async () => {
      const url = await databaseUrl();
      const key = await accountIn(url, INITIAL);
      const text = SENTENCE.repeat(310);
      await pausedThenKilled(await start(url), key, `/v1/tts?model=sonic-3&voice=${FAKE_CARTESIA_VOICE}`, text);
      const given = transcriptChars(cartesia.ttsSockets.at(-1)!);
      expect(given).toBeLessThan(text.length / 2);

      const restarted = await start(url);
      const [record, ...others] = await settledRecord(restarted, key);
      expect(others).toEqual([]);
      expect(record).toMatchObject({ status: "interrupted", provider: "cartesia", capability: "tts", usage_unit: "characters", usage_amount: given, voice: FAKE_CARTESIA_VOICE });
      await expectBooks(restarted, key, record);
      await killServer(restarted);
    }, 300_000);

    test("TTS on an embedded engine, client paused: the checkpoint is the sentences the engine was given, not the text written", async () => {
      const url = await databaseUrl();
      const server = await start(url);
      const one = connect(server.wsUrl("/v1/tts?model=flite&voice=kal"), bearer(await accountIn(url, INITIAL)));
      one.send({ type: "text", text: SENTENCE });
      one.send({ type: "close" });
      const sentenceBytes = (await one.closed).audio.reduce((n, a) => n + a.byteLength, 0);
      const key = await accountIn(url, INITIAL);
      const text = SENTENCE.repeat(1240);
      const sent = await pausedThenKilled(server, key, "/v1/tts?model=flite&voice=kal", text);

      const restarted = await start(url);
      const [record, ...others] = await settledRecord(restarted, key);
      expect(others).toEqual([]);
      expect(record).toMatchObject({ status: "interrupted", provider: "flite", capability: "tts", usage_unit: "characters", voice: "kal" });
      // Whole sentences (each with its trailing space), about those whose audio had left the server:
      // at most the engine's lead over the socket more (the backlog bound and the pieces in transit).
      expect(record.usage_amount % SENTENCE.length).toBe(0);
      const sentences = record.usage_amount / SENTENCE.length;
      expect(sentences * sentenceBytes).toBeGreaterThanOrEqual(sent - MAX_AUDIO_PIECE);
      expect(sentences * sentenceBytes).toBeLessThanOrEqual(sent + AUDIO_BACKLOG_BYTES + 2 * sentenceBytes + 2 * MAX_AUDIO_PIECE);
      expect(record.usage_amount).toBeLessThan(text.length / 4);
      await expectBooks(restarted, key, record);
      await killServer(restarted);
    }, 300_000);

    test.skipIf(!localSttAvailable)(
      "STT: the audio sent is billed after the restart, at most about a second short",
      async () => {
        const url = await databaseUrl();
        const key = await accountIn(url, INITIAL);
        const { seconds } = await sttKilledMidStream(await start(url), key, 4000);

        const restarted = await start(url);
        const [record, ...others] = await settledRecord(restarted, key);
        expect(others).toEqual([]);
        expect(record).toMatchObject({ status: "interrupted", provider: "pocketsphinx", capability: "stt", usage_unit: "seconds" });
        expect(record.usage_amount).toBeLessThanOrEqual(Math.ceil(seconds));
        expect(record.usage_amount).toBeGreaterThanOrEqual(Math.floor(seconds) - 1);
        expect(record.credits).toBe(record.usage_amount * 10);
        await expectBooks(restarted, key, record);
        await killServer(restarted);
      },
      60_000,
    );
  });
}

crashSuite("SQLite", async () => `sqlite://${join(tempDir("crash-billing-"), "db.sqlite")}`, false);
crashSuite(
  "PostgreSQL",
  async () => {
    const fresh = await freshPostgres();
    cleanups.push(fresh.drop);
    return fresh.url;
  },
  !postgresAvailable,
);
