import { ApiError } from "../../errors.ts";
import type { ConversationEvent, ConversationPort } from "../../realtime/conversation/conversation-events.ts";
import { unreachable } from "../../util/unreachable.ts";
import { jsonAudioPort } from "../json-audio-port.ts";
import type { InputFormat } from "./realtime-audio.ts";
import type { OaiEvents } from "./realtime-events.ts";

// A conversation as OpenAI's Realtime API (GA) frames it (upstreams sheet 2c; docs/compat-oai.md):
// the caller's turns as input audio buffer and transcription events, each answer as a response
// whose audio and transcript come as deltas, a barge-in as a cancelled response (or, once all its
// audio was sent, as its item truncated where the caller's playback was).

/** How the caller is heard, as the session object tells it. */
export interface HeardAs {
  format: InputFormat;
  /** Turns end only on `input_audio_buffer.commit` (`turn_detection: null`). */
  manualCommits: boolean;
}

/** The session object `session.created` and `session.updated` carry. */
export function sessionObject(id: string | undefined, profileId: string, heard: HeardAs) {
  return {
    type: "realtime",
    object: "realtime.session",
    ...(id ? { id } : {}),
    model: profileId,
    output_modalities: ["audio"],
    audio: {
      input: {
        format: heard.format,
        transcription: null,
        noise_reduction: null,
        turn_detection: heard.manualCommits ? null : { type: "server_vad", create_response: true, interrupt_response: true },
      },
      output: { format: { type: "audio/pcm", rate: 24000 } },
    },
  };
}

export function oaiRealtimePort(events: OaiEvents): ConversationPort {
  const send = (event: Record<string, unknown> & { type: string }) => events.send(event);
  const itemOf = (turnId: string) => `item_${turnId}`;
  /** The turns whose final segments have begun to go out as deltas (which only ever add, so interims are not sent). */
  const heard = new Set<string>();
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
        const text = ev.text.trim();
        if (!ev.final || !text) return;
        const delta = heard.has(ev.turnId) ? ` ${text}` : text;
        heard.add(ev.turnId);
        return send({ type: "conversation.item.input_audio_transcription.delta", item_id: itemOf(ev.turnId), content_index: 0, delta });
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
        // A response whose audio was all sent is done already; the client still playing it hears where the router cut it.
        if (!transcripts.has(ev.responseId)) return send({ type: "conversation.item.truncated", item_id: `item_${ev.responseId}`, content_index: 0, audio_end_ms: ev.audioMs });
        return done(ev.responseId, "cancelled");
      case "vad": // OpenAI's Realtime API has no speech probability event (and /oai does not ask for one)
        return;
      case "error":
        return events.error(new ApiError(ev.code, ev.message));
      case "ended":
        return;
      default:
        return unreachable(ev, "conversation event");
    }
  };

  return jsonAudioPort(events.port, event, (delta) => ({ event_id: events.nextId(), type: "response.output_audio.delta", ...part(speaking), delta }));
}
