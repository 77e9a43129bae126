import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { toFile } from "openai";
import { pcmOfWav } from "../src/audio/wav.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { answerCountingOpenAiSdk, openAiSdk, startServerWithOpenAiSdk } from "./helpers/sdk-clients.ts";
import type { TestServer } from "./helpers/server.ts";

// The /oai surface driven by the official OpenAI SDK, unchanged except for its base URL, against
// the local engines: speech (streamed), transcriptions (a real WAV), and the SDK's error classes.

let server: TestServer;
let client: OpenAI;
beforeAll(async () => void ({ server, client } = await startServerWithOpenAiSdk()));
afterAll(() => server.stop(0));

const speechWav = () => Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer();
const sdkFor = (apiKey: string) => openAiSdk(server, apiKey);

describe("/oai/audio/speech with the OpenAI SDK", () => {
  test("pcm streams as produced, with its rate in the Content-Type; billed per character on the oai surface", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const res = await sdkFor(key).audio.speech.create({ model: "flite", voice: "slt", input: "Hello from the router.", response_format: "pcm" });
    expect(res.headers.get("content-type")).toBe("audio/L16; rate=24000; channels=1"); // OpenAI's rate, resampled from Flite's 16 kHz
    let chunks = 0;
    let bytes = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      chunks++;
      bytes += chunk.byteLength;
    }
    expect(chunks).toBeGreaterThan(0);
    expect(bytes).toBeGreaterThan(24000); // more than half a second of 24 kHz speech
    expect(await lastActivity(server, tenantId)).toMatchObject({ surface: "oai", provider: "flite", usageUnit: "characters", usageAmount: 22, status: "completed" });
  });

  test("mp3 is audio/mpeg; wav is a streaming WAV header then the PCM", async () => {
    const mp3 = await client.audio.speech.create({ model: "flite", voice: "slt", input: "One.", response_format: "mp3" });
    expect(mp3.headers.get("content-type")).toBe("audio/mpeg");
    const frame = new Uint8Array(await mp3.arrayBuffer());
    expect(frame[0] === 0xff && (frame[1] & 0xe0) === 0xe0).toBe(true);

    const wav = await client.audio.speech.create({ model: "flite", voice: "slt", input: "Two.", response_format: "wav" });
    expect(wav.headers.get("content-type")).toBe("audio/wav");
    const bytes = new Uint8Array(await wav.arrayBuffer());
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe("RIFF");
    expect(new DataView(bytes.buffer).getUint32(24, true)).toBe(24000);
    expect(pcmOfWav(bytes).byteLength).toBe(bytes.byteLength - 44);
  });

  test("provider preferences in the body route the request", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const res = await sdkFor(key).audio.speech.create({ model: "espeak", voice: "en", input: "Routed.", response_format: "pcm", provider: { only: ["espeak-ng"] } } as never);
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "espeak-ng" });
  });

  test("the SDK's error classes get our OpenAI error objects: 401, 429 insufficient_quota, 400", async () => {
    const bad = await sdkFor("vx-not-a-key")
      .audio.speech.create({ model: "flite", voice: "slt", input: "x" })
      .catch((e) => e);
    expect(bad).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(bad).toMatchObject({ status: 401, code: "invalid_api_key", type: "authentication_error" });

    const { key: poor } = await fundedAccount(server, 0);
    const broke = await sdkFor(poor)
      .audio.speech.create({ model: "flite", voice: "slt", input: "x" })
      .catch((e) => e);
    expect(broke).toBeInstanceOf(OpenAI.RateLimitError);
    expect(broke).toMatchObject({ status: 429, code: "insufficient_quota", type: "insufficient_quota" });

    const noModel = await client.audio.speech.create({ voice: "slt", input: "x" } as never).catch((e) => e);
    expect(noModel).toBeInstanceOf(OpenAI.BadRequestError);
    expect(noModel).toMatchObject({ status: 400, code: "missing_required_parameter", param: "model", type: "invalid_request_error" });

    const noVoice = await client.audio.speech.create({ model: "svox-pico", input: "x" } as never).catch((e) => e);
    expect(noVoice).toMatchObject({ status: 400, code: "missing_required_parameter", param: "voice" });
  });

  test("an empty balance is 429 insufficient_quota that the SDK does not retry (x-should-retry: false), on speech and transcriptions", async () => {
    const { key: poor } = await fundedAccount(server, 0);
    const { sdk: counting, seen } = answerCountingOpenAiSdk(server, poor);
    const speech = await counting.audio.speech.create({ model: "flite", voice: "slt", input: "x" }).catch((e) => e);
    expect(speech).toBeInstanceOf(OpenAI.RateLimitError);
    expect(seen.length).toBe(1);
    expect(seen[0]!.headers.get("x-should-retry")).toBe("false");
    const file = await toFile(await speechWav(), "speech.wav");
    const stt = await counting.audio.transcriptions.create({ model: "pocketsphinx", file }).catch((e) => e);
    expect(stt).toBeInstanceOf(OpenAI.RateLimitError);
    expect(stt).toMatchObject({ status: 429, code: "insufficient_quota", type: "insufficient_quota" });
    expect(seen.length).toBe(2);
  });

  test("a client that stops reading after the first audio pays for the sentences the provider was given", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const sentence = "This is a long sentence for the router to speak. ";
    const input = sentence.repeat(8).trim();
    const res = await fetch(`${server.url}/oai/audio/speech`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "flite", voice: "slt", input, response_format: "pcm" }),
    });
    const reader = res.body!.getReader();
    expect((await reader.read()).value!.byteLength).toBeGreaterThan(0);
    await reader.cancel();
    const record = await lastActivity(server, tenantId);
    expect(record).toMatchObject({ surface: "oai", status: "failed" });
    // The engine is handed one sentence at a time: whole sentences from the first (heard) on, all of
    // them only if the engine got that far before the client left (test/backpressure.test.ts bounds it).
    expect(record.usageAmount).toBeGreaterThanOrEqual(sentence.length);
    expect(record.usageAmount % sentence.length === 0 || record.usageAmount === input.length).toBe(true);
  });

  test("a client that goes away before the first byte: the session ends, nothing billed, nothing left open", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const controller = new AbortController();
    const request = fetch(`${server.url}/oai/audio/speech`, {
      method: "POST",
      signal: controller.signal,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "flite", voice: "slt", input: "Gone before it starts. ".repeat(20) }),
    });
    // Gone once its session exists (a fixed pause let a busy machine abort before the request was even read).
    for (let i = 0; i < 2000 && server.ctx.sessions.size === 0; i++) await Bun.sleep(1);
    controller.abort();
    await request.catch(() => {});
    expect(await lastActivity(server, tenantId)).toMatchObject({ surface: "oai", status: "failed", usageAmount: 0 });
    for (let i = 0; i < 100 && server.ctx.sessions.size > 0; i++) await Bun.sleep(10);
    expect(server.ctx.sessions.size).toBe(0);
  });

  test("bad bodies: unknown format, bad speed, too long, not JSON", async () => {
    const post = (body: string) => fetch(`${server.url}/oai/audio/speech`, { method: "POST", headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, body });
    const ogg = await post(JSON.stringify({ model: "flite", input: "x", response_format: "ogg" }));
    expect(ogg.status).toBe(400);
    expect(await ogg.json()).toMatchObject({ error: { code: "invalid_request", param: "response_format" } });
    expect(await (await post(JSON.stringify({ model: "flite", input: "x", speed: 9 }))).json()).toMatchObject({ error: { param: "speed" } });
    const long = await post(JSON.stringify({ model: "flite", input: "a".repeat(4097) }));
    expect(long.status).toBe(413);
    expect(await long.json()).toMatchObject({ error: { code: "tts_text_too_large" } });
    const notJson = await post("{");
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ error: { code: "invalid_request", type: "invalid_request_error" } });
  });
});

describe("/oai/audio/transcriptions with the OpenAI SDK", () => {
  test("a real WAV: json, then text, verbose_json, srt and vtt; billed by the second", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const sdk = sdkFor(key);
    const file = async () => toFile(await speechWav(), "speech.wav", { type: "audio/wav" });
    const json = await sdk.audio.transcriptions.create({ file: await file(), model: "pocketsphinx" });
    expect(json.text).toBe("thank you very much for your help");
    expect(await lastActivity(server, tenantId)).toMatchObject({ surface: "oai", provider: "pocketsphinx", usageUnit: "seconds", usageAmount: 3 });

    expect(await sdk.audio.transcriptions.create({ file: await file(), model: "pocketsphinx", response_format: "text" })).toBe("thank you very much for your help" as never);
    const verbose = await sdk.audio.transcriptions.create({ file: await file(), model: "pocketsphinx", response_format: "verbose_json", timestamp_granularities: ["segment"] });
    expect(verbose).toMatchObject({ task: "transcribe", duration: 2.745, text: "thank you very much for your help", segments: [{ id: 0, text: "thank you very much for your help" }] });
    const srt = (await sdk.audio.transcriptions.create({ file: await file(), model: "pocketsphinx", response_format: "srt" })) as unknown as string;
    expect(srt).toMatch(/^1\n00:00:\d\d,\d{3} --> 00:00:\d\d,\d{3}\nthank you very much for your help\n$/);
    const vtt = (await sdk.audio.transcriptions.create({ file: await file(), model: "pocketsphinx", response_format: "vtt" })) as unknown as string;
    expect(vtt).toMatch(/^WEBVTT\n\n00:00:\d\d\.\d{3} --> 00:00:\d\d\.\d{3}\nthank you very much for your help\n$/);
  }, 30_000); // five recognitions

  test("errors: no model, unknown response_format, unknown field, not multipart", async () => {
    const file = await toFile(await speechWav(), "speech.wav", { type: "audio/wav" });
    expect(await client.audio.transcriptions.create({ file } as never).catch((e) => e)).toMatchObject({ status: 400, code: "missing_required_parameter", param: "model" });
    const form = new FormData();
    form.set("file", new Blob([await speechWav()], { type: "audio/wav" }), "speech.wav");
    form.set("model", "pocketsphinx");
    form.set("response_format", "xml");
    const post = (body: FormData | string) => fetch(`${server.url}/oai/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${server.key}` }, body });
    expect(await (await post(form)).json()).toMatchObject({ error: { code: "invalid_request", param: "response_format" } });
    form.set("response_format", "json");
    form.set("colour", "blue");
    expect(await (await post(form)).json()).toMatchObject({ error: { code: "invalid_request", param: "colour" } });
    expect((await post("not multipart")).status).toBe(400);
  });
});

describe("unimplemented /oai paths", () => {
  const call = (key?: string) => fetch(`${server.url}/oai/chat/completions`, { method: "POST", headers: key ? { authorization: `Bearer ${key}` } : {}, body: "{}" });

  test("401 and the empty balance's 429 come before 501; 501 says not to retry", async () => {
    expect(await (await call()).json()).toMatchObject({ error: { code: "missing_api_key" } });
    expect((await call("vx-not-a-key")).status).toBe(401);
    const { key: poor } = await fundedAccount(server, 0);
    expect((await call(poor)).status).toBe(429);
    const res = await call(server.key);
    expect(res.status).toBe(501);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect(await res.json()).toMatchObject({ error: { code: "not_implemented", type: "not_implemented_error" } });
  });

  test("a disabled tenant is 403 before 501", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const { schema } = server.ctx.database;
    const { eq } = await import("drizzle-orm");
    await server.ctx.database.transaction((tx) => tx.update(schema.tenants).set({ disabled: true }).where(eq(schema.tenants.id, tenantId)));
    const res = await call(key);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { code: "tenant_disabled", type: "permission_error" } });
  });
});
