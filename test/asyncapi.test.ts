import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ServerWebSocket } from "bun";
import type { SttWireEvent } from "../src/surfaces/native/stt-wire.ts";
import { nativeSttPort } from "../src/surfaces/native/stt-wire.ts";
import { nativeRealtimePort, type RealtimeWireEvent } from "../src/surfaces/native/realtime-wire.ts";
import { ttsWireEvent } from "../src/surfaces/native/tts-wire.ts";
import { WsPort } from "../src/surfaces/ws-port.ts";
import type { TtsSessionEvent } from "../src/sessions/tts-events.ts";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { documentedFrames, type Frame } from "./helpers/documented-frame.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { lint, problemLines } from "./helpers/redocly.ts";
import { conversationStarted } from "./helpers/realtime.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { concat, frames, silence, speak } from "./helpers/speech.ts";
import { bearer, type Client, connect } from "./helpers/ws-client.ts";

// The AsyncAPI document at /asyncapi.json stays true: it passes redocly lint, its channels are the
// OpenAPI document's WebSocket handshakes, every event the native channels' wire functions make
// (one sample of each kind, the types force one) is a documented message and every documented
// message is made, and real sessions on /v1/tts, /v1/stt and /v1/realtime, driven by the client
// frames the document gives as examples, send nothing it does not describe.

type Json = Record<string, any>;

const app = startFakeApp();
let server: TestServer;
let doc: Json;
let check: ReturnType<typeof documentedFrames>;
beforeAll(async () => {
  server = await startTestServer();
  doc = (await (await fetch(`${server.url}/asyncapi.json`)).json()) as Json;
  check = documentedFrames(doc);
});
afterAll(async () => {
  await server.stop(0);
  app.stop();
});

/** The client frames the document gives as examples for a channel, in its order. */
const examples = (channel: string) =>
  Object.entries(doc.channels[channel].messages as Json)
    .filter(([key]) => key.startsWith("client."))
    .flatMap(([, m]) => (m.examples ?? []).map((e: { payload: Json }) => e.payload));

/** Every frame a recorded client received, in order (events and audio). */
function received(c: Client): Frame[] {
  const events = [...c.rec.events];
  const audio = [...c.rec.audio];
  return c.rec.order.map((kind) => (kind === "audio" ? audio.shift()! : events.shift()!));
}

/** A socket that keeps what is sent on it, as JSON (the wire functions' output). */
function recordingSocket() {
  const sent: Json[] = [];
  const send = (data: string) => {
    sent.push(JSON.parse(data));
    return data.length; // Bun's "sent this many bytes"
  };
  const raw = { readyState: 1, send, close() {}, cork: (sends: (ws: unknown) => void) => sends(raw) } as unknown as ServerWebSocket<unknown>;
  return { raw, sent };
}

const TTS_SAMPLES: { [K in TtsSessionEvent["type"]]: Extract<TtsSessionEvent, { type: K }>[] } = {
  ready: [{ type: "ready", sessionId: "tts_1" }],
  provider_status: [
    { type: "provider_status", provider: "flite", model: "cmu/flite", status: "connecting" },
    { type: "provider_status", provider: "flite", model: "cmu/flite", status: "failed", reason: "refused" },
  ],
  audio_started: [{ type: "audio_started", provider: "flite", model: "cmu/flite", format: { encoding: "pcm_s16le", sampleRate: 16000, channels: 1 } }],
  flushed: [{ type: "flushed" }],
  alignment: [
    {
      type: "alignment",
      alignment: { chars: ["H", "i"], starts: [0.164, 0.23], ends: [0.23, 0.31] },
      normalized: { chars: ["H", "i"], starts: [0.164, 0.23], ends: [0.23, 0.31] },
    },
  ],
  error: [
    { type: "error", code: "upstream_error", message: "the provider failed" },
    { type: "error", code: "invalid_request", message: "no such voice", param: "voice" },
  ],
  ended: [
    { type: "ended", sessionId: "tts_1", provider: "flite", model: "cmu/flite", characters: 12, audioBytes: 32000 },
    { type: "ended", sessionId: "tts_1", characters: 0, audioBytes: 0 },
  ],
};

const STT_SAMPLES: { [K in SttWireEvent["type"]]: Extract<SttWireEvent, { type: K }>[] } = {
  started: [
    {
      type: "started",
      sessionId: "stt_1",
      provider: "pocketsphinx",
      model: "cmu/pocketsphinx-en-us",
      input: { audioFormat: "pcm_16000", sampleRate: 16000, channels: 1, language: null, interimResults: true, commitStrategy: "auto", turnDetection: "acoustic", turnDetector: "router_vad" },
    },
  ],
  switched: [
    {
      type: "switched",
      provider: "pocketsphinx",
      model: "cmu/pocketsphinx-en-us",
      previous: "deepgram",
      reason: "deepgram closed the stream: 1006",
      fromMs: 3720,
      input: { audioFormat: "pcm_16000", sampleRate: 16000, channels: 1, language: null, interimResults: true, commitStrategy: "auto", turnDetection: "acoustic", turnDetector: "router_vad" },
    },
  ],
  signal: [
    { type: "signal", origin: "router", signal: "started", atMs: 320, turnId: "turn_1" },
    { type: "signal", origin: "provider", signal: "eager_end", scope: "turn", atMs: 1200, turnId: "turn_1" },
  ],
  transcript: [
    { type: "transcript", final: false, text: "thank you", startMs: 300, endMs: 900, turnId: "turn_1" },
    { type: "transcript", final: true, text: "thank you very much", startMs: 300, endMs: 1500, turnId: "turn_1" },
  ],
  committed: [{ type: "committed", origin: "client", atMs: 1600, turnId: "turn_1" }],
  cleared: [{ type: "cleared", atMs: 1700, turnId: "turn_2" }],
  error: [{ type: "error", code: "upstream_error", message: "the provider failed" }],
  ended: [
    { type: "ended", sessionId: "stt_1", provider: "pocketsphinx", model: "cmu/pocketsphinx-en-us", audioMs: 1700, billedSeconds: 2 },
    { type: "ended", sessionId: "stt_1", audioMs: 0, billedSeconds: 0 },
  ],
};

const REALTIME_SAMPLES: { [K in RealtimeWireEvent["type"]]: Extract<RealtimeWireEvent, { type: K }>[] } = {
  started: [conversationStarted("rt_1", "rp_1")],
  speech: [
    { type: "speech", turnId: "turn_1", state: "started", atMs: 300 },
    { type: "speech", turnId: "turn_1", state: "stopped", atMs: 1500 },
  ],
  transcript: [
    { type: "transcript", turnId: "turn_1", final: false, text: "thank", startMs: 300 },
    { type: "transcript", turnId: "turn_1", final: true, text: "thank you", startMs: 300 },
  ],
  turn_ended: [{ type: "turn_ended", turnId: "turn_1", text: "thank you" }],
  response_text: [{ type: "response_text", responseId: "resp_1", token: "You", last: false }],
  response_audio_started: [
    { type: "response_audio_started", responseId: "resp_1", provider: "flite", model: "cmu/flite" },
    { type: "response_audio_started", responseId: "resp_2", provider: "espeak-ng", model: "espeak-ng/espeak-ng", voice: "en-gb" },
  ],
  response_audio_done: [{ type: "response_audio_done", responseId: "resp_1", characters: 3, audioMs: 400 }],
  response_interrupted: [{ type: "response_interrupted", responseId: "resp_1", spokenText: "You", audioMs: 200 }],
  provider_switched: [
    { type: "provider_switched", stage: "stt", provider: "pocketsphinx", model: "cmu/pocketsphinx-en-us", previous: "deepgram", reason: "upstream returned 500" },
    { type: "provider_switched", stage: "tts", responseId: "resp_1", provider: "flite", model: "cmu/flite", voice: "slt", previous: "cartesia", reason: "upstream returned 500" },
  ],
  language_switched: [
    { type: "language_switched", stage: "stt", language: "en-GB" },
    { type: "language_switched", stage: "tts", language: "de-DE", voice: "de-DE" },
  ],
  error: [{ type: "error", code: "application_unavailable", message: "the application cannot be reached" }],
  ended: [
    { type: "ended", sessionId: "rt_1", reason: "client_closed", usage: { sttSeconds: 2, ttsCharacters: 3 } },
    { type: "ended", sessionId: "rt_1", reason: "application_ended", handoffData: '{"to":"agent"}', usage: { sttSeconds: 2, ttsCharacters: 3 } },
  ],
};

test("the document passes redocly lint with no error and no warning", async () => {
  expect(problemLines(await lint(doc))).toEqual([]);
}, 30_000);

test("its channels are the OpenAPI document's WebSocket handshakes, on the server the client reached", async () => {
  const openApi = (await (await fetch(`${server.url}/openapi.json`)).json()) as Json;
  const handshakes = Object.entries(openApi.paths as Json)
    .filter(([, item]) => item.get?.["x-websocket"])
    .map(([path]) => path);
  expect(Object.values(doc.channels as Json).map((c) => c.address)).toEqual(handshakes);
  expect(handshakes).toHaveLength(8);
  expect(doc.servers.voxroute).toMatchObject({ host: new URL(server.url).host, protocol: "ws" });
  // The interface's versions: the channel description 1.0.0, its WebSocket binding 0.1.0.
  expect(doc.info.version).toBe("1.0.0");
  expect(Object.values(doc.channels as Json).map((c) => c.bindings.ws.bindingVersion)).toEqual(Array(8).fill("0.1.0"));
});

test("every event the native channels' wire functions make is documented, and every documented event is made", async () => {
  const found: string[] = [];
  for (const event of Object.values(TTS_SAMPLES).flat()) found.push(...check.mismatches("tts", "server", ttsWireEvent(event)));
  const stt = recordingSocket();
  const sttPort = nativeSttPort(stt.raw, "stt_1");
  for (const event of Object.values(STT_SAMPLES).flat()) sttPort.event(event);
  await new Promise((turnEnded) => setImmediate(turnEnded)); // a turn's events after its first go out corked at its end
  for (const frame of stt.sent) found.push(...check.mismatches("stt", "server", frame));
  const realtime = recordingSocket();
  const realtimePort = nativeRealtimePort(new WsPort(realtime.raw), "rt_1");
  for (const event of Object.values(REALTIME_SAMPLES).flat()) realtimePort.event(event);
  for (const frame of realtime.sent) found.push(...check.mismatches("realtime", "server", frame));
  expect(found).toEqual([]);
  const unmade = (channel: string) => check.unseen(channel, "server").filter((key) => doc.channels[channel].messages[key].contentType === "application/json");
  expect(["tts", "stt", "realtime"].flatMap(unmade)).toEqual([]);
});

test("a /v1/tts session driven by the document's client frames sends only what it describes", async () => {
  const c = connect(server.wsUrl("/v1/tts?model=flite&voice=slt&alignment=true"), bearer(server.key));
  const sent = examples("tts");
  expect(sent.map((f) => f.type)).toEqual(["text", "flush", "close"]);
  for (const frame of sent) c.send(frame);
  await c.closed;
  expect(c.rec.close).toEqual({ code: 1000, reason: "tts_complete" });
  const found = [...sent.flatMap((f) => check.mismatches("tts", "client", f)), ...received(c).flatMap((f) => check.mismatches("tts", "server", f))];
  expect(found).toEqual([]);
  expect(c.rec.audio.length).toBeGreaterThan(0);
  expect(c.rec.events.map((e) => e.type)).toEqual(expect.arrayContaining(["service.tts_session_ready", "service.tts_audio_started", "service.tts_alignment", "service.tts_flushed"]));
});

describe.skipIf(!localSttAvailable)("sessions on the embedded recognizer", () => {
  const caller = () => concat([silence(300), speak("Thank you very much for your help."), silence(900)]);

  test("a /v1/stt session driven by the document's client frames sends only what it describes", async () => {
    const c = connect(server.wsUrl("/v1/stt?model=pocketsphinx&audio_format=pcm_16000&commit_strategy=manual"), bearer(server.key));
    await c.opened;
    for (const frame of frames(caller())) c.ws.send(frame);
    const sent = examples("stt");
    expect(sent.map((f) => f.type)).toEqual(["stt.audio.commit", "stt.audio.clear", "stt.session.close"]);
    for (const frame of sent) c.send(frame);
    await c.closed;
    expect(c.rec.close).toEqual({ code: 1000, reason: "stt_complete" });
    const found = [...sent.flatMap((f) => check.mismatches("stt", "client", f)), ...received(c).flatMap((f) => check.mismatches("stt", "server", f))];
    expect(found).toEqual([]);
    expect(c.rec.events.map((e) => e.type)).toEqual(expect.arrayContaining(["stt.session.started", "stt.transcript.final", "stt.audio.committed", "stt.audio.cleared", "stt.session.ended"]));
  }, 30_000);

  test("a /v1/realtime conversation driven by the document's client frames sends only what it describes", async () => {
    const created = await fetch(`${server.url}/v1/realtime/profiles`, {
      method: "POST",
      headers: { ...bearer(server.key), "content-type": "application/json" },
      body: JSON.stringify({ name: "desk", pipeline: { stt: { model: "pocketsphinx" }, tts: { model: "flite", voice: "slt" }, upstream: { url: app.url("/echo") } } }),
    });
    const { id } = (await created.json()) as { id: string };
    const c = connect(server.wsUrl(`/v1/realtime?profile_id=${id}`), bearer(server.key));
    await c.opened;
    for (const frame of frames(caller())) {
      c.ws.send(frame);
      await Bun.sleep(20);
    }
    const [commit, close] = examples("realtime");
    expect([commit.type, close.type]).toEqual(["realtime.input_audio.commit", "realtime.session.close"]);
    c.send(commit);
    for (const end = Date.now() + 20_000; !c.rec.events.some((e) => e.type === "realtime.response.audio.done") && Date.now() < end; ) await Bun.sleep(20);
    c.send(close);
    await c.closed;
    expect(c.rec.close.code).toBe(1000);
    const found = [...[commit, close].flatMap((f) => check.mismatches("realtime", "client", f)), ...received(c).flatMap((f) => check.mismatches("realtime", "server", f))];
    expect(found).toEqual([]);
    expect(c.rec.events.map((e) => e.type)).toEqual(expect.arrayContaining(["realtime.session.started", "realtime.turn.ended", "realtime.response.audio.done", "realtime.session.ended"]));
  }, 40_000);
});

test("the check can fail: an undocumented event, a missing field and an extra one are reported", () => {
  expect(check.mismatches("tts", "server", { type: "service.tts_surprise" })).toEqual([expect.stringContaining("no message for")]);
  expect(check.mismatches("tts", "server", { type: "service.tts_session_ready" })).toEqual([expect.stringContaining("must have required property 'session_id'")]);
  expect(check.mismatches("tts", "server", { type: "service.tts_flushed", extra: 1 })).toEqual([expect.stringContaining("must NOT have additional properties")]);
  expect(check.mismatches("stt", "server", new Uint8Array(2))).toEqual([expect.stringContaining("no message for")]);
});
