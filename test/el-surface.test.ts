import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ElevenLabsClient, ElevenLabsError } from "@elevenlabs/elevenlabs-js";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// The /el HTTP surface driven by the official ElevenLabs SDK, unchanged except for its base URL,
// against the local engines; and the rules the interface sets for it, over plain HTTP.

let server: TestServer;
let client: ElevenLabsClient;
beforeAll(async () => {
  server = await startTestServer();
  client = sdkFor(server.key);
});
afterAll(() => server.stop(0));

function sdkFor(apiKey: string) {
  return new ElevenLabsClient({ apiKey, baseUrl: `${server.url}/el`, maxRetries: 0 });
}
async function bytes(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: ElevenLabsError) => e,
  );
const speechWav = () => Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer();

describe("/el text to speech with the ElevenLabs SDK", () => {
  test("textToSpeech.stream: pcm_16000 from Flite, billed per character on the el surface", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const audio = await bytes(await sdkFor(key).textToSpeech.stream("slt", { text: "Hello from the router.", modelId: "flite", outputFormat: "pcm_16000" }));
    expect(audio.byteLength).toBeGreaterThan(16000);
    expect(await lastActivity(server, tenantId)).toMatchObject({ surface: "el", provider: "flite", usageUnit: "characters", usageAmount: 22, status: "completed" });
  });

  test("textToSpeech.convert: a whole MP3; pcm at another rate than the engine's is resampled", async () => {
    const mp3 = await bytes(await client.textToSpeech.convert("slt", { text: "One whole file.", modelId: "flite" }));
    expect(mp3[0] === 0xff && (mp3[1] & 0xe0) === 0xe0).toBe(true);
    const at16 = await bytes(await client.textToSpeech.convert("slt", { text: "Same length.", modelId: "flite", outputFormat: "pcm_16000" }));
    const at24 = await bytes(await client.textToSpeech.convert("slt", { text: "Same length.", modelId: "flite", outputFormat: "pcm_24000" }));
    expect(Math.abs(at24.byteLength / at16.byteLength - 1.5)).toBeLessThan(0.01);
  });

  test("voices and models lists; every model id goes back as model_id", async () => {
    const { voices } = await client.voices.getAll();
    expect(voices.some((v) => v.voiceId === "slt" && v.labels?.provider === "flite")).toBe(true);
    const models = await client.models.list();
    expect(models.map((m) => m.modelId)).toContain("flite/flite");
    const espeak = models.filter((x) => x.modelId.startsWith("espeak"));
    expect(espeak.length).toBeGreaterThan(0); // the test config enables eSpeak NG
    for (const m of espeak) {
      expect((await bytes(await client.textToSpeech.convert("en", { text: "Hi.", modelId: m.modelId, outputFormat: "pcm_16000" }))).byteLength).toBeGreaterThan(0);
    }
  });

  test("the SDK's errors carry our {detail} envelope: 401, 402, 400", async () => {
    const bad = await failure(sdkFor("vx-not-a-key").textToSpeech.stream("slt", { text: "x", modelId: "flite" }));
    expect(bad).toBeInstanceOf(ElevenLabsError);
    expect(bad).toMatchObject({ statusCode: 401, body: { detail: { status: "invalid_api_key" } } });
    const { key: poor } = await fundedAccount(server, 0);
    expect(await failure(sdkFor(poor).textToSpeech.stream("slt", { text: "x", modelId: "flite" }))).toMatchObject({ statusCode: 402, body: { detail: { status: "insufficient_balance" } } });
    expect(await failure(client.textToSpeech.stream("slt", { text: "x" }))).toMatchObject({ statusCode: 400, body: { detail: { status: "model_required" } } });
  });
});

describe("/el HTTP rules", () => {
  const tts = (path: string, body: unknown, headers: Record<string, string> = { "xi-api-key": server.key }) =>
    fetch(`${server.url}/el/v1/text-to-speech/${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

  test("Content-Type follows output_format", async () => {
    const pcm = await tts("slt/stream?output_format=pcm_22050", { text: "x", model_id: "flite" });
    expect(pcm.headers.get("content-type")).toBe("audio/L16; rate=22050");
    await pcm.arrayBuffer();
    const mp3 = await tts("slt/stream?output_format=mp3_22050_32", { text: "x", model_id: "flite" });
    expect(mp3.headers.get("content-type")).toBe("audio/mpeg");
    await mp3.arrayBuffer();
    const wav = await tts("slt/stream?output_format=wav_24000", { text: "x", model_id: "flite" });
    expect(wav.headers.get("content-type")).toBe("audio/wav");
    await wav.arrayBuffer();
    const ulaw = await tts("slt/stream?output_format=ulaw_8000", { text: "Telephone line.", model_id: "flite" });
    expect(ulaw.headers.get("content-type")).toBe("application/octet-stream");
    const pcm16 = await tts("slt/stream?output_format=pcm_16000", { text: "Telephone line.", model_id: "flite" });
    expect(Math.abs((await ulaw.arrayBuffer()).byteLength / ((await pcm16.arrayBuffer()).byteLength / 4) - 1)).toBeLessThan(0.02); // 8-bit samples at half the rate
  });

  test("text over 40,000 characters is 413 tts_text_too_large", async () => {
    const res = await tts("slt/stream", { text: "a".repeat(40_001), model_id: "flite" });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ detail: { status: "tts_text_too_large", param: "text" } });
  });

  test("Bearer works as well as xi-api-key; no key at all is the flat missing_api_key", async () => {
    const bearer = await tts("slt/stream", { text: "x", model_id: "flite" }, { authorization: `Bearer ${server.key}` });
    expect(bearer.status).toBe(200);
    await bearer.arrayBuffer();
    const none = await tts("slt/stream", { text: "x", model_id: "flite" }, {});
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: "missing_api_key" });
  });

  test("model_id: a canonical {provider}/{model} or a bare id of exactly one provider", async () => {
    const { providerOfModel } = await import("../src/surfaces/el/model.ts");
    const none = new URLSearchParams();
    expect(providerOfModel(server.ctx.catalogue, "espeak-ng/espeak-ng", "tts", none)).toBe("espeak-ng");
    expect(providerOfModel(server.ctx.catalogue, "espeak", "tts", none)).toBe("espeak-ng");
    const { Catalogue } = await import("../src/catalogue/catalogue.ts");
    const { TEST_MODEL, testCatalogue } = await import("./fakes/fixed-pcm-provider.ts");
    const two = new Catalogue(testCatalogue(["a", "b"]));
    expect(() => providerOfModel(two, TEST_MODEL, "tts", none)).toThrow("served by a, b");
    expect(providerOfModel(two, TEST_MODEL, "tts", new URLSearchParams("provider_only=b"))).toBe("b");
    const res = await tts("en/stream?output_format=pcm_16000", { text: "x", model_id: "espeak-ng/espeak-ng" });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const unknown = await tts("en/stream", { text: "x", model_id: "nobody/nothing" });
    expect(await unknown.json()).toMatchObject({ detail: { status: "model_not_found" } });
  });

  test("provider_options: body, bare query, bracket form winning; enums and booleans normalized, free text kept", async () => {
    const { planElevenLabsTts } = await import("../src/surfaces/el/tts-request.ts");
    const q = new URLSearchParams("output_format=pcm_16000&seed=7&apply_text_normalization=OFF&provider_options[seed]=9&provider_options[enable_ssml_parsing]=TRUE&custom=MixedCase");
    const plan = planElevenLabsTts(server.ctx.catalogue, "slt", q, {
      text: "x",
      model_id: "flite",
      provider_options: { seed: 1, style_hint: "KeepMe", auto_mode: "False" },
      voice_settings: { stability: 0.5 },
    });
    expect(plan.options).toMatchObject({ seed: "9", apply_text_normalization: "off", enable_ssml_parsing: "true", auto_mode: "false", custom: "MixedCase", style_hint: "KeepMe", stability: "0.5" });
    expect(() => planElevenLabsTts(server.ctx.catalogue, "slt", new URLSearchParams("auto_mode=maybe"), { text: "x", model_id: "flite" })).toThrow("auto_mode must be true or false");
  });

  test("voice_id is forwarded verbatim, ':' and '@' included", async () => {
    const { planElevenLabsTts } = await import("../src/surfaces/el/tts-request.ts");
    expect(planElevenLabsTts(server.ctx.catalogue, "en:f1@v2", new URLSearchParams(), { text: "x", model_id: "espeak" }).voice).toBe("en:f1@v2");
    for (const path of ["en:us@x", "en%3Aus%40x"]) {
      const res = await tts(`${path}/stream?output_format=pcm_16000`, { text: "x", model_id: "espeak" });
      expect(((await res.json()) as { detail: { message: string } }).detail.message).toBe('voice "en:us@x" is not a voice of espeak-ng'); // routing saw it verbatim
    }
  });

  test("unimplemented /el paths: 401, then 402, then 501 with x-should-retry: false", async () => {
    const call = (key?: string) => fetch(`${server.url}/el/v1/sound-generation`, { method: "POST", headers: key ? { "xi-api-key": key } : {}, body: "{}" });
    expect((await call()).status).toBe(401);
    const { key: poor } = await fundedAccount(server, 0);
    expect((await call(poor)).status).toBe(402);
    const res = await call(server.key);
    expect(res.status).toBe(501);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect(await res.json()).toMatchObject({ detail: { status: "not_implemented" } });
  });

  test("a disabled tenant is 403 before 501", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const { schema } = server.ctx.database;
    const { eq } = await import("drizzle-orm");
    await server.ctx.database.transaction((tx) => tx.update(schema.tenants).set({ disabled: true }).where(eq(schema.tenants.id, tenantId)));
    const res = await fetch(`${server.url}/el/v1/sound-generation`, { method: "POST", headers: { "xi-api-key": key }, body: "{}" });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ detail: { status: "tenant_disabled" } });
  });
});

describe("/el speech to text with the ElevenLabs SDK", () => {
  test("speechToText.convert with a real WAV: text, timed words, duration; billed by the second", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const file = new Blob([await speechWav()], { type: "audio/wav" });
    const res = (await sdkFor(key).speechToText.convert({ file, modelId: "pocketsphinx", languageCode: "en" })) as {
      text: string;
      words: { text: string; type: string; start?: number; end?: number }[];
      audioDurationSecs?: number;
    };
    expect(res.text).toBe("thank you very much for your help");
    expect(res.words.filter((w) => w.type === "word").map((w) => w.text)).toEqual("thank you very much for your help".split(" "));
    // Estimated times, to the millisecond: no float noise such as 0.3921428571428572.
    const times = res.words.flatMap((w) => [w.start, w.end]);
    expect(times).toHaveLength(2 * res.words.length);
    for (const t of times) expect(JSON.stringify(t)).toMatch(/^\d+(\.\d{1,3})?$/);
    expect(res.audioDurationSecs).toBe(2.745);
    expect(await lastActivity(server, tenantId)).toMatchObject({ surface: "el", provider: "pocketsphinx", usageAmount: 3 });
  });

  test("no model_id is 400 model_required; an unknown field is 400 naming it", async () => {
    const post = async (fields: Record<string, string>) => {
      const form = new FormData();
      form.set("file", new Blob([await speechWav()], { type: "audio/wav" }), "speech.wav");
      for (const [k, v] of Object.entries(fields)) form.set(k, v);
      const res = await fetch(`${server.url}/el/v1/speech-to-text`, { method: "POST", headers: { "xi-api-key": server.key }, body: form });
      return { status: res.status, body: await res.json() };
    };
    expect(await post({})).toMatchObject({ status: 400, body: { detail: { status: "model_required", param: "model_id" } } });
    expect(await post({ model_id: "pocketsphinx", colour: "blue" })).toMatchObject({ status: 400, body: { detail: { status: "invalid_request", param: "colour" } } });
  });
});

describe("/el/v1/voices with a provider that stalls", () => {
  test("the stalled provider is left out after the connect timeout; the others answer", async () => {
    const { StalledListProvider, testCatalogue } = await import("./fakes/fixed-pcm-provider.ts");
    const stalled = new StalledListProvider("stalled");
    // Long enough for an embedded engine to load its voices in a cold worker on a busy machine. The
    // voice listing's own bound is an hour: an answer that comes at all did not wait for the stalled list.
    const local = await startTestServer({ PROVIDER_CONNECT_TIMEOUT_MS: "1500", VOICE_LIST_TIMEOUT_MS: "3600000" }, { extra: { catalogue: testCatalogue(["stalled"]), providers: [stalled] } });
    try {
      const res = await fetch(`${local.url}/el/v1/voices`, { headers: { "xi-api-key": local.key } });
      expect(res.status).toBe(200);
      const { voices } = (await res.json()) as { voices: { voice_id: string; labels: { provider: string } }[] };
      expect(stalled.listsAsked).toBe(1); // asked before the answer, and never answered
      expect(voices.some((v) => v.labels.provider === "flite")).toBe(true);
      expect(voices.some((v) => v.labels.provider === "stalled")).toBe(false);
    } finally {
      await local.stop(0);
    }
  });
});
