import type { ConversationEvent, ConversationPort } from "../../sessions/realtime/conversation-events.ts";
import { base64Of } from "../../audio/bytes.ts";
import { unreachable } from "../../util/unreachable.ts";
import type { WsPort } from "../ws-port.ts";

// A conversation as OpenAI's Realtime API (GA) frames it (upstreams sheet 2c; docs/compat-oai.md):
// the caller's turns as input audio buffer and transcription events, each answer as a response
// whose audio and transcript come as deltas, a barge-in as a cancelled response.

/** The session object `session.created` and `session.updated` carry. */
export function sessionObject(id: string, profileId: string) {
  return {
    type: "realtime",
    object: "realtime.session",
    id,
    model: profileId,
    output_modalities: ["audio"],
    audio: {
      input: { format: { type: "audio/pcm", rate: 24000 }, transcription: null, noise_reduction: null, turn_detection: { type: "server_vad", create_response: true, interrupt_response: true } },
      output: { format: { type: "audio/pcm", rate: 24000 } },
    },
  };
}

export function oaiRealtimePort(port: WsPort): ConversationPort {
  let events = 0;
  const send = (event: Record<string, unknown>) => port.sendEvent({ event_id: `event_${++events}`, ...event });
  const itemOf = (turnId: string) => `item_${turnId}`;
  /** What each turn's interim transcripts have said, so that deltas carry only what is new. */
  const heard = new Map<string, string>();
  /** The answer whose audio is going out, and each answer's transcript so far. */
  let speaking = "";
  const transcripts = new Map<string, string>();
  let lastItem: string | null = null;
  const part = (responseId: string) => ({ response_id: responseId, item_id: `item_${responseId}`, output_index: 0, content_index: 0 });
  const done = (responseId: string, status: "completed" | "cancelled") => {
    const transcript = transcripts.get(responseId) ?? "";
    if (status === "completed") {
      send({ type: "response.output_audio.done", ...part(responseId) });
      send({ type: "response.output_audio_transcript.done", ...part(responseId), transcript });
    }
    send({
      type: "response.done",
      response: {
        object: "realtime.response",
        id: responseId,
        status,
        status_details: status === "cancelled" ? { type: "cancelled", reason: "turn_detected" } : null,
        output: [
          {
            id: `item_${responseId}`,
            object: "realtime.item",
            type: "message",
            role: "assistant",
            status: status === "completed" ? "completed" : "incomplete",
            content: [{ type: "output_audio", transcript }],
          },
        ],
      },
    });
    transcripts.delete(responseId);
  };

  const event = (ev: ConversationEvent): void => {
    switch (ev.type) {
      case "started": // session.created went out when the socket opened (realtime-route.ts)
        return;
      case "speech":
        if (ev.state === "started") return send({ type: "input_audio_buffer.speech_started", audio_start_ms: ev.atMs, item_id: itemOf(ev.turnId) });
        return send({ type: "input_audio_buffer.speech_stopped", audio_end_ms: ev.atMs, item_id: itemOf(ev.turnId) });
      case "transcript": {
        if (ev.final) return;
        const before = heard.get(ev.turnId) ?? "";
        heard.set(ev.turnId, ev.text);
        const delta = ev.text.startsWith(before) ? ev.text.slice(before.length) : ev.text;
        if (delta) send({ type: "conversation.item.input_audio_transcription.delta", item_id: itemOf(ev.turnId), content_index: 0, delta });
        return;
      }
      case "turn_ended": {
        const item = itemOf(ev.turnId);
        heard.delete(ev.turnId);
        send({ type: "input_audio_buffer.committed", item_id: item, previous_item_id: lastItem });
        lastItem = item;
        return send({ type: "conversation.item.input_audio_transcription.completed", item_id: item, content_index: 0, transcript: ev.text });
      }
      case "response_text": {
        if (!transcripts.has(ev.responseId)) {
          transcripts.set(ev.responseId, "");
          send({ type: "response.created", response: { object: "realtime.response", id: ev.responseId, status: "in_progress", output: [] } });
        }
        transcripts.set(ev.responseId, transcripts.get(ev.responseId) + ev.token);
        if (ev.token) send({ type: "response.output_audio_transcript.delta", ...part(ev.responseId), delta: ev.token });
        return;
      }
      case "response_audio_started":
        speaking = ev.responseId;
        return;
      case "response_audio_done":
        return done(ev.responseId, "completed");
      case "response_interrupted":
        return done(ev.responseId, "cancelled");
      case "vad": // OpenAI's Realtime API has no speech probability event (and /oai does not ask for one)
        return;
      case "error":
        return send({ type: "error", error: { type: ev.code === "insufficient_balance" ? "insufficient_quota" : "server_error", code: ev.code, message: ev.message, param: null, event_id: null } });
      case "ended":
        return;
      default:
        return unreachable(ev, "conversation event");
    }
  };

  return {
    event,
    sendAudio: (chunk) =>
      port.sendAudio(
        JSON.stringify({
          event_id: `event_${++events}`,
          type: "response.output_audio.delta",
          ...part(speaking),
          delta: base64Of(chunk),
        }),
      ),
    close: (code, reason) => port.close(code, reason),
  };
}
