import { afterAll, describe, expect, test } from "bun:test";
import { createLogger } from "../src/log.ts";
import { conversationRelayWire } from "../src/realtime/app-messages.ts";
import { AppSocket } from "../src/realtime/app-socket.ts";
import type { ConversationEvent } from "../src/realtime/conversation/conversation-events.ts";
import { Conversation } from "../src/realtime/conversation/conversation.ts";
import type { SttPort } from "../src/sessions/stt-events.ts";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";

// Keys the caller presses, and digits the application sends, for a surface that carries a telephone call (`/v1/realtime` has no
// keypad): the application hears each as ConversationRelay's `dtmf`, and an answer stops for a key
// or for speech as its tokens' `interruptible` allows ("dtmf", "speech", "any", "none"). The
// application is the ConversationRelay fake on a real socket; the recognizer and the answer's
// speech are stand-ins (the answer is being generated, so it is playing).

const app = startFakeApp();
afterAll(() => app.stop());

async function call(mode: string, path = `/keypad/${mode}`) {
  const events: ConversationEvent[] = [];
  let stt: SttPort | undefined;
  const sessionId = `rt_${mode}`;
  const conversation = new Conversation(
    {
      id: sessionId,
      profileId: "rp_1",
      input: { audioFormat: "pcm_16000", sampleRate: 16000 },
      output: { encoding: "pcm_s16le", sampleRate: 16000 },
      partialPrompts: false,
      phoneLine: true,
      openStt: (port) => {
        stt = port;
        return { audio() {}, command() {}, abort() {} };
      },
      openTts: () => ({ command() {}, interrupt() {}, abort() {} }),
      speakIn: async () => "",
      openApp: (onSignal) =>
        AppSocket.open({ url: app.url(path) }, conversationRelayWire({ sessionId, profileId: "rp_1" }), { allowPrivate: true, connectTimeoutMs: 2000, replyTimeoutMs: 0 }, onSignal),
      answerQuietMs: 5000,
      idleTimeoutMs: 0,
    },
    { port: { event: (ev) => events.push(ev), sendAudio() {}, close() {} }, log: createLogger("silent") },
  );
  stt!.event({
    type: "started",
    sessionId: "stt_1",
    provider: "p",
    model: "p/m",
    input: { audioFormat: "pcm_16000", sampleRate: 16000, channels: 1, language: null, interimResults: true, commitStrategy: "auto", turnDetection: "acoustic", turnDetector: "router_vad" },
  });
  for (let i = 0; i < 200 && !events.some((e) => e.type === "response_text" || e.type === "send_digits"); i++) await Bun.sleep(5);
  const received = () => app.connections.find((c) => c.received[0]?.sessionId === sessionId)!.received;
  const speaks = () => stt!.event({ type: "signal", origin: "router", signal: "started", atMs: 500, turnId: "turn_1" });
  const interrupted = () => events.filter((e) => e.type === "response_interrupted");
  const heard = async (count: number) => {
    for (let i = 0; i < 200 && received().length < count; i++) await Bun.sleep(5);
    return received().slice(1);
  };
  return { conversation, events, speaks, interrupted, heard };
}

describe("keys the caller presses", () => {
  test('interruptible "dtmf": speech does not stop the answer, a key does; the application hears the interrupt, then the key', async () => {
    const c = await call("dtmf");
    c.speaks();
    expect(c.interrupted()).toEqual([]);
    c.conversation.dtmf("1");
    expect(c.interrupted()).toEqual([expect.objectContaining({ responseId: "resp_1" })]);
    expect(await c.heard(3)).toEqual([
      { type: "interrupt", utteranceUntilInterrupt: "", durationUntilInterruptMs: 0 },
      { type: "dtmf", digit: "1" },
    ]);
    c.conversation.abort();
  });

  test('interruptible "speech": a key does not stop the answer (the application still hears it), speech does', async () => {
    const c = await call("speech");
    c.conversation.dtmf("#");
    expect(c.interrupted()).toEqual([]);
    expect(await c.heard(2)).toEqual([{ type: "dtmf", digit: "#" }]);
    c.speaks();
    expect(c.interrupted()).toHaveLength(1);
    c.conversation.abort();
  });

  test('interruptible "none": neither stops it; "any": a key does', async () => {
    const none = await call("none");
    none.conversation.dtmf("2");
    none.speaks();
    expect(none.interrupted()).toEqual([]);
    expect(await none.heard(2)).toEqual([{ type: "dtmf", digit: "2" }]);
    none.conversation.abort();
    const any = await call("any");
    any.conversation.dtmf("3");
    expect(any.interrupted()).toHaveLength(1);
    any.conversation.abort();
  });
});

describe("digits the application sends", () => {
  test("on a conversation with a telephone line, sendDigits is the send_digits event the surface plays; nothing is refused", async () => {
    const c = await call("digits", "/dialer");
    expect(c.events.filter((e) => e.type === "send_digits")).toEqual([{ type: "send_digits", digits: "1234#" }]);
    await Bun.sleep(20);
    expect(await c.heard(1)).toEqual([]);
    c.conversation.abort();
  });
});
