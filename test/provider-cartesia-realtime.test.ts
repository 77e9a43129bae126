import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TEST_MODEL } from "./fakes/fixed-pcm-provider.ts";
import { FAKE_CARTESIA_KEY, FAKE_CARTESIA_VOICE, startFakeCartesia } from "./fakes/cartesia.ts";
import { speech } from "./fakes/http-fake.ts";
import { digestOf } from "./fakes/received-audio.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { describeHttpTtsFaults, speakOnce, startCartesiaEchoServer } from "./helpers/http-tts.ts";
import { stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { describeSttFaults } from "./helpers/stt-faults.ts";
import { concat, frames, silence, speak } from "./helpers/speech.ts";
import { bearer, connect, totalBytes } from "./helpers/ws-client.ts";

// Cartesia's realtime APIs against the fake, through our server: Sonic over `/tts/websocket` (the
// default TTS transport) via /v1/tts, and Ink-Whisper over `/stt/websocket` via /v1/stt, with
// the router VAD deciding turns. Frames and options are checked on what the fake received.

const fake = startFakeCartesia();
let server: TestServer;

beforeAll(async () => {
  server = await startCartesiaEchoServer(fake);
});
afterAll(() => stopServerAndFakes(server, fake));

const SONIC = `model=sonic-3&voice=${FAKE_CARTESIA_VOICE}`;
const GENERATION = { model_id: "sonic-3", voice: { mode: "id", id: FAKE_CARTESIA_VOICE }, output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: 24000 } };
const seconds24k = (audio: Uint8Array[]) => totalBytes(audio) / 2 / 24000;

async function noSocketsLeft() {
  for (let i = 0; i < 50 && fake.openSockets() > 0; i++) await Bun.sleep(20);
  expect(fake.openSockets()).toBe(0);
}

describe("Cartesia Sonic over the WebSocket through /v1/tts", () => {
  test("streaming: several writes, a flush and the end go out as one context; flushed follows the flushed audio", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(server.wsUrl(`/v1/tts?${SONIC}&speed=1.1&provider_options[emotion]=calm&language=en&max_buffer_delay_ms=1500`), bearer(key));
    for (const text of ["Hello there. ", "How are ", "you today?"]) c.send({ type: "text", text });
    c.send({ type: "flush" });
    c.send({ type: "text", text: " Goodbye." });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.events.at(-1)).toMatchObject({ type: "service.tts_session_ended" });
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(rec.events.find((e) => e.type === "service.tts_audio_started")).toMatchObject({ provider: "cartesia", encoding: "pcm_s16le", sample_rate: 24000 });

    const flushedAt = rec.order.indexOf("service.tts_flushed");
    const audioBefore = rec.order.slice(0, flushedAt).filter((o) => o === "audio").length;
    expect(seconds24k(rec.audio.slice(0, audioBefore))).toBeGreaterThan(1.5); // "Hello there. How are you today?"
    expect(seconds24k(rec.audio.slice(audioBefore))).toBeGreaterThan(0.4); // "Goodbye."
    expect(rec.order.at(-1)).toBe("service.tts_session_ended");

    const sent = fake.ttsSockets.at(-1)!;
    expect(sent).toMatchObject({ authorization: `Bearer ${FAKE_CARTESIA_KEY}`, version: "2026-08-14" });
    const contextId = sent.messages[0].context_id;
    const common = { ...GENERATION, generation_config: { speed: 1.1, emotion: "calm" }, language: "en", max_buffer_delay_ms: 1500, context_id: contextId };
    expect(sent.messages).toEqual([
      { ...common, transcript: "Hello there. ", continue: true },
      { ...common, transcript: "How are ", continue: true },
      { ...common, transcript: "you today?", continue: true },
      { ...common, transcript: "", continue: true, flush: true },
      { ...common, transcript: " Goodbye.", continue: true },
      { ...common, transcript: "", continue: false },
    ]);
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "cartesia", status: "completed", usageAmount: 40 });
    await noSocketsLeft();
  });

  test("one-shot: one generation request and the end; a context id per session", async () => {
    const first = await speakOnce(server, SONIC, "Hello from Sonic. ");
    const second = await speakOnce(server, SONIC, "Hello from Sonic. ");
    for (const rec of [first, second]) {
      expect(rec.close.code).toBe(1000);
      expect(seconds24k(rec.audio)).toBeGreaterThan(0.7);
    }
    const [a, b] = fake.ttsSockets.slice(-2);
    expect(a.messages).toEqual([
      { ...GENERATION, transcript: "Hello from Sonic. ", continue: true, context_id: a.messages[0].context_id },
      { ...GENERATION, transcript: "", continue: false, context_id: a.messages[0].context_id },
    ]);
    expect(b.messages[0].context_id).not.toBe(a.messages[0].context_id);
  });

  test("a flush with nothing new to say is answered here, in turn; a session without text opens no context", async () => {
    const c = connect(server.wsUrl(`/v1/tts?${SONIC}`), bearer(server.key));
    c.send({ type: "text", text: "Hello there." });
    c.send({ type: "flush" });
    c.send({ type: "flush" });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.order.filter((o) => o !== "audio").slice(-3)).toEqual(["service.tts_flushed", "service.tts_flushed", "service.tts_session_ended"]);
    expect(rec.order.lastIndexOf("audio")).toBeLessThan(rec.order.indexOf("service.tts_flushed"));
    expect(fake.ttsSockets.at(-1)!.messages.map((m) => [m.transcript, m.continue, m.flush ?? false])).toEqual([
      ["Hello there.", true, false],
      ["", true, true],
      ["", false, false],
    ]);

    const empty = await speakOnce(server, SONIC, "");
    expect(empty.close.code).toBe(1000);
    expect(fake.ttsSockets.at(-1)!.messages).toEqual([]);
    await noSocketsLeft();
  });

  test("a client that goes away cancels the context and the socket is closed", async () => {
    const c = connect(server.wsUrl(`/v1/tts?${SONIC}`), bearer(server.key));
    c.send({ type: "text", text: "This is a long sentence that takes a while to speak, so the client can leave early. " });
    c.send({ type: "flush" });
    // It leaves mid-speech: once audio has come, however long that takes on a loaded machine.
    while (c.rec.audio.length === 0 && c.rec.close.code === 0) await Bun.sleep(5);
    expect(c.rec.audio.length).toBeGreaterThan(0);
    c.ws.close();
    await c.closed;
    await noSocketsLeft();
    const messages = fake.ttsSockets.at(-1)!.messages;
    expect(messages.at(-1)).toEqual({ context_id: messages[0].context_id, cancel: true });
  });

  const refused: [string, string][] = [
    ["max_buffer_delay_ms=9000", 'cartesia option max_buffer_delay_ms must be a whole number from 0 to 5000, not "9000"'],
    ["transport=grpc", 'car-echo option transport must be websocket or http, not "grpc"'], // the adapter under its echo id,
    ["volume=loud", 'cartesia option volume must be a number, not "loud"'],
  ];
  for (const [option, message] of refused) {
    test(`${option} is refused before anything is sent, with no fallback`, async () => {
      const before = fake.ttsSockets.length;
      const rec = await speakOnce(server, `model=${TEST_MODEL}&voice=${FAKE_CARTESIA_VOICE}&provider_order=car-echo,fixed&${option}`, "Twelve chars");
      expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
      expect(rec.events.at(-1)).toMatchObject({ type: "service.tts_error", message });
      expect(fake.ttsSockets.length).toBe(before);
    });
  }

  test("an error message for the caller's request (404 unknown voice) is not retried elsewhere", async () => {
    const rec = await speakOnce(server, `model=${TEST_MODEL}&voice=no-such-voice&provider_order=car-echo,fixed`, "Twelve chars");
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(rec.events.at(-1)).toMatchObject({ type: "service.tts_error", message: "cartesia answered an error 404 (voice_not_found)" }); // the code only: free text may echo the request
    await noSocketsLeft();
  });

  test("an error message with status 500 before any audio: the next candidate serves", async () => {
    const { key, tenantId } = await fundedAccount(server);
    fake.fault("error");
    const rec = await speakOnce(server, `model=${TEST_MODEL}&voice=${FAKE_CARTESIA_VOICE}&provider_order=car-echo,fixed`, "Twelve chars", key);
    expect(rec.close.code).toBe(1000);
    const record = await lastActivity(server, tenantId);
    expect(record).toMatchObject({ provider: "fixed", status: "completed", usageAmount: 12 });
    expect(JSON.parse(record.attempts)[0]).toMatchObject({ provider: "car-echo", reason: "cartesia answered an error 500 (internal_error)" });
    await noSocketsLeft();
  });
});

describeHttpTtsFaults("Cartesia over the WebSocket", { server: () => server, fake, echoId: "car-echo", voice: FAKE_CARTESIA_VOICE });

describe("Cartesia Ink-Whisper streaming through /v1/stt", () => {
  const INK = "model=ink-whisper&audio_format=pcm_16000";

  /** Sends 20 ms frames at twice real time, so the router VAD and the upstream see the turns as they happen. */
  async function stream(c: ReturnType<typeof connect>, pcm: Int16Array) {
    await c.opened;
    for (const f of frames(pcm)) {
      c.ws.send(f);
      await Bun.sleep(10);
    }
  }

  async function until(c: ReturnType<typeof connect>, done: (events: Record<string, any>[]) => boolean) {
    for (let i = 0; i < 200 && !done(c.rec.events); i++) await Bun.sleep(10);
  }

  test("router VAD turns commit with finalize; transcripts mapped; portable options on the wire; billed by the second", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(server.wsUrl(`/v1/stt?${INK}&language=en-US&keyterms=voxroute&keyterms=Cartesia&silence_duration_ms=400&provider_options[min_volume]=0.1`), bearer(key));
    const audio = concat([silence(300), speak("Thank you very much."), silence(800), speak("For your help."), silence(800)]);
    await stream(c, audio);
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "stt_complete" });

    const sent = fake.sttSockets.at(-1)!;
    expect(Object.fromEntries(sent.query)).toEqual({
      model: "ink-whisper",
      encoding: "pcm_s16le",
      sample_rate: "16000",
      language: "en",
      max_silence_duration_secs: "0.4",
      keyterm: "Cartesia",
      min_volume: "0.1",
    });
    expect(sent.query.getAll("keyterm")).toEqual(["voxroute", "Cartesia"]);
    expect(sent).toMatchObject({ authorization: `Bearer ${FAKE_CARTESIA_KEY}`, version: "2026-08-14", texts: ["finalize", "finalize", "close"], audioBytes: audio.length * 2 });
    expect(sent.received.digest()).toEqual(digestOf(frames(audio))); // all of it, in order, as sent

    const ev = rec.events;
    expect(ev[0]).toMatchObject({
      type: "stt.session.started",
      provider: "cartesia",
      model: "cartesia/ink-whisper",
      input_config: { turn_detector: "router_vad", turn_detection: "acoustic", interim_results: true },
    });
    expect(ev.map((e) => e.seq)).toEqual(ev.map((_, i) => i + 1));
    for (const turn of ["turn_1", "turn_2"]) {
      const events = ev.filter((e) => e.turn_id === turn);
      expect(events.find((e) => e.type === "stt.signal")).toMatchObject({ signal: "started", origin: "router", basis: ["vad"] });
      expect(events.some((e) => e.type === "stt.transcript.interim")).toBe(true);
      expect(events.slice(-3).map((e) => (e.type === "stt.signal" ? `signal:${e.signal}` : e.type))).toEqual(["stt.transcript.final", "signal:end", "stt.audio.committed"]);
      expect(events.at(-1)).toMatchObject({ origin: "router" });
    }
    const finals = ev.filter((e) => e.type === "stt.transcript.final");
    expect(finals[0]).toMatchObject({ turn_id: "turn_1", text: expect.stringMatching(/^Thank you very/), audio_start_ms: 0 });
    expect(finals[1].text).toMatch(/^\S/); // Cartesia's delta starts with a space; ours is trimmed
    expect(finals[1].audio_start_ms).toBe(finals[0].audio_end_ms);
    expect(ev.at(-1)).toMatchObject({ type: "stt.session.ended", billed_seconds: Math.ceil(audio.length / 16000) });
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "cartesia", usageUnit: "seconds", usageAmount: Math.ceil(audio.length / 16000), status: "completed" });
    await noSocketsLeft();
  }, 20_000);

  test("manual commit and clear go out as finalize; a cleared stretch's transcript is dropped; interim_results=false", async () => {
    const c = connect(server.wsUrl(`/v1/stt?${INK}&commit_strategy=manual&interim_results=false`), bearer(server.key));
    await c.opened;
    // A quiet tone: sound to the fake, which transcribes any, but no speech to the router VAD, whose signals would join the events.
    const tone = new Int16Array(40_000).map((_, i) => Math.round(60 * Math.sin(i / 5)));
    const audio = [32_000, 32_000, 16_000].map((n, i) => new Uint8Array(tone.buffer.slice(i * 32_000, i * 32_000 + n)));
    c.ws.send(audio[0]!);
    c.send({ type: "stt.audio.commit" });
    c.ws.send(audio[1]!);
    c.send({ type: "stt.audio.clear" });
    c.ws.send(audio[2]!);
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(fake.sttSockets.at(-1)!.texts).toEqual(["finalize", "finalize", "close"]);
    expect(fake.sttSockets.at(-1)!.received.digest()).toEqual(digestOf(audio));
    expect(rec.events.map((e) => [e.type, e.turn_id, e.origin ?? e.text])).toEqual([
      ["stt.session.started", undefined, undefined],
      ["stt.transcript.final", "turn_1", "Thank you"],
      ["stt.audio.committed", "turn_1", "client"],
      ["stt.audio.cleared", "turn_2", undefined],
      ["stt.transcript.final", "turn_3", "For"],
      ["stt.session.ended", undefined, undefined],
    ]);
    expect(rec.events[2]).toMatchObject({ audio_ms: 1000 });
    expect(rec.events[4]).toMatchObject({ audio_start_ms: 2000, audio_end_ms: 2500 });
  });

  test("a client commit mid-utterance ends the turn: the router VAD's later end of that speech commits nothing more", async () => {
    const c = connect(server.wsUrl(`/v1/stt?${INK}`), bearer(server.key));
    await stream(c, concat([silence(300), speak("Thank you very much."), silence(100)]));
    await until(c, (ev) => ev.some((e) => e.type === "stt.signal" && e.signal === "started"));
    c.send({ type: "stt.audio.commit" });
    await stream(c, silence(1500));
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "stt_complete" });
    expect(fake.sttSockets.at(-1)!.texts).toEqual(["finalize", "close"]);
    const turn1 = rec.events.filter((e) => e.type !== "stt.transcript.interim" && e.turn_id === "turn_1");
    expect(turn1.map((e) => [e.type, e.signal ?? e.origin])).toEqual([
      ["stt.signal", "started"],
      ["stt.transcript.final", undefined],
      ["stt.audio.committed", "client"],
    ]);
    // The trailing silence is transcribed at the close, in a turn nobody committed.
    expect(rec.events.filter((e) => e.type === "stt.audio.committed" || e.type === "stt.signal")).toEqual([turn1[0], turn1[2]]);
  }, 20_000);

  test("event_format=provider relays Cartesia's frames both ways as they are", async () => {
    const c = connect(server.wsUrl(`/v1/stt?model=ink-whisper&audio_format=pcm_8000&event_format=provider`), bearer(server.key));
    const raw: string[] = [];
    c.ws.addEventListener("message", (e) => typeof e.data === "string" && raw.push(e.data));
    await c.opened;
    const audio = [speech("Thank you very much for your help.", 8000).slice(0, 16_000)]; // a second of speech: the fake hears digital silence as nothing
    c.ws.send(audio[0]!);
    c.ws.send("finalize");
    c.ws.send("close");
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    const sent = fake.sttSockets.at(-1)!;
    expect(sent).toMatchObject({ texts: ["finalize", "close"], audioBytes: 16_000 });
    expect(sent.received.digest()).toEqual(digestOf(audio));
    expect(Object.fromEntries(sent.query)).toEqual({ model: "ink-whisper", encoding: "pcm_s16le", sample_rate: "8000" });
    expect(rec.events.map((e) => e.type)).toEqual(["transcript", "transcript", "flush_done", "done"]);
    expect(raw[1]).toStartWith('{"type":"transcript","text":"Thank you","is_final":true,"request_id":');
  });

  const refusedQueries: [string, string, string][] = [
    ["diarization=true", "unsupported_stt_option", "diarization"],
    ["provider_options[encoding]=pcm_f32le", "conflicting_audio_format", "provider_options"],
    ["provider_options[sample_rate]=8000", "conflicting_audio_format", "provider_options"],
  ];
  for (const [query, error, param] of refusedQueries) {
    test(`${query} is refused before the upgrade (${error})`, async () => {
      const res = await fetch(`${server.url}/v1/stt?${INK}&${query}`, {
        headers: { ...bearer(server.key), Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error, param });
    });
  }

  test("µ-law is refused before the upgrade: the router VAD, Ink's turn detector, reads PCM only", async () => {
    const before = fake.sttSockets.length;
    const res = await fetch(`${server.url}/v1/stt?model=ink-whisper&audio_format=ulaw_8000`, {
      headers: { ...bearer(server.key), Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_request", param: "audio_format" });
    expect(fake.sttSockets.length).toBe(before);
  });

  test("stereo is refused with a clear error before anything is sent upstream", async () => {
    const before = fake.sttSockets.length;
    const rec = await connect(server.wsUrl(`/v1/stt?${INK}&channels=2`), bearer(server.key)).closed;
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(rec.events.at(-1)).toMatchObject({ type: "stt.error", message: "cartesia ink-whisper takes mono audio only" });
    expect(fake.sttSockets.length).toBe(before);
  });

  describeSttFaults("Ink-Whisper", {
    server: () => server,
    fake: () => fake,
    query: INK,
    provider: "cartesia",
    faults: [
      ["stall", "a silent upstream"],
      ["error", "an error message"],
    ],
  });
});
