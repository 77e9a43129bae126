import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OpenAiTts } from "../src/providers/openai/tts.ts";
import { FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { FAKE_OPENAI_KEY, startFakeOpenAi, type FakeOpenAi, type OpenAiFault } from "./fakes/openai.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { fakeUpstreamOptions, UPSTREAM_TIMEOUTS } from "./helpers/http-tts.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { expectSilenceUnheard, speechOggDigest, transcribeSpeechOgg } from "./helpers/speech-file.ts";
import { bearer, connect, totalBytes } from "./helpers/ws-client.ts";

// The OpenAI adapter against its fake: real sessions through /v1/tts and /v1/stt/transcriptions,
// options checked on the wire, and every fault with and without a fallback.

let fake: FakeOpenAi;
let server: TestServer;
const fixed = new FixedPcmProvider("fixed", 3);

beforeAll(async () => {
  fake = startFakeOpenAi();
  const options = fakeUpstreamOptions(FAKE_OPENAI_KEY, fake.url);
  // "oai-echo" is the same adapter serving the test model, so faults can be tried with a fallback.
  const echo = Object.assign(new OpenAiTts(options), { id: "oai-echo" });
  const catalogue = testCatalogue(["oai-echo", "fixed"]);
  catalogue.providers[0].requiresVoice = true;
  server = await startTestServer(
    { OPENAI_API_KEY: FAKE_OPENAI_KEY, OPENAI_BASE_URL: fake.url, UPSTREAM_IDLE_TIMEOUT_MS: String(UPSTREAM_TIMEOUTS.idleTimeoutMs) },
    { extra: { catalogue, providers: [echo, fixed] } },
  );
});
afterAll(() => stopServerAndFakes(server, fake));

describe("OpenAI TTS through /v1/tts", () => {
  test("a session streams the fake's 24 kHz PCM; model, voice, format and native options reach the wire", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(server.wsUrl("/v1/tts?model=gpt-4o-mini-tts&voice=coral&provider_options[instructions]=Speak%20calmly&speed=1.25"), bearer(key));
    c.send({ type: "text", text: "Hello from the cloud. " });
    c.send({ type: "text", text: "A second sentence" });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(rec.events.find((e) => e.type === "service.tts_audio_started")).toMatchObject({ provider: "openai", encoding: "pcm_s16le", sample_rate: 24000 });
    expect(totalBytes(rec.audio) / 2 / 24000).toBeGreaterThan(2);
    const sent = fake.speech.slice(-2).map((r) => r.body);
    expect(sent).toEqual([
      { model: "gpt-4o-mini-tts", input: "Hello from the cloud.", voice: "coral", response_format: "pcm", instructions: "Speak calmly", speed: 1.25 },
      { model: "gpt-4o-mini-tts", input: "A second sentence", voice: "coral", response_format: "pcm", instructions: "Speak calmly", speed: 1.25 },
    ]);
    expect(fake.speech.at(-1)!.authorization).toBe(`Bearer ${FAKE_OPENAI_KEY}`);
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "openai", status: "completed", usageAmount: 39 });
  });

  test("format=mp3 passes the upstream's MP3 through", async () => {
    const c = connect(server.wsUrl("/v1/tts?model=tts-1&voice=alloy&format=mp3"), bearer(server.key));
    c.send({ type: "text", text: "MP3 please." });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(Buffer.concat(rec.audio)[0]).toBe(0xff); // an MPEG frame sync
    expect(fake.speech.at(-1)!.body.response_format).toBe("mp3");
  });
});

describe("OpenAI faults", () => {
  async function run(fault: OpenAiFault | "refuse", query: string) {
    const { key, tenantId } = await fundedAccount(server);
    if (fault === "refuse") fake.stop();
    else fake.fault(fault);
    const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}&voice=alloy&${query}`), bearer(key));
    c.send({ type: "text", text: "Twelve chars" });
    c.send({ type: "close" });
    const rec = await c.closed;
    if (fault === "refuse") fake = startFakeOpenAi(); // (a new port: only this test refuses)
    // No upstream connection outlives the session: a stalled or dropped request was cancelled.
    for (let i = 0; i < 50 && fake.openRequests() > 0; i++) await Bun.sleep(20);
    expect(fake.openRequests()).toBe(0);
    return { rec, record: await lastActivity(server, tenantId) };
  }
  const statuses = (rec: { events: Record<string, any>[] }) => rec.events.filter((e) => e.type === "service.tts_provider_status").map((e) => `${e.provider}:${e.status}`);

  for (const fault of ["401", "429", "500", "stall", "malformed"] as const) {
    test(`${fault} before any audio: the next candidate serves; billed once, at its rate`, async () => {
      const { rec, record } = await run(fault, "provider_order=oai-echo,fixed");
      expect(rec.close.code).toBe(1000);
      expect(statuses(rec)).toEqual(["oai-echo:failed", "fixed:connecting", "fixed:connected"]);
      expect(record).toMatchObject({ provider: "fixed", status: "completed", usageAmount: 12, credits: 120 });
      expect(JSON.parse(record.attempts)[0].provider).toBe("oai-echo");
    });

    test(`${fault} with allow_fallbacks=false: 1011 upstream_error, nothing billed`, async () => {
      const { rec, record } = await run(fault, "provider=oai-echo&allow_fallbacks=false");
      expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
      expect(record).toMatchObject({ status: "failed", credits: 0 });
    });
  }

  test("a connection dropped after audio started: the fallback speaks the sentence cut off, 1000, billed once at its rate", async () => {
    const { rec, record } = await run("drop", "provider_order=oai-echo,fixed");
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(rec.audio.length).toBeGreaterThan(0);
    expect(statuses(rec)).toContain("fixed:connected");
    expect(record).toMatchObject({ provider: "fixed", status: "completed", usageAmount: 12, credits: 120, parts: null });
  });

  test("a connection dropped after audio started with allow_fallbacks=false: 1011, billed only what was acknowledged", async () => {
    const { rec, record } = await run("drop", "provider=oai-echo&allow_fallbacks=false");
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(rec.audio.length).toBeGreaterThan(0);
    expect(record).toMatchObject({ provider: "oai-echo", status: "failed", credits: 0 });
  });

  test("a refused connection is skipped for the next candidate", async () => {
    const { rec, record } = await run("refuse", "provider_order=oai-echo,fixed");
    expect(rec.close.code).toBe(1000);
    expect(record.provider).toBe("fixed");
    // the server's adapters still point at the old port: re-point them for the tests after this one
    for (const p of [server.ctx.providers.get("openai"), server.ctx.providers.get("oai-echo")]) (p as any).options.baseUrl = fake.url;
  });
});

describe("OpenAI file transcription through /v1/stt/transcriptions", () => {
  test("whisper-1 gets the file and the fields; segments come back; whole seconds billed", async () => {
    (server.ctx.sttProviders.get("openai") as any).options.baseUrl = fake.url;
    const { key, tenantId } = await fundedAccount(server);
    const res = await transcribeSpeechOgg(server, key, "whisper-1");
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ provider: "openai", model: "openai/whisper-1", billed_seconds: 3 });
    expect(body.segments.length).toBe(1);
    expect(fake.transcriptions.at(-1)).toMatchObject({ fields: { model: "whisper-1", response_format: "verbose_json", language: "en" }, file: await speechOggDigest() });
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "openai", usageAmount: 3, credits: 300 });
  });

  test("a WAV of digital silence reaches the API as uploaded, and nothing is heard in it", () => expectSilenceUnheard(server, "whisper-1", "openai", () => fake.transcriptions.at(-1)!.file));

  test("a malformed upstream answer is 502 upstream_error and bills nothing", async () => {
    const { key, tenantId } = await fundedAccount(server);
    fake.fault("malformed");
    const res = await fetch(`${server.url}/v1/stt/transcriptions?model=whisper-1`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "audio/wav" },
      body: await Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer(),
    });
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ error: "upstream_error" });
    expect(await lastActivity(server, tenantId)).toMatchObject({ status: "failed", credits: 0 });
  });
});
