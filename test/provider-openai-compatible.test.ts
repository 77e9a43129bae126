import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FAKE_OPENAI_KEY, startFakeOpenAi, type FakeOpenAi } from "./fakes/openai.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect, totalBytes } from "./helpers/ws-client.ts";

// An operator's own OpenAI-compatible server (here: the OpenAI fake) as the `openai-compatible`
// provider, with the models and prices the operator declares.

let fake: FakeOpenAi;
let priced: TestServer;
let unpriced: TestServer;
const env = (extra: Record<string, string>) => ({
  OPENAI_COMPATIBLE_BASE_URL: fake.url,
  OPENAI_COMPATIBLE_API_KEY: FAKE_OPENAI_KEY,
  OPENAI_COMPATIBLE_TTS_MODELS: "kokoro, piper",
  OPENAI_COMPATIBLE_STT_MODELS: "whisper-large-v3",
  ...extra,
});

beforeAll(async () => {
  fake = startFakeOpenAi();
  priced = await startTestServer(env({ OPENAI_COMPATIBLE_TTS_PRICE: "0.002", OPENAI_COMPATIBLE_STT_PRICE: "0.001" }));
  unpriced = await startTestServer(env({}));
});
afterAll(async () => {
  await priced.stop(0);
  await unpriced.stop(0);
  fake.stop();
});

describe("the openai-compatible provider", () => {
  test("the catalogue lists the declared models and prices", async () => {
    const { providers } = (await (await fetch(`${priced.url}/v1/providers`)).json()) as any;
    const p = providers["openai-compatible"];
    expect(p.defaults).toEqual({ tts: { model: "kokoro" }, stt: { model: "whisper-large-v3" } });
    expect(p.tts.map((m: any) => [m.id, m.canonical, m.pricing.unitPrice])).toEqual([
      ["kokoro", "openai-compatible/kokoro", "0.002"],
      ["piper", "openai-compatible/piper", "0.002"],
    ]);
    expect(p.stt[0]).toMatchObject({ id: "whisper-large-v3", streaming: false, synchronous: true, pricing: { unit: "minute", unitPrice: "0.001" } });
  });

  test("a /v1/tts session goes to the operator's server with its model and voice", async () => {
    const c = connect(priced.wsUrl("/v1/tts?model=kokoro&voice=af_bella"), bearer(priced.key));
    c.send({ type: "text", text: "From my own server." });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.events.find((e) => e.type === "service.tts_audio_started")).toMatchObject({ provider: "openai-compatible", model: "openai-compatible/kokoro" });
    expect(totalBytes(rec.audio)).toBeGreaterThan(24000);
    expect(fake.speech.at(-1)!.body).toMatchObject({ model: "kokoro", voice: "af_bella", input: "From my own server." });
  });

  test("file transcription goes there too", async () => {
    const res = await fetch(`${priced.url}/v1/stt/transcriptions?model=whisper-large-v3`, {
      method: "POST",
      headers: { ...bearer(priced.key), "content-type": "audio/wav" },
      body: await Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer(),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ provider: "openai-compatible", model: "openai-compatible/whisper-large-v3", billed_seconds: 3 });
    expect(fake.transcriptions.at(-1)!.fields).toMatchObject({ model: "whisper-large-v3", response_format: "json" });
  });

  test("without a declared price its models answer 422 model_not_priced", async () => {
    const res = await fetch(`${unpriced.url}/v1/tts?model=kokoro&voice=af_bella`, {
      headers: { ...bearer(unpriced.key), Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error: "model_not_priced" });
  });

  test("in a fallback chain, a model without a price is refused naming it, not skipped; so is an unpriced primary whose fallback has one", async () => {
    const handshake = (query: string) =>
      fetch(`${unpriced.url}/v1/tts?${query}`, {
        headers: { ...bearer(unpriced.key), Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
      });
    const unpricedFallback = await handshake(`model=flite&voice=slt&fallbacks=${encodeURIComponent('[{"model":"kokoro","voice":"af_bella"}]')}`);
    expect(unpricedFallback.status).toBe(422);
    expect(await unpricedFallback.json()).toMatchObject({ error: "model_not_priced", param: "fallbacks[0].model" });
    const unpricedPrimary = await handshake(`model=kokoro&voice=af_bella&fallbacks=${encodeURIComponent('[{"model":"flite","voice":"slt"}]')}`);
    expect(unpricedPrimary.status).toBe(422);
    expect(await unpricedPrimary.json()).toMatchObject({ error: "model_not_priced" });
    const speech = await fetch(`${unpriced.url}/oai/audio/speech`, {
      method: "POST",
      headers: { ...bearer(unpriced.key), "content-type": "application/json" },
      body: JSON.stringify({ model: "flite", voice: "slt", input: "Hi", fallbacks: [{ model: "kokoro", voice: "af_bella" }] }),
    });
    expect(speech.status).toBe(422);
    expect(await speech.json()).toMatchObject({ error: { code: "model_not_priced", param: "fallbacks[0].model" } });
  });
});
