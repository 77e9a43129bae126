import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { CatalogueData } from "../src/catalogue/catalogue.ts";
import { OpenAiStt } from "../src/providers/openai/stt.ts";
import { speech } from "./fakes/http-fake.ts";
import { FAKE_OPENAI_KEY, startFakeOpenAi, type FakeOpenAi } from "./fakes/openai.ts";
import { digestOf } from "./fakes/received-audio.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { UPSTREAM_TIMEOUTS } from "./helpers/http-tts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { describeSttFaults } from "./helpers/stt-faults.ts";
import { bearer, connect, type Client } from "./helpers/ws-client.ts";

// OpenAI realtime transcription sessions against the fake, through /v1/stt: the session.update
// the fake received, provider turns, manual and semantic turn detection, passthrough, and faults.

let fake: FakeOpenAi;
let server: TestServer;

beforeAll(async () => {
  fake = startFakeOpenAi();
  // "oai-backup" serves the same model from the same fake: a fallback candidate for handshake faults.
  const backup = new OpenAiStt({ apiKey: FAKE_OPENAI_KEY, baseUrl: fake.url, ...UPSTREAM_TIMEOUTS }, "oai-backup", true);
  const catalogue: CatalogueData = {
    providers: [
      {
        id: "oai-backup",
        name: "OpenAI backup",
        kind: "local",
        requiresVoice: false,
        defaults: {},
        bindings: [
          {
            capability: "stt",
            id: "gpt-4o-transcribe",
            canonical: "openai/gpt-4o-transcribe",
            streaming: true,
            synchronous: false,
            batch: false,
            inputFormats: ["pcm_24000"],
            price: { amount: "0.012", per: "minute" },
          },
        ],
      },
    ],
    models: [],
  };
  server = await startTestServer(
    { OPENAI_API_KEY: FAKE_OPENAI_KEY, OPENAI_BASE_URL: fake.url, UPSTREAM_IDLE_TIMEOUT_MS: String(UPSTREAM_TIMEOUTS.idleTimeoutMs) },
    { extra: { catalogue, providers: [], sttProviders: [backup] } },
  );
});
afterAll(async () => {
  await server.stop(0);
  fake.stop();
});

const ONLY_OPENAI = "model=gpt-4o-transcribe&audio_format=pcm_24000&provider=openai";
const UTTERANCE = speech("Thank you very much for your help.", 24000);
const silence = (ms: number) => new Uint8Array(48 * ms);

/** Real speech in 100 ms frames. */
const speechFrames = (pcm = UTTERANCE) => Array.from({ length: Math.ceil(pcm.length / 4800) }, (_, i) => pcm.subarray(i * 4800, (i + 1) * 4800));
function sendSpeech(c: Client, pcm = UTTERANCE): void {
  for (const frame of speechFrames(pcm)) c.ws.send(frame);
}

const lastConnection = () => fake.realtime.at(-1)!;
const clientEvents = () => lastConnection().frames.map((f) => JSON.parse(f) as Record<string, any>);

async function noSocketsLeft(): Promise<number> {
  for (let i = 0; i < 50 && fake.openSockets() > 0; i++) await Bun.sleep(20);
  return fake.openSockets();
}

describe("OpenAI realtime transcription through /v1/stt", () => {
  test("server VAD turns: provider signals, cumulative interims, finals and provider commits; options on the wire", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(
      server.wsUrl(
        `/v1/stt?${ONLY_OPENAI}&language=en-US&keyterms=voxroute&keyterms=Flite&context=A%20support%20call&silence_duration_ms=400&speech_threshold=0.4&provider_options[prefix_padding_ms]=200&provider_options[noise_reduction]=near_field`,
      ),
      bearer(key),
    );
    await c.opened;
    sendSpeech(c);
    c.ws.send(silence(600));
    sendSpeech(c);
    c.ws.send(silence(600));
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "stt_complete" });

    expect(lastConnection().authorization).toBe(`Bearer ${FAKE_OPENAI_KEY}`);
    expect(lastConnection().query.get("intent")).toBe("transcription");
    expect(lastConnection().updates).toEqual([
      {
        type: "transcription",
        audio: {
          input: {
            format: { type: "audio/pcm", rate: 24000 },
            transcription: { model: "gpt-4o-transcribe", language: "en", prompt: "A support call\nvoxroute, Flite" },
            turn_detection: { type: "server_vad", silence_duration_ms: 400, threshold: 0.4, prefix_padding_ms: 200 },
            noise_reduction: { type: "near_field" },
          },
        },
      },
    ]);
    // The client's frames, byte for byte; frames that reached the router in one loop turn share an append.
    const frames = Math.ceil(UTTERANCE.length / 4800) * 2 + 2;
    expect(clientEvents().filter((e) => e.type === "input_audio_buffer.append").length).toBeLessThanOrEqual(frames);
    expect(lastConnection().received.digest()).toEqual(digestOf([UTTERANCE, silence(600), UTTERANCE, silence(600)]));

    const ev = rec.events;
    expect(ev[0]).toMatchObject({
      type: "stt.session.started",
      provider: "openai",
      model: "openai/gpt-4o-transcribe",
      input_config: { turn_detector: "provider", turn_detection: "acoustic", interim_results: true },
    });
    expect(ev.map((e) => e.seq)).toEqual(ev.map((_, i) => i + 1));
    for (const turn of ["turn_1", "turn_2"]) {
      const types = ev.filter((e) => e.turn_id === turn).map((e) => (e.type === "stt.signal" ? `signal.${e.signal}` : e.type));
      expect(types[0]).toBe("signal.started");
      expect(types[1]).toBe("signal.end");
      expect(types.slice(-2)).toEqual(["stt.transcript.final", "stt.audio.committed"]);
      expect(types.slice(2, -2).every((t) => t === "stt.transcript.interim")).toBe(true);
    }
    const interims = ev.filter((e) => e.type === "stt.transcript.interim" && e.turn_id === "turn_1").map((e) => e.text);
    expect(interims.slice(0, 3)).toEqual(["Thank", "Thank you", "Thank you very"]);
    const finals = ev.filter((e) => e.type === "stt.transcript.final");
    expect(finals.map((e) => e.text)).toEqual(["Thank you very much for your help.", "Thank you very much for your help."]);
    const signals = ev.filter((e) => e.type === "stt.signal");
    expect(signals.every((s) => s.origin === "provider" && s.basis[0] === "provider")).toBe(true);
    // Audio clocks come from the fake's audio_start_ms / audio_end_ms.
    const utteranceMs = UTTERANCE.length / 48;
    expect(signals[2].audio_ms).toBeGreaterThan(utteranceMs + 500);
    expect(finals[1].audio_start_ms).toBe(signals[2].audio_ms);
    expect(finals[1].audio_end_ms).toBe(signals[3].audio_ms);
    const commits = ev.filter((e) => e.type === "stt.audio.committed");
    expect(commits.map((e) => [e.origin, e.turn_id])).toEqual([
      ["provider", "turn_1"],
      ["provider", "turn_2"],
    ]);
    expect(ev.at(-1)).toMatchObject({ type: "stt.session.ended", provider: "openai" });
    const seconds = Math.ceil((UTTERANCE.length * 2 + 2 * 600 * 48) / 48000);
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "openai", usageUnit: "seconds", usageAmount: seconds, status: "completed" });
    expect(await noSocketsLeft()).toBe(0);
  });

  test("commit_strategy=manual: turn_detection null, the client's commits become input_audio_buffer.commit; clear is acknowledged", async () => {
    const c = connect(server.wsUrl(`/v1/stt?${ONLY_OPENAI}&commit_strategy=manual&interim_results=false`), bearer(server.key));
    await c.opened;
    sendSpeech(c);
    c.send({ type: "stt.audio.commit" });
    sendSpeech(c);
    c.send({ type: "stt.audio.clear" });
    sendSpeech(c);
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "stt_complete" });
    expect(lastConnection().updates[0].audio.input.turn_detection).toBeNull();
    expect(clientEvents().filter((e) => e.type !== "input_audio_buffer.append")).toEqual([
      expect.objectContaining({ type: "session.update" }),
      { type: "input_audio_buffer.commit" },
      { type: "input_audio_buffer.clear" },
      { type: "input_audio_buffer.commit" }, // at close: the buffered audio is transcribed
    ]);
    const summary = rec.events.slice(1, -1).map((e) => [e.type, e.turn_id, e.origin ?? null]);
    expect(summary).toEqual([
      ["stt.transcript.final", "turn_1", null],
      ["stt.audio.committed", "turn_1", "client"],
      ["stt.audio.cleared", "turn_2", null],
      ["stt.transcript.final", "turn_3", null],
      ["stt.audio.committed", "turn_3", "client"],
    ]);
    const utteranceMs = Math.round(UTTERANCE.length / 48);
    expect(rec.events[2]).toMatchObject({ audio_ms: utteranceMs });
    expect(rec.events[3]).toMatchObject({ audio_ms: utteranceMs * 2 });
    expect(rec.events[4]).toMatchObject({ audio_start_ms: utteranceMs * 2, audio_end_ms: utteranceMs * 3 });
  });

  test("a commit with nothing buffered is still acknowledged", async () => {
    const c = connect(server.wsUrl(`/v1/stt?${ONLY_OPENAI}&commit_strategy=manual`), bearer(server.key));
    await c.opened;
    c.send({ type: "stt.audio.commit" });
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.events.map((e) => e.type)).toEqual(["stt.session.started", "stt.audio.committed", "stt.session.ended"]);
  });

  test("turn_detection=semantic: semantic_vad with the eagerness asked", async () => {
    const c = connect(server.wsUrl(`/v1/stt?${ONLY_OPENAI}&turn_detection=semantic&provider_options[eagerness]=high`), bearer(server.key));
    await c.opened;
    sendSpeech(c);
    c.ws.send(silence(500));
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(lastConnection().updates[0].audio.input.turn_detection).toEqual({ type: "semantic_vad", eagerness: "high" });
    expect(rec.events[0].input_config.turn_detection).toBe("semantic");
    expect(rec.events.find((e) => e.type === "stt.audio.committed")).toMatchObject({ origin: "provider", turn_id: "turn_1" });
  });

  test("ulaw_8000 is sent as audio/pcmu", async () => {
    const c = connect(server.wsUrl("/v1/stt?model=gpt-4o-mini-transcribe&audio_format=ulaw_8000"), bearer(server.key));
    await c.opened;
    c.ws.send(new Uint8Array(8000).fill(0xff)); // a second of µ-law silence
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(lastConnection().updates[0].audio.input).toMatchObject({ format: { type: "audio/pcmu" }, transcription: { model: "gpt-4o-mini-transcribe" } });
    expect(rec.events.map((e) => e.type)).toEqual(["stt.session.started", "stt.session.ended"]);
  });

  test("event_format=provider: the client speaks OpenAI's events, relayed byte for byte both ways", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(server.wsUrl(`/v1/stt?${ONLY_OPENAI}&event_format=provider`), bearer(key));
    await c.opened;
    const mine = [
      JSON.stringify({ type: "session.update", session: { type: "transcription", audio: { input: { turn_detection: null } } } }),
      JSON.stringify({ type: "input_audio_buffer.append", audio: Buffer.from(UTTERANCE).toString("base64") }),
      '{"type": "input_audio_buffer.commit"}',
    ];
    for (const frame of mine) c.ws.send(frame);
    for (let i = 0; i < 100 && !c.rec.events.some((e) => e.type === "conversation.item.input_audio_transcription.completed"); i++) await Bun.sleep(10);
    c.ws.close(1000);
    await c.closed;
    // The router opened the session with the query's settings, then relayed the client's frames as they came.
    expect(lastConnection().frames.slice(1)).toEqual(mine);
    expect(lastConnection().updates[0].audio.input.transcription).toEqual({ model: "gpt-4o-transcribe" });
    const types = c.rec.events.map((e) => e.type);
    expect(types.slice(0, 5)).toEqual(["session.created", "session.updated", "session.updated", "input_audio_buffer.committed", "conversation.item.added"]);
    expect(types.slice(-2)).toEqual(["conversation.item.done", "conversation.item.input_audio_transcription.completed"]);
    expect(types.slice(5, -2).every((t) => t === "conversation.item.input_audio_transcription.delta")).toBe(true);
    expect(await noSocketsLeft()).toBe(0);
    // The audio came as base64 in text frames: it is metered all the same.
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "openai", status: "completed", usageAmount: Math.ceil(UTTERANCE.length / 48000) });
  });

  test("audio formats OpenAI does not take are refused before the upgrade", async () => {
    const res = await fetch(`${server.url}/v1/stt?model=gpt-4o-transcribe&audio_format=pcm_16000`, {
      headers: { ...bearer(server.key), Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_request", param: "audio_format" });
  });

  test("a portable option outside the family is refused before the upgrade", async () => {
    const res = await fetch(`${server.url}/v1/stt?${ONLY_OPENAI}&diarization=true`, {
      headers: { ...bearer(server.key), Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "unsupported_stt_option", param: "diarization" });
  });

  test("an unknown provider option ends the session with a clear message, before any upstream connection", async () => {
    const before = fake.realtime.length;
    const c = connect(server.wsUrl(`/v1/stt?${ONLY_OPENAI}&provider_options[vad_mode]=fast`), bearer(server.key));
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(rec.events.at(-1)).toMatchObject({ type: "stt.error", code: "upstream_error", message: expect.stringContaining("provider_options[vad_mode]") });
    expect(fake.realtime.length).toBe(before);
  });
});

describe("OpenAI realtime faults through /v1/stt", () => {
  for (const fault of ["401", "429", "500"] as const) {
    test(`handshake ${fault} before any output: the next candidate serves`, async () => {
      const { key, tenantId } = await fundedAccount(server);
      fake.fault(fault);
      const c = connect(server.wsUrl("/v1/stt?model=gpt-4o-transcribe&audio_format=pcm_24000&provider_order=openai,oai-backup"), bearer(key));
      await c.opened;
      sendSpeech(c);
      c.send({ type: "stt.session.close" });
      const rec = await c.closed;
      expect(rec.close.code).toBe(1000);
      expect(rec.events[0]).toMatchObject({ type: "stt.session.started", provider: "oai-backup" });
      expect(rec.events.some((e) => e.type === "stt.transcript.final")).toBe(true);
      expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "oai-backup", status: "completed", attempts: expect.stringContaining('"provider":"openai"') });
    });
  }

  describeSttFaults("OpenAI realtime", {
    server: () => server,
    fake: () => fake,
    query: ONLY_OPENAI,
    provider: "openai",
    audio: () => [...speechFrames(), silence(600)],
    faults: [
      ["stall", "an upstream that goes quiet"],
      ["error", "an error event, then close"],
      ["failed", "a failed transcription"],
    ],
  });

  test("a failure after a delivered final is billed up to that final", async () => {
    const { key, tenantId } = await fundedAccount(server);
    fake.fault("drop");
    const c = connect(server.wsUrl(`/v1/stt?${ONLY_OPENAI}&silence_duration_ms=200`), bearer(key));
    await c.opened;
    const tone = new Int16Array(24000 * 0.3).map((_, i) => Math.round(8000 * Math.sin(i / 10))); // 300 ms, loud enough to be speech
    c.ws.send(new Uint8Array(tone.buffer));
    c.ws.send(silence(300));
    for (let i = 0; i < 100 && !c.rec.events.some((e) => e.type === "stt.transcript.final"); i++) await Bun.sleep(10);
    c.ws.send(silence(1000)); // past 1 s of audio the fake cuts the connection
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    const final = rec.events.find((e) => e.type === "stt.transcript.final")!;
    expect(final).toBeDefined();
    expect(await lastActivity(server, tenantId)).toMatchObject({ status: "failed", usageAmount: Math.ceil(final.audio_end_ms / 1000) });
    expect(await noSocketsLeft()).toBe(0);
  });
});

describe("the adapter's turn order", () => {
  test("transcripts completed out of order still come turn by turn: a later item's events wait for the earlier one", async () => {
    const script = [
      { type: "input_audio_buffer.speech_started", audio_start_ms: 100, item_id: "item_a" },
      { type: "input_audio_buffer.speech_stopped", audio_end_ms: 900, item_id: "item_a" },
      { type: "input_audio_buffer.committed", item_id: "item_a", previous_item_id: null },
      { type: "input_audio_buffer.speech_started", audio_start_ms: 1200, item_id: "item_b" },
      { type: "input_audio_buffer.speech_stopped", audio_end_ms: 1800, item_id: "item_b" },
      { type: "input_audio_buffer.committed", item_id: "item_b", previous_item_id: "item_a" },
      { type: "conversation.item.input_audio_transcription.completed", item_id: "item_b", content_index: 0, transcript: "Second." },
      { type: "some.future_event", item_id: "item_a" },
      { type: "conversation.item.input_audio_transcription.delta", item_id: "item_a", content_index: 0, delta: "First" },
      { type: "conversation.item.input_audio_transcription.completed", item_id: "item_a", content_index: 0, transcript: "First one." },
    ];
    const upstream = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req, srv) => (srv.upgrade(req) ? undefined : new Response("no", { status: 400 })),
      websocket: {
        message(ws, frame) {
          if (JSON.parse(String(frame)).type !== "session.update") return;
          ws.send(JSON.stringify({ type: "session.updated", session: {} }));
          for (const ev of script) ws.send(JSON.stringify(ev));
        },
      },
    });
    const adapter = new OpenAiStt({ baseUrl: `http://127.0.0.1:${upstream.port}/v1`, ...UPSTREAM_TIMEOUTS });
    const stream = await adapter.open!({ model: "gpt-4o-transcribe", audioFormat: "pcm_24000", channels: 1, interim: true, commitStrategy: "auto", options: {} });
    const events: string[] = [];
    const done = (async () => {
      for await (const ev of stream)
        events.push(ev.type === "signal" ? `${ev.signal}@${ev.atMs}` : ev.type === "transcript" ? `${ev.final ? "final" : "interim"}:${ev.text}@${ev.startMs}-${ev.endMs}` : `${ev.type}@${ev.atMs}`);
    })();
    for (let i = 0; i < 100 && events.length < 9; i++) await Bun.sleep(10);
    stream.end();
    await done;
    upstream.stop(true);
    expect(events).toEqual(["started@100", "end@900", "interim:First@100-900", "final:First one.@100-900", "committed@900", "started@1200", "end@1800", "final:Second.@1200-1800", "committed@1800"]);
  });
});
