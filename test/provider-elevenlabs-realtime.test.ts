import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FAKE_ELEVENLABS_KEY, FAKE_VOICE, startFakeElevenLabs } from "./fakes/elevenlabs.ts";
import { TEST_MODEL } from "./fakes/fixed-pcm-provider.ts";
import { speech } from "./fakes/http-fake.ts";
import { digestOf } from "./fakes/received-audio.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { describeHttpTtsFaults, speakOnce, startElevenLabsEchoServer } from "./helpers/http-tts.ts";
import { stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { describeSttFaults } from "./helpers/stt-faults.ts";
import { until } from "./helpers/realtime.ts";
import { bearer, connect, totalBytes } from "./helpers/ws-client.ts";

// ElevenLabs' realtime APIs against the fake, through our server: TTS sessions over the
// input-streaming WebSocket (the default transport) and Scribe realtime through /v1/stt.

const fake = startFakeElevenLabs();
let server: TestServer;

beforeAll(async () => {
  server = await startElevenLabsEchoServer(fake);
});
afterAll(() => stopServerAndFakes(server, fake));

const TTS = `/v1/tts?model=eleven_flash_v2_5&voice=${FAKE_VOICE}`;

describe("ElevenLabs TTS through /v1/tts over the input-streaming WebSocket", () => {
  test("a streaming session: options on the wire, one context per flush, flushed after its audio, billed per character", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(
      server.wsUrl(
        `${TTS}&stability=0.3&provider_options[speed]=1.1&chunk_length_schedule=50,90&try_trigger_generation=true&auto_mode=true&enable_logging=false&language_code=en&apply_text_normalization=on&inactivity_timeout=60`,
      ),
      bearer(key),
    );
    c.send({ type: "text", text: "Hello from the socket. " });
    c.send({ type: "flush" });
    c.send({ type: "text", text: "A second turn" });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(rec.events.find((e) => e.type === "service.tts_audio_started")).toMatchObject({ provider: "elevenlabs", encoding: "pcm_s16le", sample_rate: 24000 });
    expect(totalBytes(rec.audio) / 2 / 24000).toBeGreaterThan(1.5);
    const flushed = rec.order.indexOf("service.tts_flushed");
    expect(rec.order.slice(0, flushed)).toContain("audio");
    expect(rec.order.slice(flushed)).toContain("audio");

    const socket = fake.ttsSockets.at(-1)!;
    expect(socket).toMatchObject({
      voiceId: FAKE_VOICE,
      multi: true,
      apiKey: FAKE_ELEVENLABS_KEY,
      query: { model_id: "eleven_flash_v2_5", output_format: "pcm_24000", auto_mode: "true", enable_logging: "false", language_code: "en", apply_text_normalization: "on", inactivity_timeout: "60" },
    });
    const setup = { voice_settings: { stability: 0.3, speed: 1.1 }, generation_config: { chunk_length_schedule: [50, 90] } };
    expect(socket.frames).toEqual([
      { text: " ", ...setup, context_id: "1" },
      { text: "Hello from the socket. ", try_trigger_generation: true, context_id: "1" },
      { context_id: "1", text: "", flush: true },
      { context_id: "1", close_context: true },
      { text: "A second turn", ...setup, try_trigger_generation: true, context_id: "2" },
      { context_id: "2", text: "", flush: true },
      { context_id: "2", close_context: true },
      { close_socket: true },
    ]);
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "elevenlabs", status: "completed", usageAmount: 36 });
  });

  test("eight turns flushed at once: ElevenLabs allows five contexts, so later turns wait for a context to finish; all are spoken, in order", async () => {
    const c = connect(server.wsUrl(TTS), bearer(server.key));
    for (let i = 1; i <= 8; i++) {
      c.send({ type: "text", text: `Turn number ${i}. ` });
      c.send({ type: "flush" });
    }
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(rec.order.filter((e) => e === "service.tts_flushed").length).toBe(8);
    const frames = fake.ttsSockets.at(-1)!.frames as { text?: string; context_id?: string }[];
    expect(frames.filter((f) => f.text?.startsWith("Turn number")).map((f) => f.text)).toEqual(Array.from({ length: 8 }, (_, i) => `Turn number ${i + 1}. `));
  }, 20_000);

  test("a session idle between turns longer than inactivity_timeout: keep-alives hold the socket open", async () => {
    const socketIndex = fake.ttsSockets.length;
    const c = connect(server.wsUrl(`${TTS}&inactivity_timeout=1`), bearer(server.key));
    c.send({ type: "text", text: "Before the pause. " });
    c.send({ type: "flush" });
    // Keep-alives go out a third of the timeout apart or more: seven of them span two timeouts.
    const keepAlives = () => fake.ttsSockets[socketIndex]?.frames.filter((f) => f.context_id === "2" && f.text === "").length ?? 0;
    await until(() => keepAlives() >= 7);
    c.send({ type: "text", text: "After the pause." });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(rec.order.filter((e) => e === "service.tts_flushed").length).toBe(1);
    expect(fake.ttsSockets.length).toBe(socketIndex + 1);
  }, 20_000);

  test("one-shot: a sentence and close; format=mp3 asks for mp3_44100_128", async () => {
    const rec = await speakOnce(server, `model=eleven_flash_v2_5&voice=${FAKE_VOICE}&format=mp3`, "MP3 over the socket.");
    expect(rec.close.code).toBe(1000);
    expect(Buffer.concat(rec.audio)[0]).toBe(0xff);
    expect(fake.ttsSockets.at(-1)!.query.output_format).toBe("mp3_44100_128");
    expect(fake.ttsSockets.at(-1)!.frames.at(-1)).toEqual({ close_socket: true });
  });

  for (const [query, message] of [
    ["chunk_length_schedule=50,abc", 'elevenlabs option chunk_length_schedule must be comma-separated integers from 50 to 500, not "50,abc"'],
    ["chunk_length_schedule=20", 'elevenlabs option chunk_length_schedule must be comma-separated integers from 50 to 500, not "20"'],
    ["stability=high", 'elevenlabs option stability must be a number, not "high"'],
    ["try_trigger_generation=maybe", 'elevenlabs option try_trigger_generation must be true or false, not "maybe"'],
    ["transport=grpc", 'elevenlabs option transport must be websocket or http, not "grpc"'],
    ["inactivity_timeout=0", 'elevenlabs option inactivity_timeout must be a whole number of seconds from 1 to 180, not "0"'],
  ]) {
    test(`${query} is refused before anything connects upstream`, async () => {
      const before = fake.ttsSockets.length + fake.requests.length;
      const rec = await speakOnce(server, `model=eleven_flash_v2_5&voice=${FAKE_VOICE}&${query}`, "Hello.");
      expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
      expect(rec.events.at(-1)).toMatchObject({ type: "service.tts_error", code: "upstream_error", message });
      expect(fake.ttsSockets.length + fake.requests.length).toBe(before);
    });
  }

  test("a voice the account does not have: ElevenLabs closes 1008, the session ends 1011", async () => {
    const before = fake.ttsSockets.length;
    const rec = await speakOnce(server, "model=eleven_flash_v2_5&voice=no-such-voice", "Hello.");
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(rec.events.at(-1)!.message).toContain("1008");
    expect(fake.ttsSockets.length - before).toBe(1);
  });

  test("a provider error close (1008) before audio: the fallback serves", async () => {
    const { key, tenantId } = await fundedAccount(server);
    fake.fault("error");
    const rec = await speakOnce(server, `model=${TEST_MODEL}&voice=${FAKE_VOICE}&provider_order=el-echo,fixed`, "Twelve chars", key);
    expect(rec.close.code).toBe(1000);
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "fixed", status: "completed" });
    expect(JSON.parse((await lastActivity(server, tenantId)).attempts)[0]).toMatchObject({ provider: "el-echo", reason: expect.stringContaining("1008") });
    for (let i = 0; i < 50 && fake.openSockets() > 0; i++) await Bun.sleep(20);
    expect(fake.openSockets()).toBe(0);
  });
});

describeHttpTtsFaults("ElevenLabs WebSocket", { server: () => server, fake, echoId: "el-echo", voice: FAKE_VOICE });

const SCRIBE_QUERY = "model=scribe_v2_realtime&audio_format=pcm_16000";
const SCRIBE = `/v1/stt?${SCRIBE_QUERY}`;
/** Real speech then silence, as 100 ms frames. */
const utterance = (text: string, silenceMs = 1000) => frames(Buffer.concat([speech(text, 16000), new Uint8Array(32 * silenceMs)]));
const frames = (pcm: Uint8Array) => Array.from({ length: Math.ceil(pcm.length / 3200) }, (_, i) => pcm.subarray(i * 3200, (i + 1) * 3200));

describe("Scribe realtime through /v1/stt", () => {
  test("auto commit: Scribe's VAD commits; partials, final and commit mapped; portable options translated on the wire", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(
      server.wsUrl(
        `${SCRIBE}&language=en-US&silence_duration_ms=600&speech_threshold=0.4&min_speech_duration_ms=100&min_silence_duration_ms=200&keyterms=voxroute&keyterms=scribe&include_timestamps=true&include_filler_words=false&provider_options[enable_logging]=false`,
      ),
      bearer(key),
    );
    await c.opened;
    const audio = utterance("Thank you very much for your help.");
    for (const f of audio) c.ws.send(f);
    while (!c.rec.events.some((e) => e.type === "stt.audio.committed")) await Bun.sleep(10);
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "stt_complete" });

    const socket = fake.scribeSockets.at(-1)!;
    expect(Object.fromEntries(socket.query)).toEqual({
      model_id: "scribe_v2_realtime",
      audio_format: "pcm_16000",
      commit_strategy: "vad",
      language_code: "en",
      vad_silence_threshold_secs: "0.6",
      vad_threshold: "0.4",
      min_speech_duration_ms: "100",
      min_silence_duration_ms: "200",
      include_timestamps: "true",
      no_verbatim: "true",
      keyterms: "scribe",
      enable_logging: "false",
    });
    expect(socket.query.getAll("keyterms")).toEqual(["voxroute", "scribe"]);
    expect(socket.apiKey).toBe(FAKE_ELEVENLABS_KEY);
    expect(socket.audioBytes).toBe(totalBytes(audio));
    expect(socket.received.digest()).toEqual(digestOf(audio)); // all of it, in order, as sent
    // Frames that reached the router in one loop turn share a chunk: the first chunk starts with the first frame.
    const { audio_base_64, ...first } = JSON.parse(socket.texts[0]!);
    expect(first).toEqual({ message_type: "input_audio_chunk", commit: false, sample_rate: 16000 });
    expect(Buffer.from(audio_base_64, "base64").subarray(0, audio[0]!.byteLength)).toEqual(Buffer.from(audio[0]!));

    const ev = rec.events;
    expect(ev[0]).toMatchObject({ type: "stt.session.started", provider: "elevenlabs", input_config: { turn_detector: "provider", commit_strategy: "auto", interim_results: true } });
    expect(ev.filter((e) => e.type === "stt.transcript.interim").length).toBeGreaterThan(1);
    const committed = ev.findIndex((e) => e.type === "stt.audio.committed");
    expect(ev[committed]).toMatchObject({ origin: "provider", turn_id: "turn_1" });
    expect(ev[committed - 1]).toMatchObject({ type: "stt.transcript.final", turn_id: "turn_1", text: "Thank you very much for your help.", audio_start_ms: 0 });
    expect(ev.filter((e) => e.type === "stt.transcript.final")).toHaveLength(1);
    expect(ev.map((e) => e.seq)).toEqual(ev.map((_, i) => i + 1));
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "elevenlabs", usageUnit: "seconds", usageAmount: Math.ceil(totalBytes(audio) / 32000), status: "completed" });
  });

  test("manual commit: stt.audio.commit becomes Scribe's commit message; the end commits the rest; clear drops a turn", async () => {
    const c = connect(server.wsUrl(`${SCRIBE}&commit_strategy=manual&interim_results=false`), bearer(server.key));
    await c.opened;
    for (const f of utterance("Thank you.", 200)) c.ws.send(f);
    c.send({ type: "stt.audio.commit" });
    for (const f of utterance("Never mind.", 200)) c.ws.send(f);
    c.send({ type: "stt.audio.clear" });
    for (const f of utterance("For your help.", 200)) c.ws.send(f);
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);

    const socket = fake.scribeSockets.at(-1)!;
    expect(socket.query.get("commit_strategy")).toBe("manual");
    const commits = socket.texts.filter((t) => JSON.parse(t).commit);
    expect(commits).toHaveLength(3);
    expect(JSON.parse(commits[0]!)).toEqual({ message_type: "input_audio_chunk", audio_base_64: "", commit: true, sample_rate: 16000 });

    const types = rec.events.map((e) => e.type);
    expect(types).not.toContain("stt.transcript.interim");
    expect(rec.events.filter((e) => e.type !== "stt.session.started" && e.type !== "stt.session.ended").map((e) => [e.type, e.turn_id, e.origin])).toEqual([
      ["stt.transcript.final", "turn_1", undefined],
      ["stt.audio.committed", "turn_1", "client"],
      ["stt.audio.cleared", "turn_2", undefined],
      ["stt.transcript.final", "turn_3", undefined],
    ]);
  });

  test("auto commit: a commit of Scribe's own between a clear and its answer never lets the cleared audio through", async () => {
    fake.fault("vad_race");
    const c = connect(server.wsUrl(`${SCRIBE}&silence_duration_ms=300`), bearer(server.key));
    await c.opened;
    for (const f of utterance("Thank you very much.", 200)) c.ws.send(f);
    c.send({ type: "stt.audio.clear" });
    while (!c.rec.events.some((e) => e.type === "stt.audio.cleared")) await Bun.sleep(10);
    for (const f of utterance("For your help.", 600)) c.ws.send(f);
    while (!c.rec.events.some((e) => e.type === "stt.audio.committed")) await Bun.sleep(10);
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);

    // Ours: the clear and the end's. Scribe's: its VAD's, the clear's answer (the last 0.5 s), its VAD's again, the end's.
    expect(fake.scribeSockets.at(-1)!.texts.filter((t) => JSON.parse(t).commit)).toHaveLength(2);
    const ev = rec.events.filter((e) => e.type !== "stt.transcript.interim" && e.type !== "stt.session.started" && e.type !== "stt.session.ended");
    expect(ev.map((e) => [e.type, e.turn_id, e.origin])).toEqual([
      ["stt.audio.cleared", "turn_1", undefined],
      ["stt.transcript.final", "turn_2", undefined],
      ["stt.audio.committed", "turn_2", "provider"],
    ]);
    expect(ev[1]).toMatchObject({ text: "Thank you very much.", audio_start_ms: ev[0].audio_ms });
  });

  test("event_format=provider relays Scribe's own frames byte for byte; the base64 audio is metered", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(server.wsUrl(`${SCRIBE}&commit_strategy=manual&event_format=provider`), bearer(key));
    await c.opened;
    const spoken = speech("Thank you very much.", 16000);
    const sent = [
      JSON.stringify({ message_type: "input_audio_chunk", audio_base_64: Buffer.from(spoken).toString("base64"), commit: false, sample_rate: 16000 }),
      '{"message_type": "input_audio_chunk", "audio_base_64": "", "commit": true}',
    ];
    for (const frame of sent) c.ws.send(frame);
    while (!c.rec.events.some((e) => e.message_type === "committed_transcript")) await Bun.sleep(10);
    c.ws.close(1000);
    await c.closed;
    expect(fake.scribeSockets.at(-1)!.texts).toEqual(sent);
    expect(fake.scribeSockets.at(-1)!.received.digest()).toEqual(digestOf([spoken]));
    expect(fake.scribeSockets.at(-1)!.query.get("commit_strategy")).toBe("manual");
    expect(c.rec.events.map((e) => e.message_type)).toEqual(["session_started", "partial_transcript", "committed_transcript"]);
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "elevenlabs", usageUnit: "seconds", usageAmount: Math.ceil(spoken.length / 32000) });
  });

  test("a portable value outside Scribe's range is refused before the upgrade", async () => {
    const res = await fetch(`${server.url}${SCRIBE}&silence_duration_ms=100`, {
      headers: { ...bearer(server.key), Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "unsupported_stt_option", param: "silence_duration_ms" });
  });

  describeSttFaults("Scribe realtime", {
    server: () => server,
    fake: () => fake,
    query: SCRIBE_QUERY,
    provider: "elevenlabs",
    faults: [
      ["stall", "a silent upstream"],
      ["error", "a transcriber_error message"],
    ],
  });
});
