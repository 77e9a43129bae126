import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { wavHeader } from "../src/audio/wav.ts";
import { createKey, fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { ffprobe } from "./helpers/ffprobe.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { tempDir } from "./helpers/temp-dirs.ts";
import { bearer, connect, type Recording } from "./helpers/ws-client.ts";
import { startFakeOpenAi } from "./fakes/openai.ts";
import { openAiAt } from "./fakes/server-env.ts";

// The router's TTS cache (docs/tts-cache.md) over /v1/tts with the OpenAI fake: an utterance
// spoken before is played from the cache (the fake gets no request for it), mixed with the
// utterances synthesized in the same session.

const fake = startFakeOpenAi();
/** The default size (the test servers' own default is no cache). */
const ON = { TTS_CACHE_BYTES: String(64 * 1024 * 1024) };
let server: TestServer;

beforeAll(async () => void (server = await startTestServer({ ...ON, ...openAiAt(fake) })));
afterAll(async () => {
  await server.stop(0);
  fake.stop();
});

const PCM = "model=tts-1&voice=alloy&format=pcm";

async function speak(s: TestServer, key: string, texts: string[], query = PCM): Promise<Recording> {
  const c = connect(s.wsUrl(`/v1/tts?${query}`), bearer(key));
  for (const text of texts) c.send({ type: "text", text });
  c.send({ type: "close" });
  const rec = await c.closed;
  expect(rec.close.code).toBe(1000);
  return rec;
}

const joined = (rec: Recording) => Buffer.concat(rec.audio);

/** How many speech requests `run` made the fake receive. */
async function requestsDuring(run: () => Promise<unknown>): Promise<number> {
  const before = fake.speech.length;
  await run();
  return fake.speech.length - before;
}

describe("a repeated utterance", () => {
  test("is played from the cache, byte for byte, beside a synthesized one in one PCM stream", async () => {
    let first!: Recording;
    expect(await requestsDuring(async () => (first = await speak(server, server.key, ["One moment, please."])))).toBe(1);
    let second!: Recording;
    expect(await requestsDuring(async () => (second = await speak(server, server.key, ["One moment, please. ", "Your order has shipped."])))).toBe(1);
    expect(fake.speech.at(-1)!.body.input).toBe("Your order has shipped.");
    const cached = joined(first);
    const mixed = joined(second);
    expect(mixed.subarray(0, cached.byteLength)).toEqual(cached);
    expect(mixed.byteLength).toBeGreaterThan(cached.byteLength);
    const rate = second.events.find((e) => e.type === "service.tts_audio_started")!.sample_rate;
    const probed = await ffprobe(Buffer.concat([wavHeader(rate, 1, mixed.byteLength), mixed]), "wav");
    expect(probed.seconds).toBeCloseTo(mixed.byteLength / 2 / rate, 1);
  });

  test("is played from the cache in an MP3 stream, which decodes whole", async () => {
    const mp3 = "model=tts-1&voice=alloy&format=mp3";
    expect(await requestsDuring(() => speak(server, server.key, ["Thanks for calling."], mp3))).toBe(1);
    let mixed!: Recording;
    expect(await requestsDuring(async () => (mixed = await speak(server, server.key, ["Thanks for calling. ", "We are open until five."], mp3)))).toBe(1);
    const probed = await ffprobe(joined(mixed), "mp3");
    expect(probed.codec).toBe("mp3");
    expect(probed.seconds).toBeGreaterThan(0);
  });

  test("from an embedded engine's MP3 (one LAME stream across utterances, frames not ending where utterances do) is not cached", async () => {
    const flite = "model=flite&voice=slt&format=mp3";
    const count = async () => (await server.ctx.metrics.ttsCacheMisses.get()).values.find((v) => v.labels.provider === "flite")?.value ?? 0;
    const before = await count();
    const made = joined(await speak(server, server.key, ["Welcome to the flite line."], flite));
    const again = joined(await speak(server, server.key, ["Welcome to the flite line."], flite));
    expect(again).toEqual(made);
    expect(await count()).toBe(before);
    await speak(server, server.key, ["Welcome to the flite line."], "model=flite&voice=slt&format=pcm");
    expect(await count()).toBe(before + 1);
  });

  test("is synthesized again when the request opts out with cache=false", async () => {
    await speak(server, server.key, ["Opting out is allowed."]);
    expect(await requestsDuring(() => speak(server, server.key, ["Opting out is allowed."], `${PCM}&cache=false`))).toBe(1);
  });

  test("cache=maybe is a 400 naming cache", async () => {
    const res = await fetch(`${server.url}/v1/tts?${PCM}&cache=maybe`, {
      headers: { ...bearer(server.key), upgrade: "websocket", connection: "Upgrade", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13" },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_request", param: "cache" });
  });

  test("with the tenant scope, is not played to another tenant", async () => {
    await speak(server, server.key, ["Private greeting for tenant A."]);
    const other = await createKey(server.ctx.database, "tenant-b");
    await server.ctx.meter.ledger.credit(other.tenantId, { credits: 10_000_000, type: "adjustment", description: "test funds" });
    expect(await requestsDuring(() => speak(server, other.key, ["Private greeting for tenant A."]))).toBe(1);
    expect(await requestsDuring(() => speak(server, other.key, ["Private greeting for tenant A."]))).toBe(0);
  });

  test("a session cut off while the utterance is synthesized keeps nothing", async () => {
    fake.midStream({ after: 2000, fault: "hang" });
    const c = connect(server.wsUrl(`/v1/tts?${PCM}`), bearer(server.key));
    c.send({ type: "text", text: "This answer is interrupted." });
    c.send({ type: "flush" });
    while (!c.rec.audio.length) await Bun.sleep(10);
    c.ws.close();
    await c.closed;
    fake.midStream(undefined);
    expect(await requestsDuring(() => speak(server, server.key, ["This answer is interrupted."]))).toBe(1);
  });
});

describe("the operator's settings", () => {
  test("with the shared scope, another tenant plays the entry", async () => {
    const shared = await startTestServer({ ...ON, ...openAiAt(fake), TTS_CACHE_SCOPE: "shared" });
    try {
      await speak(shared, shared.key, ["A greeting for everyone."]);
      const other = await createKey(shared.ctx.database, "tenant-b");
      await shared.ctx.meter.ledger.credit(other.tenantId, { credits: 10_000_000, type: "adjustment", description: "test funds" });
      expect(await requestsDuring(() => speak(shared, other.key, ["A greeting for everyone."]))).toBe(0);
    } finally {
      await shared.stop(0);
    }
  });

  test("a hit is billed per character at the model's price times TTS_CACHE_PRICE_FACTOR, its characters counted apart", async () => {
    const discounted = await startTestServer({ ...ON, ...openAiAt(fake), TTS_CACHE_PRICE_FACTOR: "0.25" });
    try {
      const { key, tenantId } = await fundedAccount(discounted);
      const TEXT = "Please hold while I check that for you. ";
      const NEW = "Thanks for waiting.";
      await speak(discounted, key, [TEXT]);
      const full = await lastActivity(discounted, tenantId);
      expect(full.cachedUnits).toBe(0);
      await speak(discounted, key, [TEXT, NEW]);
      const mixed = await lastActivity(discounted, tenantId);
      expect(mixed.id).not.toBe(full.id);
      const [cached, synthesized] = [[...TEXT].length, [...NEW].length];
      expect(mixed).toMatchObject({ usageAmount: cached + synthesized, cachedUnits: cached });
      const perCharacter = full.credits / full.usageAmount; // whole credits per character at this model's price
      expect(Number.isInteger(perCharacter)).toBe(true); // no sub-credit carry from the first session
      expect(mixed.credits).toBe(Math.floor(synthesized * perCharacter + cached * perCharacter * 0.25));
    } finally {
      await discounted.stop(0);
    }
  });

  test("a provider left out of TTS_CACHE_PROVIDERS is never cached", async () => {
    const only = await startTestServer({ ...ON, ...openAiAt(fake), TTS_CACHE_PROVIDERS: "flite,svox-pico" });
    try {
      await speak(only, only.key, ["Never kept."]);
      expect(await requestsDuring(() => speak(only, only.key, ["Never kept."]))).toBe(1);
    } finally {
      await only.stop(0);
    }
  });

  test("entries in TTS_CACHE_DIR outlive a restart", async () => {
    const dir = tempDir("voxroute-tts-cache-");
    const env = { ...ON, ...openAiAt(fake), TTS_CACHE_DIR: dir, TTS_CACHE_SCOPE: "shared" };
    const before = await startTestServer(env);
    await speak(before, before.key, ["Kept on disk."]);
    while (!readdirSync(dir).some((f) => f.endsWith(".tts"))) await Bun.sleep(10);
    await before.stop(0);
    const after = await startTestServer(env);
    try {
      expect(await requestsDuring(() => speak(after, after.key, ["Kept on disk."]))).toBe(0);
    } finally {
      await after.stop(0);
    }
  });
});
