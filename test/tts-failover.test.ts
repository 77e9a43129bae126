import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { unlinkSync, writeFileSync } from "node:fs";
import { afterId3, mpegFrame } from "../src/audio/duration/mpeg.ts";
import { continuation } from "../src/audio/stream-continuation.ts";
import { ElevenLabsTts } from "../src/providers/elevenlabs/tts.ts";
import { OpenAiTts } from "../src/providers/openai/tts.ts";
import { FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { mp3, speech, type MidStreamFault } from "./fakes/http-fake.ts";
import { FAKE_ELEVENLABS_KEY, FAKE_VOICE, startFakeElevenLabs } from "./fakes/elevenlabs.ts";
import { FAKE_OPENAI_KEY, startFakeOpenAi, type FakeOpenAi } from "./fakes/openai.ts";
import { elevenLabsAt } from "./fakes/server-env.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { ffprobe } from "./helpers/ffprobe.ts";
import { fakeUpstreamOptions, UPSTREAM_TIMEOUTS } from "./helpers/http-tts.ts";
import { elevenLabsSdk, openAiSdk } from "./helpers/sdk-clients.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { bearer, connect, totalBytes } from "./helpers/ws-client.ts";

// A TTS provider that fails after its audio went out (its connection cut, its stream hung, an
// error answer for its next sentence) is replaced in the middle of the session: the text from the
// sentence whose audio had not ended goes to the next candidate, the client hears the rest in the
// stream's own format, the session ends normally, and each part is billed at its own binding's rate.

let fake: FakeOpenAi;
let server: TestServer;
/** The fallback speaks 0.4 s of a 16 kHz tone per flush (and at the end): resampled to the stream's 24 kHz. */
const FALLBACK_CHUNKS = 20;

const FIRST = "The first sentence is heard whole. ";
const REST = "The second one is cut off in the middle. The third ends it.";
const TEXT = FIRST + REST;
/** Bytes of the first sentence's audio, as the fake speaks it (24 kHz PCM). */
const firstBytes = () => speech(FIRST.trim(), 24000).byteLength;
/** The fault strikes two chunks into the second sentence (a 500 answers the second sentence's request). */
const faultAt = (fault: MidStreamFault["fault"]): MidStreamFault => ({ fault, after: firstBytes() + (fault === "500" ? 0 : 9600) });

beforeAll(async () => {
  fake = startFakeOpenAi();
  const adapter = (id: string) => Object.assign(new OpenAiTts(fakeUpstreamOptions(FAKE_OPENAI_KEY, fake.url)), { id });
  // "oai-two", the same fake again, is the fallback of MP3 sessions (the fixed tone has no MP3).
  const catalogue = testCatalogue(["oai-echo", "fixed", "oai-two"]);
  for (const i of [0, 2]) catalogue.providers[i].requiresVoice = true;
  for (const i of [0, 2]) catalogue.providers[i].bindings[0].formats = ["pcm", "mp3"];
  // The first provider is dearer (20 credits a character; the fallback 10): each part at its own rate.
  catalogue.providers[0].bindings[0].price = { amount: "0.00002", per: "character" };
  server = await startTestServer(
    { UPSTREAM_IDLE_TIMEOUT_MS: String(UPSTREAM_TIMEOUTS.idleTimeoutMs) },
    { extra: { catalogue, providers: [adapter("oai-echo"), new FixedPcmProvider("fixed", FALLBACK_CHUNKS), adapter("oai-two")] } },
  );
});
afterAll(() => stopServerAndFakes(server, fake));

/** The record names both bindings: the first sentence at the first one's rate, the rest at the fallback's. */
async function expectBilledInParts(tenantId: string) {
  const record = await lastActivity(server, tenantId);
  const first = [...FIRST].length;
  const rest = [...REST].length;
  expect(record).toMatchObject({ provider: "fixed", status: "completed", outcome: "completed", usageAmount: first + rest, credits: first * 20 + rest * 10 });
  expect(JSON.parse(record.parts!)).toEqual([
    { provider: "oai-echo", model: TEST_MODEL, units: first, credits: first * 20, voice: "alloy" },
    { provider: "fixed", model: TEST_MODEL, units: rest, credits: rest * 10, voice: "alloy" },
  ]);
}

/** Only the rest went to the fallback: the fake heard the first and second sentences, never the first again. */
function expectReplayFromSecondSentence() {
  const inputs = fake.speech.slice(-2).map((r) => r.body.input);
  expect(inputs).toEqual([FIRST.trim(), "The second one is cut off in the middle."]);
}

describe("/v1/tts: a provider failing after audio went out", () => {
  for (const fault of ["die", "hang", "500"] as const) {
    test(`${fault}: the rest is heard from the fallback in the same format, 1000 tts_complete, billed in parts`, async () => {
      const { key, tenantId } = await fundedAccount(server);
      fake.midStream(faultAt(fault));
      const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}&voice=alloy&provider_order=oai-echo,fixed`), bearer(key));
      c.send({ type: "text", text: TEXT });
      c.send({ type: "close" });
      const rec = await c.closed;
      expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
      const statuses = rec.events.filter((e) => e.type === "service.tts_provider_status").map((e) => `${e.provider}:${e.status}${e.voice ? `:${e.voice}` : ""}`);
      expect(statuses).toEqual(["oai-echo:failed", "fixed:connecting", "fixed:connected:alloy"]);
      // One stream: audio_started once, at the first provider's 24 kHz; the fallback's tone resampled to it.
      expect(rec.events.filter((e) => e.type === "service.tts_audio_started")).toEqual([expect.objectContaining({ provider: "oai-echo", sample_rate: 24000 })]);
      const heardFirst = firstBytes() + (fault === "500" ? 0 : 9600);
      const fallbackBytes = (FALLBACK_CHUNKS * 0.02 * 24000 * 2) / 2; // the tone's 0.4 s at 24 kHz, ± the resampler's delay
      expect(totalBytes(rec.audio)).toBeGreaterThan(heardFirst + fallbackBytes * 0.9);
      expect(totalBytes(rec.audio)).toBeLessThanOrEqual(heardFirst + fallbackBytes * 2 + 4800);
      expect(rec.events.find((e) => e.type === "service.tts_session_ended")).toMatchObject({ characters: [...TEXT].length });
      expectReplayFromSecondSentence();
      await expectBilledInParts(tenantId);
    });
  }
});

/** ffmpeg reads the whole body without a complaint (a second header or a broken frame in the middle is one). */
function decodesWhole(bytes: Uint8Array, ext: string): string {
  const path = `/tmp/voxroute-failover-${crypto.randomUUID()}.${ext}`;
  writeFileSync(path, bytes);
  try {
    return Bun.spawnSync(["ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"]).stderr.toString();
  } finally {
    unlinkSync(path);
  }
}

/** The body is MPEG frames end to end, each header where the one before ends: no frame cut short in the middle. */
function wholeFrames(body: Uint8Array): boolean {
  let at = afterId3(body);
  for (let frame = mpegFrame(body, at); frame?.length; frame = mpegFrame(body, at)) at += frame.length;
  return at === body.byteLength;
}

const occurrences = (bytes: Uint8Array, marker: string) => Buffer.from(bytes).toString("latin1").split(marker).length - 1;

test("/v1/tts format=mp3, the provider's own MP3 cut off mid-frame: the next one's MP3 (same rate) follows whole frames, ffmpeg decodes it whole", async () => {
  const { key, tenantId } = await fundedAccount(server);
  // The fake's frames are 96 bytes: the cut falls inside one.
  const firstMp3 = mp3(speech(FIRST.trim(), 24000), 24000).byteLength;
  fake.midStream({ fault: "die", after: firstMp3 + 9600 + 50 });
  const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}&voice=alloy&format=mp3&provider_order=oai-echo,oai-two`), bearer(key));
  c.send({ type: "text", text: TEXT });
  c.send({ type: "close" });
  const rec = await c.closed;
  expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
  const body = Buffer.concat(rec.audio);
  expect(decodesWhole(body, "mp3")).toBe("");
  expect(wholeFrames(body)).toBe(true);
  const probed = await ffprobe(body, "mp3");
  expect(probed).toMatchObject({ codec: "mp3", sampleRate: 24000 });
  // The first sentence, then the second and third again from the fallback.
  expect(probed.seconds).toBeGreaterThan((speech(FIRST.trim(), 24000).byteLength + speech(REST, 24000).byteLength) / 2 / 24000 - 0.2);
  // The fallback is the same fake: it heard the sentence cut off again, then the last one.
  expect(fake.speech.slice(-4).map((r) => r.body.input)).toEqual([FIRST.trim(), "The second one is cut off in the middle.", "The second one is cut off in the middle.", "The third ends it."]);
  const record = await lastActivity(server, tenantId);
  expect(JSON.parse(record.parts!).map((p: { provider: string; units: number }) => [p.provider, p.units])).toEqual([
    ["oai-echo", [...FIRST].length],
    ["oai-two", [...REST].length],
  ]);
});

describe("HTTP streams: the body goes on across the switch, one stream of one format", () => {
  const cases = [
    { fault: "die", format: "mp3", ext: "mp3", codec: "mp3" },
    { fault: "hang", format: "opus", ext: "ogg", codec: "opus" },
    { fault: "500", format: "wav", ext: "wav", codec: "pcm_s16le" },
    { fault: "die", format: "pcm", ext: "pcm", codec: "pcm_s16le" },
  ] as const;
  for (const { fault, format, ext, codec } of cases) {
    test(`/oai/audio/speech through the openai SDK, ${format}, ${fault}: ffmpeg decodes it whole, billed in parts`, async () => {
      const { key, tenantId } = await fundedAccount(server);
      fake.midStream(faultAt(fault));
      const res = await openAiSdk(server, key).audio.speech.create({ model: TEST_MODEL, voice: "alloy", input: TEXT, response_format: format });
      const body = new Uint8Array(await res.arrayBuffer());
      // What the first provider sent before the fault: a reset takes with it what the router had not
      // read yet (the kernel drops it), so only a hang's 9600 bytes of the second sentence are sure to arrive.
      const first = (firstBytes() + (fault === "hang" ? 9600 : 0)) / 2 / 24000;
      if (format === "pcm") {
        // Raw 24 kHz PCM: the first provider's bytes, then the fallback's tone at the same rate.
        expect(body.byteLength / 2 / 24000).toBeGreaterThan(first + 0.35);
      } else {
        expect(decodesWhole(body, ext)).toBe("");
        const probed = await ffprobe(body, ext);
        expect(probed).toMatchObject({ codec, sampleRate: format === "opus" ? 48000 : 24000, channels: 1 });
        expect(probed.seconds).toBeGreaterThan(first + 0.35);
      }
      if (format === "wav") expect(occurrences(body, "RIFF")).toBe(1);
      if (format === "opus") expect(occurrences(body, "OpusHead")).toBe(1);
      expectReplayFromSecondSentence();
      await expectBilledInParts(tenantId);
    });
  }
});

describe("/v1/tts over a WebSocket upstream (ElevenLabs stream-input): replayed from the last answered flush, or the sentence its timings stopped in", () => {
  const el = startFakeElevenLabs();
  let onEl: TestServer;
  beforeAll(async () => {
    const adapter = (id: string) => Object.assign(new ElevenLabsTts(fakeUpstreamOptions(FAKE_ELEVENLABS_KEY, el.url)), { id });
    const catalogue = testCatalogue(["el-echo", "fixed", "el-two"]);
    for (const i of [0, 2]) catalogue.providers[i].requiresVoice = true;
    catalogue.providers[0].bindings[0].price = { amount: "0.00002", per: "character" };
    const providers = [adapter("el-echo"), new FixedPcmProvider("fixed", FALLBACK_CHUNKS), adapter("el-two")];
    onEl = await startTestServer({ ...elevenLabsAt(el), UPSTREAM_IDLE_TIMEOUT_MS: String(UPSTREAM_TIMEOUTS.idleTimeoutMs) }, { extra: { catalogue, providers } });
  });
  afterAll(() => stopServerAndFakes(onEl, el));

  /** The first sentence, a flush, the rest, close: the upstream fails two 0.2 s pieces into the rest. */
  function flushThenFail(fault: MidStreamFault["fault"], query: string, key: string) {
    el.midStream({ fault, after: firstBytes() + 2 * 9600 });
    const c = connect(onEl.wsUrl(`/v1/tts?model=${TEST_MODEL}&voice=${FAKE_VOICE}&${query}`), bearer(key));
    c.send({ type: "text", text: FIRST });
    c.send({ type: "flush" });
    c.send({ type: "text", text: REST });
    c.send({ type: "close" });
    return c.closed;
  }

  for (const fault of ["die", "hang", "500"] as const) {
    test(`${fault} after the first flush was answered: the text after it goes to the fallback, 1000, billed in parts`, async () => {
      const { key, tenantId } = await fundedAccount(onEl);
      const rec = await flushThenFail(fault, "provider_order=el-echo,fixed", key);
      expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
      expect(rec.events.filter((e) => e.type === "service.tts_flushed").length).toBe(1);
      expect(rec.events.filter((e) => e.type === "service.tts_provider_status").map((e) => `${e.provider}:${e.status}`)).toEqual(["el-echo:failed", "fixed:connecting", "fixed:connected"]);
      const first = [...FIRST].length;
      const rest = [...REST].length;
      const record = await lastActivity(onEl, tenantId);
      expect(record).toMatchObject({ provider: "fixed", status: "completed", usageAmount: first + rest, credits: first * 20 + rest * 10 });
      expect(JSON.parse(record.parts!).map((p: { provider: string; units: number }) => [p.provider, p.units])).toEqual([
        ["el-echo", first],
        ["fixed", rest],
      ]);
    });
  }

  test("without a flush, the provider's character timings tell where its audio stopped: the sentence it stopped in goes to the fallback", async () => {
    const { key, tenantId } = await fundedAccount(onEl);
    // The fake speaks the whole text at the close; it dies 2.6 s in, in the second sentence by its timings.
    el.midStream({ fault: "die", after: firstBytes() + 2 * 9600 });
    const c = connect(onEl.wsUrl(`/v1/tts?model=${TEST_MODEL}&voice=${FAKE_VOICE}&alignment=true&provider_order=el-echo,fixed`), bearer(key));
    c.send({ type: "text", text: TEXT });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    const record = await lastActivity(onEl, tenantId);
    expect(JSON.parse(record.parts!).map((p: { provider: string; units: number }) => [p.provider, p.units])).toEqual([
      ["el-echo", [...FIRST].length],
      ["fixed", [...REST].length],
    ]);
  });

  test("character timings go on from where the audio had got to: the last one ends with the audio, not at the switch", async () => {
    const rec = await flushThenFail("die", "alignment=true&provider_order=el-echo,el-two", onEl.key);
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(rec.events.filter((e) => e.type === "service.tts_provider_status").map((e) => `${e.provider}:${e.status}`)).toEqual(["el-echo:failed", "el-two:connecting", "el-two:connected"]);
    const ends = rec.events.filter((e) => e.type === "service.tts_alignment").flatMap((e) => e.alignment.end_times as number[]);
    const audioSeconds = totalBytes(rec.audio) / 2 / 24000;
    expect(Math.abs(ends.at(-1)! - audioSeconds)).toBeLessThan(0.3);
  });
});

describe("/el: invisible to the ElevenLabs SDK", () => {
  // /el routes a model to one provider; here that provider serves it by two bindings (20 and 10
  // credits a character), both on the OpenAI fake, so the second takes over from the first.
  let onEl: TestServer;
  beforeAll(async () => {
    const catalogue = testCatalogue(["oai-el"]);
    const [first] = catalogue.providers[0].bindings;
    catalogue.providers[0].requiresVoice = true;
    catalogue.providers[0].bindings = [
      { ...first, id: "first", price: { amount: "0.00002", per: "character" } },
      { ...first, id: "second" },
    ];
    const adapter = Object.assign(new OpenAiTts(fakeUpstreamOptions(FAKE_OPENAI_KEY, fake.url)), { id: "oai-el" });
    onEl = await startTestServer({ UPSTREAM_IDLE_TIMEOUT_MS: String(UPSTREAM_TIMEOUTS.idleTimeoutMs) }, { extra: { catalogue, providers: [adapter] } });
  });
  afterAll(() => onEl.stop(0));

  async function expectBilledInTwoParts(tenantId: string) {
    const record = await lastActivity(onEl, tenantId);
    const first = [...FIRST].length;
    const rest = [...REST].length;
    expect(record).toMatchObject({ provider: "oai-el", status: "completed", usageAmount: first + rest, credits: first * 20 + rest * 10 });
    expect(JSON.parse(record.parts!).map((p: { units: number; credits: number }) => [p.units, p.credits])).toEqual([
      [first, first * 20],
      [rest, rest * 10],
    ]);
  }

  test("textToSpeech.stream, mp3_24000_48, the connection cut: one MP3 stream that ffmpeg decodes whole, billed in parts", async () => {
    const { key, tenantId } = await fundedAccount(onEl);
    fake.midStream(faultAt("die"));
    const stream = await elevenLabsSdk(onEl, key).textToSpeech.stream("alloy", { text: TEXT, modelId: TEST_MODEL, outputFormat: "mp3_24000_48" });
    const body = new Uint8Array(await new Response(stream).arrayBuffer());
    expect(decodesWhole(body, "mp3")).toBe("");
    expect(wholeFrames(body)).toBe(true);
    const probed = await ffprobe(body, "mp3");
    expect(probed).toMatchObject({ codec: "mp3", sampleRate: 24000, channels: 1 });
    expect(probed.seconds).toBeGreaterThan((firstBytes() + 9600 + speech(REST, 24000).byteLength) / 2 / 24000 - 0.2);
    await expectBilledInTwoParts(tenantId);
  });

  test("stream-input, pcm_24000, an error answer for the next sentence: only documented frames, then isFinal and 1000, billed in parts", async () => {
    const { key, tenantId } = await fundedAccount(onEl);
    fake.midStream(faultAt("500"));
    const c = connect(onEl.wsUrl(`/el/v1/text-to-speech/alloy/stream-input?model_id=${TEST_MODEL}&output_format=pcm_24000`), { "xi-api-key": key });
    c.send({ text: " " });
    c.send({ text: TEXT });
    c.send({ text: "" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    const frames = rec.events.filter((e) => typeof e.audio === "string");
    for (const frame of frames) expect(frame).toEqual({ audio: expect.any(String), isFinal: null, normalizedAlignment: null, alignment: null });
    expect(rec.events.filter((e) => typeof e.audio !== "string")).toEqual([{ isFinal: true }]);
    const bytes = frames.reduce((n, f) => n + Buffer.from(f.audio, "base64").byteLength, 0);
    expect(bytes).toBeGreaterThan(firstBytes() + speech(REST, 24000).byteLength - 9600);
    await expectBilledInTwoParts(tenantId);
  });
});

describe("what a next provider's audio can continue", () => {
  test("PCM at another rate is resampled to the stream's; MP3 only at the same rate; MP3 after PCM or PCM after MP3 cannot", async () => {
    const pcm24 = { encoding: "pcm_s16le", sampleRate: 24000 };
    const pcm16 = { encoding: "pcm_s16le", sampleRate: 16000 };
    const mp3 = (sampleRate: number) => ({ encoding: "mp3", sampleRate });
    const resampled = continuation(pcm24, pcm16)!;
    const out = await resampled.process(new Uint8Array(16000 * 2)); // one second at 16 kHz
    expect(Math.abs(out.byteLength / 2 - 24000)).toBeLessThan(200); // about one second at 24 kHz (less the filter's delay)
    resampled.release();
    const same = new Uint8Array([0xff, 0xf3, 1, 2]);
    expect(continuation(mp3(24000), mp3(24000))!.process(same)).toBe(same);
    expect(continuation(mp3(24000), mp3(44100))).toBeUndefined();
    expect(continuation(mp3(24000), pcm24)).toBeUndefined();
    expect(continuation(pcm24, mp3(24000))).toBeUndefined();
  });
});
