import { describe, expect, test } from "bun:test";
import type { ServerWebSocket } from "bun";
import type { ConversationEvent } from "../src/realtime/conversation/conversation-events.ts";
import { OaiEvents } from "../src/surfaces/oai/realtime-events.ts";
import { oaiRealtimePort } from "../src/surfaces/oai/realtime-port.ts";
import { WsPort } from "../src/surfaces/ws-port.ts";
import { ANSWER_DONE_EVENTS, USER_TURN_EVENTS } from "./helpers/oai-realtime.ts";

// The conversation port of /oai/realtime fed the conversation's events in orders a live recognizer
// gives only sometimes: words heard before the turn detector said speech started.

function framed() {
  const sent: Record<string, any>[] = [];
  const raw = { readyState: 1, send: (frame: string) => sent.push(JSON.parse(frame)), close: () => {} } as unknown as ServerWebSocket<unknown>;
  return { sent, port: oaiRealtimePort(new OaiEvents(new WsPort(raw))) };
}

const answered: ConversationEvent[] = [
  { type: "speech", turnId: "turn_1", state: "started", atMs: 300 },
  { type: "transcript", turnId: "turn_1", final: true, text: "hello", startMs: 320 },
  { type: "speech", turnId: "turn_1", state: "stopped", atMs: 900 },
  { type: "turn_ended", turnId: "turn_1", text: "hello" },
  { type: "response_text", responseId: "resp_1", token: "Hi there.", last: true },
  { type: "response_audio_started", responseId: "resp_1", provider: "flite", model: "cmu/flite" },
  { type: "response_audio_done", responseId: "resp_1", characters: 9, audioMs: 800 },
];

describe("/oai/realtime conversation port", () => {
  test("a barge-in heard as words before the speech signal: speech_started first, then the truncation, and speech_started once", () => {
    const { sent, port } = framed();
    for (const ev of answered) port.event(ev);
    sent.length = 0;
    port.event({ type: "transcript", turnId: "turn_2", final: false, text: "wait", startMs: 1500 });
    port.event({ type: "response_interrupted", responseId: "resp_1", spokenText: "Hi", audioMs: 400 });
    port.event({ type: "speech", turnId: "turn_2", state: "started", atMs: 1480 });
    expect(sent).toEqual([
      { event_id: expect.any(String), type: "input_audio_buffer.speech_started", audio_start_ms: 1500, item_id: "item_turn_2" },
      { event_id: expect.any(String), type: "conversation.item.truncated", item_id: "item_resp_1", content_index: 0, audio_end_ms: 400 },
    ]);
  });

  test("final segments heard during the turn go out after its commit, as deltas adding up to the transcript", () => {
    const { sent, port } = framed();
    port.event({ type: "speech", turnId: "turn_1", state: "started", atMs: 300 });
    port.event({ type: "transcript", turnId: "turn_1", final: true, text: "thank you", startMs: 320 });
    port.event({ type: "transcript", turnId: "turn_1", final: true, text: "very much", startMs: 900 });
    expect(sent.map((e) => e.type)).toEqual(["input_audio_buffer.speech_started"]);
    port.event({ type: "speech", turnId: "turn_1", state: "stopped", atMs: 1500 });
    port.event({ type: "turn_ended", turnId: "turn_1", text: "thank you very much" });
    // Two final segments: two deltas.
    expect(sent.map((e) => e.type)).toEqual(USER_TURN_EVENTS.toSpliced(5, 0, "conversation.item.input_audio_transcription.delta"));
    expect(sent.filter((e) => e.type.endsWith(".delta")).map((e) => e.delta)).toEqual(["thank you", " very much"]);
  });

  test("an answer cut while it is made: its done events carry what the caller heard, the item incomplete, the response cancelled", () => {
    const { sent, port } = framed();
    for (const ev of answered.slice(0, 5)) port.event(ev);
    sent.length = 0;
    port.event({ type: "speech", turnId: "turn_2", state: "started", atMs: 1500 });
    port.event({ type: "response_interrupted", responseId: "resp_1", spokenText: "Hi", audioMs: 300 });
    const cut = { id: "item_resp_1", role: "assistant", status: "incomplete", content: [{ type: "output_audio", transcript: "Hi" }] };
    expect(sent.map((e) => e.type)).toEqual(["input_audio_buffer.speech_started", ...ANSWER_DONE_EVENTS]);
    expect(sent.at(-2)).toMatchObject({ previous_item_id: "item_turn_1", item: cut });
    expect(sent.at(-1)).toMatchObject({ response: { id: "resp_1", status: "cancelled", status_details: { reason: "turn_detected" }, output: [cut] } });
  });
});

describe("/oai/realtime items the client asks about", () => {
  test("a typed turn (conversation.item.create) is a user item of input_text after the one before, with no buffer or transcription events", () => {
    const { sent, port } = framed();
    for (const ev of answered) port.event(ev);
    sent.length = 0;
    port.event({ type: "turn_ended", turnId: "typed_1", text: "and on Sundays?", typed: true });
    const item = { id: "item_typed_1", type: "message", role: "user", status: "completed", content: [{ type: "input_text", text: "and on Sundays?" }] };
    expect(sent).toEqual([
      { event_id: expect.any(String), type: "conversation.item.added", previous_item_id: "item_resp_1", item: expect.objectContaining(item) },
      { event_id: expect.any(String), type: "conversation.item.done", previous_item_id: "item_resp_1", item: expect.objectContaining(item) },
    ]);
  });

  test("conversation.item.retrieve and .truncate: the item as it is, the truncation acknowledged; what names no answer is an error naming the parameter", () => {
    const { sent, port } = framed();
    for (const ev of answered) port.event(ev);
    sent.length = 0;
    port.items.retrieve({ type: "conversation.item.retrieve", item_id: "item_turn_1" });
    port.items.truncate({ type: "conversation.item.truncate", item_id: "item_resp_1", content_index: 0, audio_end_ms: 500 });
    port.items.truncate({ type: "conversation.item.truncate", event_id: "evt_user", item_id: "item_turn_1", content_index: 0, audio_end_ms: 500 });
    port.items.truncate({ type: "conversation.item.truncate", event_id: "evt_ms", item_id: "item_resp_1", content_index: 0, audio_end_ms: -1 });
    port.items.retrieve({ type: "conversation.item.retrieve", event_id: "evt_none", item_id: "item_nope" });
    expect(sent[0]).toMatchObject({ type: "conversation.item.retrieved", item: { id: "item_turn_1", role: "user", content: [{ type: "input_audio", transcript: "hello" }] } });
    expect(sent[1]).toMatchObject({ type: "conversation.item.truncated", item_id: "item_resp_1", content_index: 0, audio_end_ms: 500 });
    expect(sent.slice(2).map((e) => [e.type, e.error.param, e.error.event_id])).toEqual([
      ["error", "item_id", "evt_user"],
      ["error", "audio_end_ms", "evt_ms"],
      ["error", "item_id", "evt_none"],
    ]);
  });
});
