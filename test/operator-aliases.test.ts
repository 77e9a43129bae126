import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import { loadConfig } from "../src/config.ts";
import { planTts } from "../src/planning/plan-tts.ts";
import { planVoice } from "../src/planning/plan-voice.ts";
import { NO_PREFERENCES } from "../src/routing/preferences.ts";
import { voiceOf } from "../src/routing/candidate.ts";
import { BrokenProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { FAKE_OPENAI_KEY, type FakeOpenAi, startFakeOpenAi } from "./fakes/openai.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { ffprobe } from "./helpers/ffprobe.ts";
import { elevenLabsSdk } from "./helpers/sdk-clients.ts";
import { startRefusal, startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { tempDir } from "./helpers/temp-dirs.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// The operator's aliases (docs/catalogue.md#operator-aliases): OpenAI's and ElevenLabs' quick-start
// names served by the embedded engines, unchanged code against a deployment configured so; and
// never an alias the operator did not set.

const ALIASES = {
  MODEL_ALIASES: "tts-1=cmu/flite,whisper-1=cmu/pocketsphinx-en-us,eleven_multilingual_v2=cmu/flite",
  VOICE_ALIASES: "cmu/flite:alloy=slt,cmu/flite:JBFqnCBsd6RMkjVDRZzb=awb",
};

let aliased: TestServer;
let plain: TestServer;
beforeAll(async () => {
  [aliased, plain] = await Promise.all([startTestServer(ALIASES), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([aliased.stop(0), plain.stop(0)]);
});

const speechWav = () => Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer();
const openAi = (server: TestServer, apiKey: string) => new OpenAI({ apiKey, baseURL: `${server.url}/oai`, maxRetries: 0 });

describe("OpenAI's quick-start, unchanged, on the embedded engines", () => {
  test("speech.create({model: 'tts-1', voice: 'alloy'}) is Flite's slt as MP3; the record names cmu/flite and slt", async () => {
    const { key, tenantId } = await fundedAccount(aliased);
    const client = new OpenAI({ apiKey: key, baseURL: `${aliased.url}/oai` });
    const response = await client.audio.speech.create({ model: "tts-1", voice: "alloy", input: "Today is a wonderful day to build something people love!" });
    const audio = new Uint8Array(await response.arrayBuffer());
    const probed = await ffprobe(audio, "mp3");
    expect(probed).toMatchObject({ codec: "mp3", channels: 1 });
    expect(probed.seconds).toBeGreaterThan(2);
    expect(await lastActivity(aliased, tenantId)).toMatchObject({ surface: "oai", provider: "flite", model: "cmu/flite", voice: "slt", status: "completed" });
  });

  test("transcriptions.create({model: 'whisper-1', file}) transcribes real speech with PocketSphinx; the record names it", async () => {
    const { key, tenantId } = await fundedAccount(aliased);
    const client = new OpenAI({ apiKey: key, baseURL: `${aliased.url}/oai` });
    const transcription = await client.audio.transcriptions.create({ file: await toFile(await speechWav(), "speech.wav", { type: "audio/wav" }), model: "whisper-1" });
    expect(transcription.text).toBe("thank you very much for your help");
    expect(await lastActivity(aliased, tenantId)).toMatchObject({ provider: "pocketsphinx", model: "cmu/pocketsphinx-en-us" });
  });

  test("the same code on a deployment without aliases is 400 model_not_found: no alias the operator did not set", async () => {
    const { key } = await fundedAccount(plain);
    const speech = await openAi(plain, key)
      .audio.speech.create({ model: "tts-1", voice: "alloy", input: "x" })
      .catch((e) => e);
    expect(speech).toBeInstanceOf(OpenAI.BadRequestError);
    expect(speech).toMatchObject({ status: 400, code: "model_not_found" });
    const stt = await openAi(plain, key)
      .audio.transcriptions.create({ file: await toFile(await speechWav(), "speech.wav"), model: "whisper-1" })
      .catch((e) => e);
    expect(stt).toMatchObject({ status: 400, code: "model_not_found" });
    // An alias is the model's and the voice's: another engine does not know "alloy", nor flite a voice never aliased.
    const other = await openAi(aliased, aliased.key)
      .audio.speech.create({ model: "espeak", voice: "alloy", input: "x" })
      .catch((e) => e);
    expect(other).toMatchObject({ status: 400, param: "voice" });
    const echo = await openAi(aliased, aliased.key)
      .audio.speech.create({ model: "tts-1", voice: "echo", input: "x" })
      .catch((e) => e);
    expect(echo).toMatchObject({ status: 400, param: "voice" });
  });
});

describe("ElevenLabs' quick-start with an aliased model and voice", () => {
  test("textToSpeech.convert(voiceId, {modelId: 'eleven_multilingual_v2'}) speaks Flite's awb; the record names it", async () => {
    const { key, tenantId } = await fundedAccount(aliased);
    const stream = await elevenLabsSdk(aliased, key).textToSpeech.convert("JBFqnCBsd6RMkjVDRZzb", {
      text: "The first move is what sets everything in motion.",
      modelId: "eleven_multilingual_v2",
      outputFormat: "mp3_44100_128",
    });
    const audio = new Uint8Array(await new Response(stream as ReadableStream).arrayBuffer());
    const probed = await ffprobe(audio, "mp3");
    expect(probed).toMatchObject({ codec: "mp3", sampleRate: 44100 });
    expect(probed.seconds).toBeGreaterThan(1.5);
    expect(await lastActivity(aliased, tenantId)).toMatchObject({ surface: "el", model: "cmu/flite", voice: "awb" });
  });
});

describe("aliases in the catalogues", () => {
  test("/v1/models, /oai/models and /el/v1/models list each alias as an alias of its model", async () => {
    const models = (await (await fetch(`${aliased.url}/v1/models`)).json()) as Record<string, unknown>;
    expect(models.model_aliases).toEqual([
      { id: "tts-1", alias_of: "cmu/flite", capability: "tts", models: ["cmu/flite"] },
      { id: "whisper-1", alias_of: "cmu/pocketsphinx-en-us", capability: "stt", models: ["cmu/pocketsphinx-en-us"] },
      { id: "eleven_multilingual_v2", alias_of: "cmu/flite", capability: "tts", models: ["cmu/flite"] },
    ]);
    expect(models.voice_aliases).toEqual([
      { model: "cmu/flite", id: "alloy", alias_of: "slt" },
      { model: "cmu/flite", id: "JBFqnCBsd6RMkjVDRZzb", alias_of: "awb" },
    ]);
    const none = (await (await fetch(`${plain.url}/v1/models`)).json()) as Record<string, unknown>;
    expect(none).toMatchObject({ model_aliases: [], voice_aliases: [] });

    const oai = await openAi(aliased, aliased.key).models.list();
    expect(oai.data.find((m) => m.id === "whisper-1")).toMatchObject({ object: "model", owned_by: "pocketsphinx", alias_of: "cmu/pocketsphinx-en-us" });
    expect(await openAi(aliased, aliased.key).models.retrieve("tts-1")).toMatchObject({ owned_by: "flite", alias_of: "cmu/flite" });
    expect(oai.data.filter((m) => "alias_of" in m).length).toBe(3);
    expect((await openAi(plain, plain.key).models.list()).data.some((m) => "alias_of" in m)).toBe(false);

    const el = await elevenLabsSdk(aliased).models.list();
    expect(el.find((m) => m.modelId === "eleven_multilingual_v2")).toMatchObject({ name: "eleven_multilingual_v2 (alias of cmu/flite)", canDoTextToSpeech: true });
    expect(el.some((m) => m.modelId === "whisper-1")).toBe(false); // no TTS model
  });
});

describe("an alias inside a fallback chain", () => {
  test("fallbacks[i].model and .voice may be aliases: the candidate speaks the real voice", async () => {
    const request = { model: "espeak", voice: "en", format: "pcm" as const, options: {}, preferences: NO_PREFERENCES };
    const plan = planTts(aliased.ctx.catalogue, { ...request, fallbacks: [{ model: "tts-1", voice: "alloy" }] });
    const voiced = await planVoice(plan, aliased.tenantId, aliased.ctx);
    const fallback = voiced.candidates.find((c) => c.fallback === 0);
    expect(fallback).toMatchObject({ canonical: "cmu/flite", voice: "alloy" });
    expect(voiceOf(fallback!, voiced.voice)).toBe("slt");
    const refused = await planVoice(planTts(aliased.ctx.catalogue, { ...request, fallbacks: [{ model: "tts-1", voice: "echo" }] }), aliased.tenantId, aliased.ctx).catch((e) => e);
    expect(refused).toMatchObject({ code: "invalid_request", extra: { param: "fallbacks[0].voice" } });
  });
});

describe("with a cloud provider (OpenAI's fake)", () => {
  let fake: FakeOpenAi;
  let cloud: TestServer;
  beforeAll(async () => {
    fake = startFakeOpenAi();
    cloud = await startTestServer({
      OPENAI_API_KEY: FAKE_OPENAI_KEY,
      OPENAI_BASE_URL: fake.url,
      MODEL_ALIASES: "speaker=cmu/flite",
      VOICE_ALIASES: "openai/tts-1:narrator=alloy,speaker:narrator=rms",
    });
  });
  afterAll(() => stopServerAndFakes(cloud, fake));

  test("the provider is asked for the voice the alias stands for; the record names it", async () => {
    const { key, tenantId } = await fundedAccount(cloud);
    const speech = await openAi(cloud, key).audio.speech.create({ model: "tts-1", voice: "narrator", input: "Narrated.", response_format: "mp3" });
    expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(0);
    expect(fake.speech.at(-1)?.body).toMatchObject({ voice: "alloy" });
    expect(await lastActivity(cloud, tenantId)).toMatchObject({ provider: "openai", model: "openai/tts-1", voice: "alloy" });
  });

  test("a chain whose fallback is an alias, in a voice alias of its own: the primary's 500 moves to it, served and recorded as Flite's rms", async () => {
    const { key, tenantId } = await fundedAccount(cloud);
    fake.fault("500");
    const speech = await openAi(cloud, key).audio.speech.create({
      model: "tts-1",
      voice: "narrator",
      input: "The fallback narrates.",
      response_format: "mp3",
      // @ts-expect-error `fallbacks` is the router's field: the SDK sends extra body fields as they are
      fallbacks: [{ model: "speaker", voice: "narrator" }],
    });
    expect((await ffprobe(new Uint8Array(await speech.arrayBuffer()), "mp3")).seconds).toBeGreaterThan(1);
    expect(await lastActivity(cloud, tenantId)).toMatchObject({ provider: "flite", model: "cmu/flite", voice: "rms", status: "completed" });
  });

  test("an alias may not hide a name the configured provider serves: tts-1 with OpenAI configured stops the start", async () => {
    expect(await startRefusal({ OPENAI_API_KEY: FAKE_OPENAI_KEY, OPENAI_BASE_URL: fake.url, MODEL_ALIASES: "tts-1=cmu/flite" })).toBe(
      "config: MODEL_ALIASES: tts-1=cmu/flite: tts-1 is already the name of a served model (openai/tts-1); an alias may not hide it: choose another alias or remove it",
    );
  });
});

test("a session no provider ever opened still records the voice its alias stands for", async () => {
  const broken = await startTestServer({ VOICE_ALIASES: `${TEST_MODEL}:host=real-voice` }, { extra: { catalogue: testCatalogue(["broken"]), providers: [new BrokenProvider("broken", "refuse")] } });
  try {
    const { key, tenantId } = await fundedAccount(broken);
    const c = connect(broken.wsUrl(`/v1/tts?model=${TEST_MODEL}&provider=broken&voice=host`), bearer(key));
    c.send({ type: "text", text: "Never spoken." });
    c.send({ type: "close" });
    await c.closed;
    expect(await lastActivity(broken, tenantId)).toMatchObject({ provider: "broken", voice: "real-voice", status: "failed" });
  } finally {
    await broken.stop(0);
  }
});

describe("start-up refuses aliases it cannot serve, saying which and why", () => {
  const refusal = startRefusal;

  test("malformed entries are config errors naming the setting and the entry", () => {
    expect(() => loadConfig({ MODEL_ALIASES: "tts-1" })).toThrow('config: MODEL_ALIASES: "tts-1" is not alias=model');
    expect(() => loadConfig({ MODEL_ALIASES: "tts-1=" })).toThrow('config: MODEL_ALIASES: "tts-1=" needs a model after =');
    expect(() => loadConfig({ MODEL_ALIASES: "a b=cmu/flite" })).toThrow("needs an alias before =");
    expect(() => loadConfig({ VOICE_ALIASES: "alloy=slt" })).toThrow('config: VOICE_ALIASES: "alloy=slt" is not model:alias=voice');
    expect(() => loadConfig({ VOICE_ALIASES: "cmu/flite:=slt" })).toThrow("needs an alias between : and =");
    expect(() => loadConfig({ MODEL_ALIASES: "tts-1=cmu/flite,tts-1=espeak" })).toThrow("config: model alias tts-1 stands for cmu/flite (MODEL_ALIASES) and for espeak (MODEL_ALIASES): keep one");
  });

  test("ALIASES_FILE: the same content as JSON, merged with the variables; a bad file is a config error", async () => {
    const dir = tempDir("voxroute-aliases-");
    const file = join(dir, "aliases.json");
    writeFileSync(file, JSON.stringify({ models: { "tts-1-hd": "cmu/flite" }, voices: { "cmu/flite": { nova: "slt" } } }));
    const config = loadConfig({ ALIASES_FILE: file, MODEL_ALIASES: "tts-1=cmu/flite" });
    expect(config.aliases.models.map((a) => `${a.alias}=${a.target}`)).toEqual(["tts-1=cmu/flite", "tts-1-hd=cmu/flite"]);
    expect(config.aliases.voices).toEqual([{ model: "cmu/flite", alias: "nova", voice: "slt", source: `ALIASES_FILE ${file}` }]);
    expect(() => loadConfig({ ALIASES_FILE: file, MODEL_ALIASES: "tts-1-hd=espeak" })).toThrow(`model alias tts-1-hd stands for espeak (MODEL_ALIASES) and for cmu/flite (ALIASES_FILE ${file})`);
    writeFileSync(file, JSON.stringify({ model: {} }));
    expect(() => loadConfig({ ALIASES_FILE: file })).toThrow(`config: ALIASES_FILE ${file}: "model" is not a known member (models, voices)`);
    writeFileSync(file, "{");
    expect(() => loadConfig({ ALIASES_FILE: file })).toThrow(`config: ALIASES_FILE ${file} is not JSON`);
    expect(() => loadConfig({ ALIASES_FILE: join(dir, "none.json") })).toThrow("cannot be read");
  });

  test("an alias of no served model, of another alias, or hiding a served name; a voice alias of no voice or hiding one", async () => {
    expect(await refusal({ MODEL_ALIASES: "tts-1=openai/tts-1" })).toBe("config: MODEL_ALIASES: tts-1=openai/tts-1: openai/tts-1 is not a served model (GET /v1/models lists them)");
    expect(await refusal({ MODEL_ALIASES: "a=cmu/flite,b=a" })).toBe("config: MODEL_ALIASES: b=a: a is another alias; an alias names a served model itself");
    expect(await refusal({ MODEL_ALIASES: "espeak=cmu/flite" })).toContain("config: MODEL_ALIASES: espeak=cmu/flite: espeak is already the name of a served model (");
    expect(await refusal({ VOICE_ALIASES: "openai/tts-1:alloy=nova" })).toContain("openai/tts-1 is not a served model");
    expect(await refusal({ VOICE_ALIASES: "cmu/flite:alloy=nova" })).toStartWith("config: voice alias cmu/flite:alloy=nova: nova is not a voice of flite (its voices: ");
    expect(await refusal({ VOICE_ALIASES: "cmu/flite:slt=awb" })).toBe("config: voice alias cmu/flite:slt=awb: slt is already a voice of flite; an alias may not hide it");
    expect(await refusal({ VOICE_ALIASES: "flite-1:alloy=slt,cmu/flite:alloy=awb" })).toBe("config: VOICE_ALIASES: voice alias alloy of cmu/flite stands for both slt and awb: keep one");
  });
});
