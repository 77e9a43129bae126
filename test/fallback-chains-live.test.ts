import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { toFile } from "openai";
import { costOf, rateOf } from "../src/ledger/cost.ts";
import { characters } from "../src/ledger/usage.ts";
import { type FakeDeepgram, startFakeDeepgram } from "./fakes/deepgram.ts";
import { FAKE_OPENAI_KEY, startFakeOpenAi, type FakeOpenAi } from "./fakes/openai.ts";
import { deepgramAt } from "./fakes/server-env.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { ffprobe } from "./helpers/ffprobe.ts";
import { concat, frames, silence, speak, wavFile } from "./helpers/speech.ts";
import { elevenLabsSdk, openAiSdk } from "./helpers/sdk-clients.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { upgradeRequest } from "./helpers/upgrade-request.ts";
import { bearer, connect, totalBytes } from "./helpers/ws-client.ts";

// A fallback chain across models, live: the primary is OpenAI's tts-1 (its fake answers 500 to
// the request), the fallback is another model of another provider (Flite) in a voice of its own.
// Through /v1/tts, OpenAI's SDK on /oai and ElevenLabs' SDK on /el: the fallback serves before any
// audio, the record names its model and voice, and the request is billed at its price.

let fake: FakeOpenAi;
let deepgram: FakeDeepgram;
let server: TestServer;
const CHAIN = [{ model: "flite", voice: "rms" }];

beforeAll(async () => {
  fake = startFakeOpenAi();
  deepgram = startFakeDeepgram();
  server = await startTestServer({ OPENAI_API_KEY: FAKE_OPENAI_KEY, OPENAI_BASE_URL: fake.url, ...deepgramAt(deepgram) });
});
afterAll(() => stopServerAndFakes(server, fake, deepgram));

/** What `text` costs on the binding of `model`, exactly, in credits (a record is billed that, less the carry under a credit). */
function priceOf(model: string, text: string): number {
  const [binding] = server.ctx.catalogue.lookup(model, "tts");
  const { num, den } = costOf(rateOf(binding!), characters(text));
  return Number(num) / Number(den);
}

/** The tenant's paid credits, as `GET /account/balance` tells them. */
async function paidCredits(key: string): Promise<number> {
  return ((await (await fetch(`${server.url}/account/balance`, { headers: bearer(key) })).json()) as { paid_credits: number }).paid_credits;
}

/** The record of the tenant's request: the fallback served it, in its voice, at its price. */
async function expectServedByFallback(tenantId: string, text: string) {
  const record = await lastActivity(server, tenantId);
  expect(record).toMatchObject({ provider: "flite", model: "cmu/flite", voice: "rms", status: "completed", usageAmount: characters(text) });
  expect(Math.abs(record.credits - priceOf("flite", text))).toBeLessThan(1);
  expect(Math.abs(record.credits - priceOf("tts-1", text))).toBeGreaterThan(1);
  expect(JSON.parse(record.attempts ?? "[]")).toMatchObject([{ provider: "openai" }]);
}

describe("a chain across models, before the first audio", () => {
  test("/v1/tts: the primary's 500 moves to the fallback model, which speaks in its own voice; the status events name it", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const before = await paidCredits(key);
    const text = "The fallback speaks now.";
    fake.fault("500");
    const c = connect(server.wsUrl(`/v1/tts?model=tts-1&voice=alloy&fallbacks=${encodeURIComponent(JSON.stringify(CHAIN))}`), bearer(key));
    c.send({ type: "text", text });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    const statuses = rec.events.filter((e) => e.type === "service.tts_provider_status").map(({ type: _, reason: __, ...e }) => e);
    expect(statuses).toEqual([
      { provider: "openai", model: "openai/tts-1", status: "failed" },
      { provider: "flite", model: "cmu/flite", voice: "rms", status: "connecting" },
      { provider: "flite", model: "cmu/flite", voice: "rms", status: "connected" },
    ]);
    expect(rec.events.find((e) => e.type === "service.tts_audio_started")).toMatchObject({ provider: "flite", model: "cmu/flite" });
    expect(totalBytes(rec.audio)).toBeGreaterThan(16000);
    await expectServedByFallback(tenantId, text);
    // Exactly: the balance paid what the record says, the fallback's price of the text (a whole number of credits here, the account new).
    const { credits } = await lastActivity(server, tenantId);
    expect(Number.isInteger(priceOf("flite", text))).toBe(true);
    expect(credits).toBe(priceOf("flite", text));
    expect(before - (await paidCredits(key))).toBe(credits);
  });

  test("OpenAI's SDK: `fallbacks` in the speech body; the MP3 is the fallback's speech", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const input = "Spoken by the fallback model.";
    fake.fault("500");
    const res = await openAiSdk(server, key).audio.speech.create({
      model: "tts-1",
      voice: "alloy",
      input,
      response_format: "mp3",
      // @ts-expect-error `fallbacks` is the router's field: the SDK sends extra body fields as they are
      fallbacks: CHAIN,
    });
    const probed = await ffprobe(new Uint8Array(await res.arrayBuffer()), "mp3");
    expect(probed).toMatchObject({ codec: "mp3", sampleRate: 24000, channels: 1 });
    expect(probed.seconds).toBeGreaterThan(1);
    await expectServedByFallback(tenantId, input);
  });

  test("ElevenLabs' SDK: `fallbacks` as an additional body parameter of text-to-speech", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const text = "The engine behind the cloud.";
    fake.fault("500");
    const stream = await elevenLabsSdk(server, key).textToSpeech.convert("alloy", { text, modelId: "openai/tts-1", outputFormat: "mp3_44100_128" }, { additionalBodyParameters: { fallbacks: CHAIN } });
    const probed = await ffprobe(new Uint8Array(await new Response(stream).arrayBuffer()), "mp3");
    expect(probed).toMatchObject({ codec: "mp3", sampleRate: 44100 });
    expect(probed.seconds).toBeGreaterThan(1);
    await expectServedByFallback(tenantId, text);
  });
});

test("OpenAI's SDK: transcriptions with a `fallbacks` form field; the primary's 500 moves to the fallback model", async () => {
  const { key, tenantId } = await fundedAccount(server);
  fake.fault("500");
  const file = await toFile(wavFile(speak("hello world, this is a test of the fallback")), "speech.wav", { type: "audio/wav" });
  const t = await openAiSdk(server, key).audio.transcriptions.create({
    model: "whisper-1",
    file,
    // @ts-expect-error `fallbacks` is the router's field: the SDK sends extra fields in the form as they are
    fallbacks: JSON.stringify([{ model: "pocketsphinx" }]),
  });
  expect(t.text.length).toBeGreaterThan(0);
  const record = await lastActivity(server, tenantId);
  expect(record).toMatchObject({ provider: "pocketsphinx", model: "cmu/pocketsphinx-en-us", status: "completed" });
  expect(JSON.parse(record.attempts ?? "[]")).toMatchObject([{ provider: "openai" }]);
});

test("/v1/stt: the primary model's provider refusing the socket (500) moves to the fallback model, which transcribes", async () => {
  const { key, tenantId } = await fundedAccount(server);
  deepgram.fault("500");
  const c = connect(server.wsUrl(`/v1/stt?model=nova-3&audio_format=pcm_16000&fallbacks=${encodeURIComponent('[{"model":"pocketsphinx"}]')}`), bearer(key));
  await c.opened;
  for (const f of frames(concat([speak("I would like a cup of coffee."), silence(700)]))) c.ws.send(f);
  c.send({ type: "stt.session.close" });
  const rec = await c.closed;
  expect(rec.close.code).toBe(1000);
  expect(rec.events.find((e) => e.type === "stt.session.started")).toMatchObject({ provider: "pocketsphinx", model: "cmu/pocketsphinx-en-us" });
  expect(rec.events.filter((e) => e.type === "stt.transcript.final").map((e) => e.text)).toEqual(["i would like a cup of coffee"]);
  const record = await lastActivity(server, tenantId);
  expect(record).toMatchObject({ provider: "pocketsphinx", model: "cmu/pocketsphinx-en-us", status: "completed" });
  expect(JSON.parse(record.attempts ?? "[]")).toMatchObject([{ provider: "deepgram" }]);
});

describe("bad chains are refused in each surface's envelope", () => {
  test("/oai speech: a fallback voice its model has not is 400 invalid_request_error naming fallbacks[0].voice", async () => {
    const res = await fetch(`${server.url}/oai/audio/speech`, {
      method: "POST",
      headers: { ...bearer(server.key), "content-type": "application/json" },
      body: JSON.stringify({ model: "tts-1", voice: "alloy", input: "Hi", fallbacks: [{ model: "flite", voice: "nobody" }] }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { type: "invalid_request_error", param: "fallbacks[0].voice" } });
  });

  test("/oai transcriptions: a fallbacks field that is no JSON is 400 naming it", async () => {
    const form = new FormData();
    form.set("file", new Blob([new Uint8Array(64)], { type: "audio/wav" }), "a.wav");
    form.set("model", "whisper-1");
    form.set("fallbacks", "[{model");
    const res = await fetch(`${server.url}/oai/audio/transcriptions`, { method: "POST", headers: bearer(server.key), body: form });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { type: "invalid_request_error", param: "fallbacks" } });
  });

  test("/el text-to-speech: six fallbacks is 400 in ElevenLabs' detail", async () => {
    const res = await fetch(`${server.url}/el/v1/text-to-speech/alloy?output_format=pcm_24000`, {
      method: "POST",
      headers: { "xi-api-key": server.key, "content-type": "application/json" },
      body: JSON.stringify({ text: "Hi", model_id: "openai/tts-1", fallbacks: Array.from({ length: 6 }, () => ({ model: "flite" })) }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ detail: { status: "invalid_request", param: "fallbacks" } });
  });

  test("/el text-to-speech: fallbacks in the query (the stream-input form) is 400 naming it, not passed on as a provider option", async () => {
    for (const path of ["", "/stream"]) {
      const chain = encodeURIComponent(JSON.stringify(CHAIN));
      const res = await fetch(`${server.url}/el/v1/text-to-speech/rms${path}?output_format=pcm_16000&fallbacks=${chain}`, {
        method: "POST",
        headers: { "xi-api-key": server.key, "content-type": "application/json" },
        body: JSON.stringify({ text: "Hi", model_id: "flite" }),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ detail: { status: "invalid_request", param: "fallbacks" } });
    }
  });

  test("fallbacks given twice (a query parameter, a form field) is 400 naming it on every wire, not the first read and the second dropped", async () => {
    const one = encodeURIComponent('[{"model":"flite","voice":"rms"}]');
    const sttOne = encodeURIComponent('[{"model":"pocketsphinx"}]');
    const refusal = (answer: { status: number; body: Uint8Array }) => ({ status: answer.status, body: JSON.parse(new TextDecoder().decode(answer.body)) });
    expect(refusal(await upgradeRequest(server.wsUrl(`/v1/tts?model=tts-1&voice=alloy&fallbacks=${one}&fallbacks=${one}`), bearer(server.key)))).toMatchObject({
      status: 400,
      body: { error: "invalid_request", param: "fallbacks" },
    });
    expect(refusal(await upgradeRequest(server.wsUrl(`/v1/stt?model=nova-3&audio_format=pcm_16000&fallbacks=${sttOne}&fallbacks=${sttOne}`), bearer(server.key)))).toMatchObject({
      status: 400,
      body: { error: "invalid_request", param: "fallbacks" },
    });
    expect(refusal(await upgradeRequest(server.wsUrl(`/el/v1/text-to-speech/alloy/stream-input?model_id=openai/tts-1&fallbacks=${one}&fallbacks=${one}`), { "xi-api-key": server.key }))).toMatchObject(
      {
        status: 400,
        body: { detail: { status: "invalid_request", param: "fallbacks" } },
      },
    );
    const form = (model: string) => {
      const f = new FormData();
      f.set("file", new Blob([wavFile(speak("hello"))], { type: "audio/wav" }), "a.wav");
      f.set(model, "whisper-1");
      f.append("fallbacks", '[{"model":"pocketsphinx"}]');
      f.append("fallbacks", '[{"model":"pocketsphinx"}]');
      return f;
    };
    const post = async (path: string, body: FormData, headers: Record<string, string>) => {
      const res = await fetch(`${server.url}${path}`, { method: "POST", headers, body });
      return { status: res.status, body: await res.json() };
    };
    expect(await post("/oai/audio/transcriptions", form("model"), bearer(server.key))).toMatchObject({ status: 400, body: { error: { type: "invalid_request_error", param: "fallbacks" } } });
    expect(await post("/v1/stt/transcriptions", form("model"), bearer(server.key))).toMatchObject({ status: 400, body: { error: "invalid_request", param: "fallbacks" } });
    expect(await post("/el/v1/speech-to-text", form("model_id"), { "xi-api-key": server.key })).toMatchObject({ status: 400, body: { detail: { status: "invalid_request", param: "fallbacks" } } });
  });

  test("WebSockets: a bad fallbacks query is refused before the upgrade (400 naming it)", async () => {
    const tts = await upgradeRequest(server.wsUrl(`/v1/tts?model=tts-1&voice=alloy&fallbacks=${encodeURIComponent('[{"model":"svox/pico"}]')}`), bearer(server.key));
    expect(tts.status).toBe(400);
    expect(JSON.parse(new TextDecoder().decode(tts.body))).toMatchObject({ error: "voice_required", param: "fallbacks[0].voice" });
    const stt = await upgradeRequest(server.wsUrl(`/v1/stt?model=pocketsphinx&audio_format=pcm_16000&fallbacks=${encodeURIComponent('[{"model":"flite"}]')}`), bearer(server.key));
    expect(stt.status).toBe(400);
    expect(JSON.parse(new TextDecoder().decode(stt.body))).toMatchObject({ error: "model_not_found", param: "fallbacks[0].model" });
    const el = await upgradeRequest(server.wsUrl(`/el/v1/text-to-speech/alloy/stream-input?model_id=openai/tts-1&fallbacks=not-json`), { "xi-api-key": server.key });
    expect(el.status).toBe(400);
    expect(JSON.parse(new TextDecoder().decode(el.body))).toMatchObject({ detail: { param: "fallbacks" } });
  });
});
