import { describe, expect, test } from "bun:test";
import type { ServerWebSocket } from "bun";
import { createLogger } from "../src/log.ts";
import type { AppSocket } from "../src/realtime/app-socket.ts";
import type { ConversationEvent } from "../src/realtime/conversation/conversation-events.ts";
import { Conversation } from "../src/realtime/conversation/conversation.ts";
import { Hearing, type OpenStt } from "../src/realtime/conversation/hearing.ts";
import { SpokenResponse } from "../src/realtime/conversation/spoken-response.ts";
import type { TtsPort } from "../src/sessions/tts-events.ts";
import { elConversationPort } from "../src/surfaces/el/conversation-port.ts";
import { nativeRealtimePort } from "../src/surfaces/native/realtime-wire.ts";
import { OaiEvents } from "../src/surfaces/oai/realtime-events.ts";
import { oaiRealtimePort } from "../src/surfaces/oai/realtime-port.ts";
import { WsPort } from "../src/surfaces/ws-port.ts";
import type { SttInputConfig, SttPort, SttSessionEvent } from "../src/sessions/stt-events.ts";

// When a conversation tells its client that a stage switched provider (end to end in
// test/realtime-conversation.test.ts): the recognizer not before the conversation started
// (`started` names the provider that serves by then), nor for a session a language switch
// replaced; an answer once per failover after its audio began, naming the provider that was speaking.

const INPUT: SttInputConfig = {
  audioFormat: "pcm_16000",
  sampleRate: 16000,
  channels: 1,
  language: null,
  interimResults: true,
  commitStrategy: "auto",
  turnDetection: "acoustic",
  turnDetector: "router_vad",
};
const started = (provider: string): SttSessionEvent => ({ type: "started", sessionId: "stt_1", provider, model: `${provider}/model`, input: INPUT });
const switched = (provider: string, previous: string): SttSessionEvent => ({ type: "switched", provider, model: `${provider}/model`, input: INPUT, previous, reason: `${previous} failed`, fromMs: 0 });

/** STT sessions that do what the test tells their ports. */
function recognizers() {
  const ports: SttPort[] = [];
  const open: OpenStt = (port) => {
    ports.push(port);
    return { audio() {}, command() {}, abort() {} };
  };
  return { ports, open };
}

describe("a conversation's recognizer switching provider", () => {
  test("before the application connected: `started` names the provider now serving and no switch is told; after it, one `provider_switched`", async () => {
    const stt = recognizers();
    const app = Promise.withResolvers<AppSocket>();
    const events: ConversationEvent[] = [];
    new Conversation(
      {
        id: "rt_1",
        profileId: "rp_1",
        input: { audioFormat: "pcm_16000", sampleRate: 16000 },
        output: { encoding: "pcm_s16le", sampleRate: 16000 },
        partialPrompts: false,
        openStt: stt.open,
        openTts: () => ({ command() {}, interrupt() {}, abort() {} }),
        speakIn: async () => "",
        openApp: () => app.promise,
        answerQuietMs: 1000,
        idleTimeoutMs: 0,
      },
      { port: { event: (ev) => events.push(ev), sendAudio() {}, close() {} }, log: createLogger("silent") },
    );
    const [port] = stt.ports;
    port!.event(started("first"));
    port!.event(switched("second", "first"));
    app.resolve({ close() {}, prompt() {} } as unknown as AppSocket);
    await app.promise;
    await Bun.sleep(0);
    expect(events).toEqual([expect.objectContaining({ type: "started", stt: { provider: "second", model: "second/model" } })]);
    port!.event(switched("third", "second"));
    expect(events.slice(1)).toEqual([{ type: "provider_switched", stage: "stt", provider: "third", model: "third/model", previous: "second", reason: "second failed" }]);
  });

  test("a session a language switch replaced fails over while it finishes its turn: not told; the serving session's switch is", async () => {
    const stt = recognizers();
    const heard: SttSessionEvent[] = [];
    const hearing = new Hearing(stt.open, { event: (ev) => heard.push(ev), closed() {} });
    stt.ports[0]!.event(started("first"));
    const switching = hearing.switchTo({ language: "de" });
    stt.ports[1]!.event(started("german"));
    await switching;
    stt.ports[0]!.event(switched("spare", "first"));
    stt.ports[1]!.event(switched("spare", "german"));
    expect(heard.filter((ev) => ev.type === "switched")).toEqual([expect.objectContaining({ provider: "spare", previous: "german" })]);
  });
});

describe("an answer's speech switching provider", () => {
  /** A response whose TTS session's events the test sends; what the conversation is told of it. */
  function answer() {
    let port: TtsPort | undefined;
    const told: ConversationEvent[] = [];
    const response = new SpokenResponse(
      "resp_1",
      (_id, p) => {
        port = p;
        return { command() {}, interrupt() {}, abort() {} };
      },
      { encoding: "pcm_s16le", sampleRate: 16000 },
      1000,
      { event: (ev) => told.push(ev), sendAudio() {}, ended() {} },
    );
    const status = (provider: string, status: "connecting" | "connected" | "failed", extra: { voice?: string; reason?: string } = {}) =>
      port!.event({ type: "provider_status", provider, model: `${provider}/model`, status, ...extra });
    const audioStarted = () => port!.event({ type: "audio_started", provider: "first", model: "first/model", format: { encoding: "pcm_s16le", sampleRate: 16000, channels: 1 } });
    return { response, told, status, audioStarted, switches: () => told.filter((ev) => ev.type === "provider_switched") };
  }

  test("before its audio: nothing; after it, one switch naming the provider that was speaking, though a next candidate failed too", () => {
    const { status, audioStarted, switches } = answer();
    status("refusing", "failed", { reason: "connection refused" });
    status("first", "connected", { voice: "alloy" });
    audioStarted();
    expect(switches()).toEqual([]);
    status("first", "failed", { reason: "upstream returned 500" });
    status("hanging", "connecting");
    status("hanging", "failed", { reason: "hanging did not accept the session in time" });
    status("spare", "connecting", { voice: "rms" });
    status("spare", "connected", { voice: "rms" });
    expect(switches()).toEqual([
      { type: "provider_switched", stage: "tts", responseId: "resp_1", provider: "spare", model: "spare/model", voice: "rms", previous: "first", reason: "upstream returned 500" },
    ]);
  });

  test("interrupted by the caller: a failover of what is still being stopped is not told", () => {
    const { response, status, audioStarted, switches } = answer();
    audioStarted();
    response.interrupt();
    status("first", "failed", { reason: "upstream returned 500" });
    status("spare", "connected", { voice: "rms" });
    expect(switches()).toEqual([]);
  });
});

describe("the surfaces", () => {
  const SWITCHES: ConversationEvent[] = [
    { type: "provider_switched", stage: "stt", provider: "pocketsphinx", model: "cmu/pocketsphinx-en-us", previous: "deepgram", reason: "upstream returned 500" },
    { type: "provider_switched", stage: "tts", responseId: "resp_1", provider: "flite", model: "cmu/flite", voice: "slt", previous: "cartesia", reason: "upstream returned 500" },
  ];
  /** The frames a surface's port sends for the switches. */
  function framesOf(port: (ws: WsPort) => { event(ev: ConversationEvent): void }) {
    const sent: Record<string, any>[] = [];
    const raw = { readyState: 1, send: (frame: string) => sent.push(JSON.parse(frame)), close() {} };
    const made = port(new WsPort(raw as unknown as ServerWebSocket<unknown>));
    for (const ev of SWITCHES) made.event(ev);
    return sent;
  }

  test("/v1/realtime frames each switch; /el conversations and /oai/realtime, whose SDKs know no such event, send nothing", () => {
    expect(framesOf((ws) => nativeRealtimePort(ws, "rt_1"))).toEqual([
      {
        type: "realtime.provider.switched",
        event_id: "rt_1.1",
        seq: 1,
        stage: "stt",
        provider: "pocketsphinx",
        model: "cmu/pocketsphinx-en-us",
        previous_provider: "deepgram",
        reason: "upstream returned 500",
      },
      {
        type: "realtime.provider.switched",
        event_id: "rt_1.2",
        seq: 2,
        stage: "tts",
        response_id: "resp_1",
        provider: "flite",
        model: "cmu/flite",
        voice: "slt",
        previous_provider: "cartesia",
        reason: "upstream returned 500",
      },
    ]);
    expect(framesOf((ws) => elConversationPort(ws, "pcm_16000"))).toEqual([]);
    expect(framesOf((ws) => oaiRealtimePort(new OaiEvents(ws)))).toEqual([]);
  });
});
