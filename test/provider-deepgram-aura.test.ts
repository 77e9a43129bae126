import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DeepgramTts } from "../src/providers/deepgram/tts.ts";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram } from "./fakes/deepgram.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { describeHttpTtsFaults, speakOnce, startEchoServer, UPSTREAM_TIMEOUTS } from "./helpers/http-tts.ts";
import type { TestServer } from "./helpers/server.ts";
import { bearer, connect, totalBytes } from "./helpers/ws-client.ts";

// Deepgram Aura TTS against its fake, through /v1/tts: the streaming WebSocket by default for PCM,
// `POST /v1/speak` with `transport=http` or for MP3; the voice folded into the model name, options
// and frames on the wire, and every fault of both transports with and without a fallback.

const fake = startFakeDeepgram();
let server: TestServer;
const options = { apiKey: FAKE_DEEPGRAM_KEY, baseUrl: fake.http, ...UPSTREAM_TIMEOUTS };

beforeAll(async () => {
  // "dg-echo" is the same adapter serving the test model, so faults can meet a fallback.
  server = await startEchoServer({ DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY, DEEPGRAM_BASE_URL: fake.http }, Object.assign(new DeepgramTts(options), { id: "dg-echo" }), "aura-2");
});
afterAll(async () => {
  await server.stop(0);
  fake.stop();
});

const speak = (query: string, key?: string) => speakOnce(server, query, "Hello from Aura. ", key);

describe("Deepgram Aura over the WebSocket, through /v1/tts", () => {
  test("one-shot: Speak, Flush and Close on the wire, 24 kHz linear16 back, billed per character", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const before = fake.speak.length;
    const rec = await speak("model=aura-2&voice=thalia-en&speed=1.2", key);
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(rec.events.find((e) => e.type === "service.tts_audio_started")).toMatchObject({ provider: "deepgram", encoding: "pcm_s16le", sample_rate: 24000 });
    expect(totalBytes(rec.audio) / 2 / 24000).toBeGreaterThan(0.7);
    const socket = fake.speakSockets.at(-1)!;
    expect(Object.fromEntries(socket.query)).toEqual({ model: "aura-2-thalia-en", speed: "1.2", encoding: "linear16", sample_rate: "24000" });
    expect(socket.authorization).toBe(`Token ${FAKE_DEEPGRAM_KEY}`);
    expect(socket.texts).toEqual(['{"type":"Speak","text":"Hello from Aura. "}', '{"type":"Flush"}', '{"type":"Close"}']);
    expect(fake.speak.length).toBe(before);
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "deepgram", status: "completed", usageAmount: 17, credits: 510 });
    expect(fake.openRequests()).toBe(0);
  });

  test("flush: service.tts_flushed follows the audio of the text before it, once", async () => {
    const c = connect(server.wsUrl("/v1/tts?model=aura-2&voice=thalia-en"), bearer(server.key));
    c.send({ type: "text", text: "First part" });
    c.send({ type: "flush" });
    c.send({ type: "text", text: "and the second part." });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(fake.speakSockets.at(-1)!.texts).toEqual([
      '{"type":"Speak","text":"First part"}',
      '{"type":"Flush"}',
      '{"type":"Speak","text":"and the second part."}',
      '{"type":"Flush"}',
      '{"type":"Close"}',
    ]);
    const flushed = rec.order.indexOf("service.tts_flushed");
    expect(rec.order.filter((t) => t === "service.tts_flushed").length).toBe(1);
    expect(rec.order.slice(0, flushed)).toContain("audio");
    expect(rec.order.slice(flushed)).toContain("audio");
  });

  test("a client that leaves mid-speech: Clear goes upstream and the socket is closed", async () => {
    const c = connect(server.wsUrl("/v1/tts?model=aura-2&voice=thalia-en"), bearer(server.key));
    c.send({ type: "text", text: "A long sentence that keeps speaking for a while, long enough to be cut short." });
    c.send({ type: "flush" });
    while (c.rec.audio.length === 0) await Bun.sleep(5);
    c.ws.close();
    for (let i = 0; i < 50 && fake.openRequests() > 0; i++) await Bun.sleep(20);
    expect(fake.openRequests()).toBe(0);
    expect(fake.speakSockets.at(-1)!.texts.at(-1)).toBe('{"type":"Clear"}');
  });

  test("a transport other than websocket or http is refused before anything is sent upstream", async () => {
    const before = fake.speakSockets.length;
    const rec = await speak("model=aura-2&voice=thalia-en&transport=grpc");
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(rec.events.at(-1)).toMatchObject({ type: "service.tts_error", message: 'deepgram option transport must be websocket or http, not "grpc"' });
    expect(fake.speakSockets.length).toBe(before);
  });
});

describe("Deepgram Aura over HTTP, through /v1/tts", () => {
  test("transport=http: a session streams 24 kHz linear16; the voice is folded into the model name", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const rec = await speak("model=aura-2&voice=thalia-en&speed=1.2&transport=http", key);
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(rec.events.find((e) => e.type === "service.tts_audio_started")).toMatchObject({ provider: "deepgram", encoding: "pcm_s16le", sample_rate: 24000 });
    expect(totalBytes(rec.audio) / 2 / 24000).toBeGreaterThan(0.7);
    expect(fake.speak.at(-1)).toEqual({
      query: { model: "aura-2-thalia-en", encoding: "linear16", sample_rate: "24000", container: "none", speed: "1.2" },
      body: { text: "Hello from Aura." },
      authorization: `Token ${FAKE_DEEPGRAM_KEY}`,
    });
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "deepgram", status: "completed", usageAmount: 17, credits: 510 });
  });

  test("tokens written in one turn of the event loop go out as one Speak, ahead of the Flush", async () => {
    const stream = await new DeepgramTts(options).open({ model: "aura-2", voice: "thalia-en", format: "pcm", options: {} });
    for (const token of ["You ", "said: ", "thank ", "you."]) stream.write(token);
    stream.end();
    for await (const _ of stream);
    expect(fake.speakSockets.at(-1)!.texts.slice(0, 2)).toEqual([JSON.stringify({ type: "Speak", text: "You said: thank you." }), '{"type":"Flush"}']);
  });

  test("a caller that delivers 16 kHz gets Aura's 16 kHz, over either transport; a rate Aura lacks stays 24 kHz", async () => {
    const tts = new DeepgramTts(options);
    for (const transport of ["websocket", "http"]) {
      for (const [asked, made] of [
        [16000, 16000],
        [22050, 24000],
      ]) {
        const stream = await tts.open({ model: "aura-2", voice: "thalia-en", format: "pcm", sampleRate: asked, options: { transport } });
        expect(stream.audioFormat.sampleRate).toBe(made!);
        stream.write("Hello from Aura.");
        stream.end();
        let bytes = 0;
        for await (const ev of stream) if (ev.type === "audio") bytes += ev.audio.byteLength;
        const query = transport === "http" ? new URLSearchParams(fake.speak.at(-1)!.query) : fake.speakSockets.at(-1)!.query;
        expect(query.get("sample_rate")).toBe(String(made));
        // About a second of speech at the rate made (Flite's "Hello from Aura.").
        expect(bytes / 2 / made!).toBeGreaterThan(0.6);
        expect(bytes / 2 / made!).toBeLessThan(2);
      }
    }
  });

  test("format=mp3 goes over HTTP (the WebSocket has no MP3) and passes Aura's MP3 through", async () => {
    const rec = await speak("model=aura-2&voice=thalia-en&format=mp3");
    expect(rec.close.code).toBe(1000);
    expect(Buffer.concat(rec.audio)[0]).toBe(0xff);
    expect(fake.speak.at(-1)!.query.encoding).toBe("mp3");
  });

  test("a non-numeric speed is refused before anything is sent upstream", async () => {
    const before = fake.speak.length + fake.speakSockets.length;
    for (const transport of ["", "&transport=http"]) {
      const rec = await speak(`model=aura-2&voice=thalia-en&speed=fast${transport}`);
      expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
      expect(rec.events.at(-1)).toMatchObject({ type: "service.tts_error", message: 'deepgram option speed must be a number, not "fast"' });
    }
    expect(fake.speak.length + fake.speakSockets.length).toBe(before);
  });

  test("voices are the Aura-2 models of GET /v1/models", async () => {
    expect(await new DeepgramTts(options).voices()).toEqual([
      {
        id: "thalia-en",
        name: "thalia",
        languages: ["en", "en-US"],
        gender: "female",
        accent: "American",
        previewUrl: "https://static.deepgram.com/examples/Aura-2-thalia.wav",
        labels: { age: "Adult", use_case: "casual chat" },
      },
    ]);
  });
});

describeHttpTtsFaults("Deepgram Aura WebSocket", { server: () => server, fake, echoId: "dg-echo", voice: "thalia-en" });
describeHttpTtsFaults("Deepgram Aura HTTP", { server: () => server, fake, echoId: "dg-echo", voice: "thalia-en", query: "transport=http" });
