import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CartesiaTts } from "../src/providers/cartesia/tts.ts";
import { FAKE_CARTESIA_KEY, FAKE_CARTESIA_VOICE, startFakeCartesia } from "./fakes/cartesia.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { describeHttpTtsFaults, fakeUpstreamOptions, speakOnce, startCartesiaEchoServer } from "./helpers/http-tts.ts";
import { expectSilenceUnheard, expectUpstreamErrorUnbilled, speechOggDigest, transcribeSpeechOgg } from "./helpers/speech-file.ts";
import { stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { totalBytes } from "./helpers/ws-client.ts";

// Cartesia Sonic's HTTP transport (`transport=http`: `POST /tts/bytes` per utterance) against its
// fake, through /v1/tts: the request shape on the wire, options, and every HTTP fault with and
// without a fallback; Ink-Whisper file transcription. The WebSocket transport (the default) and
// streaming STT are in provider-cartesia-realtime.test.ts.

const fake = startFakeCartesia();
let server: TestServer;
const options = fakeUpstreamOptions(FAKE_CARTESIA_KEY, fake.url);

beforeAll(async () => {
  server = await startCartesiaEchoServer(fake);
});
afterAll(() => stopServerAndFakes(server, fake));

const speak = (query: string, key?: string) => speakOnce(server, `${query}&transport=http`, "Hello from Sonic. ", key);

describe("Cartesia Sonic over HTTP through /v1/tts", () => {
  test("a session streams raw 24 kHz PCM; voice, format and generation options reach the wire", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const rec = await speak(`model=sonic-3&voice=${FAKE_CARTESIA_VOICE}&speed=1.1&provider_options[emotion]=calm&language=en`, key);
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(rec.events.find((e) => e.type === "service.tts_audio_started")).toMatchObject({ provider: "cartesia", encoding: "pcm_s16le", sample_rate: 24000 });
    expect(totalBytes(rec.audio) / 2 / 24000).toBeGreaterThan(0.7);
    expect(fake.requests.at(-1)).toEqual({
      body: {
        model_id: "sonic-3",
        transcript: "Hello from Sonic.",
        voice: { mode: "id", id: FAKE_CARTESIA_VOICE },
        output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: 24000 },
        generation_config: { speed: 1.1, emotion: "calm" },
        language: "en",
      },
      authorization: `Bearer ${FAKE_CARTESIA_KEY}`,
      version: "2026-08-14",
    });
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "cartesia", status: "completed", usageAmount: 18 });
  });

  test("format=mp3 passes Sonic's MP3 through; without transport=http too (the WebSocket is raw only)", async () => {
    const sockets = fake.ttsSockets.length;
    const rec = await speakOnce(server, `model=sonic-3&voice=${FAKE_CARTESIA_VOICE}&format=mp3`, "Hello from Sonic. ");
    expect(fake.ttsSockets.length).toBe(sockets);
    expect(rec.close.code).toBe(1000);
    expect(Buffer.concat(rec.audio)[0]).toBe(0xff);
    expect(fake.requests.at(-1)!.body.output_format).toEqual({ container: "mp3", sample_rate: 44100, bit_rate: 128000 });
  });

  test("a non-numeric volume is refused before anything is sent upstream", async () => {
    const before = fake.requests.length;
    const rec = await speak(`model=sonic-3&voice=${FAKE_CARTESIA_VOICE}&volume=loud`);
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(rec.events.at(-1)).toMatchObject({ type: "service.tts_error", message: 'cartesia option volume must be a number, not "loud"' });
    expect(fake.requests.length).toBe(before);
  });

  test("the account's voices come from GET /voices", async () => {
    expect(await new CartesiaTts(options).voices()).toEqual([{ id: FAKE_CARTESIA_VOICE, name: "Katie", languages: ["en"], gender: "female", description: "A friendly voice", category: "official" }]);
  });

  test("a list longer than a page is read page after page; the account's own voices are community", async () => {
    const own = Array.from({ length: 230 }, (_, i) => ({ id: `own-${i}`, name: `Own ${i}`, language: "de", locales: [{ locale: "de-DE" }], is_owner: true }));
    fake.voices.push(...own);
    try {
      const voices = await new CartesiaTts(options).voices();
      expect(voices.map((v) => v.id)).toEqual([FAKE_CARTESIA_VOICE, ...own.map((v) => v.id)]);
      expect(voices.at(-1)).toEqual({ id: "own-229", name: "Own 229", languages: ["de-DE"], category: "community" });
    } finally {
      fake.voices.splice(1);
    }
  });
});

describeHttpTtsFaults("Cartesia over HTTP", { server: () => server, fake, echoId: "car-echo", voice: FAKE_CARTESIA_VOICE, query: "transport=http" });

describe("Cartesia Ink-Whisper file transcription through /v1/stt/transcriptions", () => {
  const upload = (key: string) => transcribeSpeechOgg(server, key, "ink-whisper");

  test("the file, model and word timestamps are asked for; words become sentence segments; whole seconds billed", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const res = await upload(key);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      provider: "cartesia",
      model: "cartesia/ink-whisper",
      segments: [
        { text: "Thank you very much.", start_ms: 0, end_ms: 1550 },
        { text: "For your help.", start_ms: 1600, end_ms: 2750 },
      ],
      billed_seconds: 3,
    });
    expect(fake.transcriptions.at(-1)).toEqual({ fields: { model: ["ink-whisper"], "timestamp_granularities[]": ["word"], language: ["en"] }, file: await speechOggDigest() });
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "cartesia", status: "completed", usageAmount: 3 });
  });

  test("a WAV of digital silence reaches Ink-Whisper as uploaded, and nothing is heard in it", () => expectSilenceUnheard(server, "ink-whisper", "cartesia", () => fake.transcriptions.at(-1)!.file));

  test("a malformed answer is 502 upstream_error and bills nothing", () => expectUpstreamErrorUnbilled(server, "ink-whisper", () => fake.fault("malformed")));
});
