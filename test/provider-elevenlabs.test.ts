import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ElevenLabsTts } from "../src/providers/elevenlabs/tts.ts";
import { FAKE_ELEVENLABS_KEY, FAKE_VOICE, GEORGE, startFakeElevenLabs } from "./fakes/elevenlabs.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { describeHttpTtsFaults, fakeUpstreamOptions, startElevenLabsEchoServer } from "./helpers/http-tts.ts";
import { expectSilenceUnheard, expectUpstreamErrorUnbilled, speechOggDigest, transcribeSpeechOgg } from "./helpers/speech-file.ts";
import { stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { bearer, connect, totalBytes } from "./helpers/ws-client.ts";

// The ElevenLabs TTS adapter's HTTP transport (`transport=http`) against its fake: real sessions
// through /v1/tts, options checked on the wire, and every fault with and without a fallback. The
// WebSocket transport and Scribe realtime: provider-elevenlabs-realtime.test.ts.

const fake = startFakeElevenLabs();
let server: TestServer;
const options = fakeUpstreamOptions(FAKE_ELEVENLABS_KEY, fake.url);

beforeAll(async () => {
  server = await startElevenLabsEchoServer(fake);
});
afterAll(() => stopServerAndFakes(server, fake));

describe("ElevenLabs TTS through /v1/tts, transport=http", () => {
  test("a session streams 24 kHz PCM; model, voice settings and the previous sentence reach the wire", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(
      server.wsUrl(`/v1/tts?model=eleven_flash_v2_5&voice=${FAKE_VOICE}&transport=http&provider_options[stability]=0.3&speed=1.1&use_speaker_boost=true&previous_text=Before.&language_code=en`),
      bearer(key),
    );
    c.send({ type: "text", text: "Hello from the cloud. " });
    c.send({ type: "text", text: "A second sentence" });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(rec.events.find((e) => e.type === "service.tts_audio_started")).toMatchObject({ provider: "elevenlabs", encoding: "pcm_s16le", sample_rate: 24000 });
    expect(totalBytes(rec.audio) / 2 / 24000).toBeGreaterThan(2);
    const [first, second] = fake.requests.slice(-2);
    expect(first).toEqual({
      voiceId: FAKE_VOICE,
      path: `/v1/text-to-speech/${FAKE_VOICE}/stream`,
      query: { output_format: "pcm_24000" },
      body: { model_id: "eleven_flash_v2_5", text: "Hello from the cloud.", voice_settings: { stability: 0.3, speed: 1.1, use_speaker_boost: true }, language_code: "en", previous_text: "Before." },
      apiKey: FAKE_ELEVENLABS_KEY,
    });
    expect(second!.body).toMatchObject({ text: "A second sentence", previous_text: "Hello from the cloud." });
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "elevenlabs", status: "completed", usageAmount: 39 });
  });

  test("format=mp3 passes the upstream's 44.1 kHz MP3 through", async () => {
    const c = connect(server.wsUrl(`/v1/tts?model=eleven_flash_v2_5&voice=${FAKE_VOICE}&format=mp3&transport=http`), bearer(server.key));
    c.send({ type: "text", text: "MP3 please." });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(Buffer.concat(rec.audio)[0]).toBe(0xff);
    expect(fake.requests.at(-1)!.query.output_format).toBe("mp3_44100_128");
  });

  test("a voice the account does not have is an upstream error, not a retry storm", async () => {
    const before = fake.requests.length;
    const c = connect(server.wsUrl("/v1/tts?model=eleven_flash_v2_5&voice=no-such-voice&transport=http"), bearer(server.key));
    c.send({ type: "text", text: "Hello." });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(fake.requests.length - before).toBe(1);
  });

  test("a non-numeric voice setting is refused before anything is sent upstream", async () => {
    const before = fake.requests.length;
    const c = connect(server.wsUrl(`/v1/tts?model=eleven_flash_v2_5&voice=${FAKE_VOICE}&stability=high&transport=http`), bearer(server.key));
    c.send({ type: "text", text: "Hello." });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(rec.events.at(-1)).toMatchObject({ type: "service.tts_error", code: "upstream_error", message: 'elevenlabs option stability must be a number, not "high"' });
    expect(fake.requests.length).toBe(before);
  });

  test("the account's voices come from GET /v1/voices", async () => {
    expect(await new ElevenLabsTts(options).voices()).toEqual([
      {
        id: FAKE_VOICE,
        name: "George",
        languages: ["en-GB"],
        gender: "male",
        accent: "british",
        description: GEORGE.description,
        previewUrl: GEORGE.preview_url,
        category: "official",
        labels: { age: "middle_aged", use_case: "narration", style: "warm" },
      },
    ]);
  });
});

describeHttpTtsFaults("ElevenLabs HTTP", { server: () => server, fake, echoId: "el-echo", voice: FAKE_VOICE, query: "transport=http" });

describe("ElevenLabs Scribe file transcription through /v1/stt/transcriptions", () => {
  const upload = (key: string) => transcribeSpeechOgg(server, key, "scribe_v1");

  test("the file and fields reach Scribe; its words become one segment per sentence; whole seconds billed", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const res = await upload(key);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      provider: "elevenlabs",
      model: "elevenlabs/scribe_v1",
      text: "Thank you very much. For your help.",
      segments: [
        { text: "Thank you very much.", start_ms: 0, end_ms: 1550 },
        { text: "For your help.", start_ms: 1600, end_ms: 2750 },
      ],
      billed_seconds: 3,
    });
    expect(fake.transcriptions.at(-1)).toMatchObject({
      fields: { model_id: "scribe_v1", language_code: "en", timestamps_granularity: "word" },
      file: await speechOggDigest(),
      apiKey: FAKE_ELEVENLABS_KEY,
    });
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "elevenlabs", status: "completed", usageAmount: 3 });
  });

  test("a WAV of digital silence reaches Scribe as uploaded, and nothing is heard in it", () => expectSilenceUnheard(server, "scribe_v1", "elevenlabs", () => fake.transcriptions.at(-1)!.file));

  for (const fault of ["429", "malformed"] as const) {
    test(`${fault} from Scribe is 502 upstream_error and bills nothing`, () => expectUpstreamErrorUnbilled(server, "scribe_v1", () => fake.fault(fault)));
  }
});
