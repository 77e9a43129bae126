import { ApiError } from "../../errors.ts";
import type { ConversationEvent, ConversationPort } from "../../realtime/conversation/conversation-events.ts";
import { unreachable } from "../../util/unreachable.ts";
import { jsonAudioPort } from "../json-audio-port.ts";
import type { InputFormat } from "./realtime-audio.ts";
import type { OaiEvents } from "./realtime-events.ts";
import { assistantItem, Items, userItem } from "./realtime-items.ts";
import { HeardTurns } from "./realtime-turns.ts";

// A conversation as OpenAI's Realtime API (GA) frames it (upstreams sheet 2c; docs/compat-oai.md):
// the caller's turns as input audio buffer events, user items and their transcription
// (realtime-turns.ts), each answer as a response with its assistant item and audio content part,
// whose audio and transcript come as deltas, a barge-in as a cancelled response (or, once all its
// audio was sent, as its item truncated where the caller's playback was). An answer cut by a
// barge-in keeps, as its item's transcript, what the caller heard of it (what the application is told).

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

export function oaiRealtimePort(events: OaiEvents): ConversationPort & { items: Items } {
  const send = (event: Record<string, unknown> & { type: string }) => events.send(event);
  const items = new Items(events);
  const turns = new HeardTurns(events, items);
  /** The answer whose audio is going out, and each answer being made: its transcript so far. */
  let speaking = "";
  const transcripts = new Map<string, string>();
  const itemOf = (responseId: string) => `item_${responseId}`;
  const part = (responseId: string) => ({ response_id: responseId, item_id: itemOf(responseId), output_index: 0, content_index: 0 });

  const begin = (responseId: string) => {
    transcripts.set(responseId, "");
    send({ type: "response.created", response: { object: "realtime.response", id: responseId, status: "in_progress", output: [] } });
    const item = assistantItem(itemOf(responseId), "in_progress");
    send({ type: "response.output_item.added", response_id: responseId, output_index: 0, item });
    items.add(item);
    send({ type: "response.content_part.added", ...part(responseId), part: { type: "audio", transcript: "" } });
  };
  /** The answer is over: spoken to its end, or cut by a barge-in where the caller stopped hearing it. */
  const done = (responseId: string, heard?: string) => {
    const transcript = heard ?? transcripts.get(responseId) ?? "";
    transcripts.delete(responseId);
    const item = assistantItem(itemOf(responseId), heard === undefined ? "completed" : "incomplete", transcript);
    send({ type: "response.output_audio.done", ...part(responseId) });
    send({ type: "response.output_audio_transcript.done", ...part(responseId), transcript });
    send({ type: "response.content_part.done", ...part(responseId), part: { type: "audio", transcript } });
    send({ type: "response.output_item.done", response_id: responseId, output_index: 0, item });
    items.done(item);
    const cancelled = heard !== undefined;
    send({
      type: "response.done",
      response: {
        object: "realtime.response",
        id: responseId,
        status: cancelled ? "cancelled" : "completed",
        status_details: cancelled ? { type: "cancelled", reason: "turn_detected" } : null,
        output: [item],
      },
    });
  };

  const event = (ev: ConversationEvent): void => {
    switch (ev.type) {
      case "started": // session.created went out when the socket opened (realtime-route.ts)
        return;
      case "speech":
        return turns.speech(ev.turnId, ev.state, ev.atMs);
      case "transcript":
        // Words heard before the turn detector spoke (a barge-in may follow): OpenAI's clients learn of speech from speech_started first.
        if (!turns.started(ev.turnId)) turns.speech(ev.turnId, "started", ev.startMs);
        if (ev.final) turns.heard(ev.turnId, ev.text);
        return;
      case "turn_ended":
        if (ev.typed) return items.add(userItem(`item_${ev.turnId}`, { type: "input_text", text: ev.text }));
        return turns.committed(ev.turnId, ev.text);
      case "response_text":
        if (!transcripts.has(ev.responseId)) begin(ev.responseId);
        transcripts.set(ev.responseId, transcripts.get(ev.responseId) + ev.token);
        if (ev.token) send({ type: "response.output_audio_transcript.delta", ...part(ev.responseId), delta: ev.token });
        return;
      case "response_audio_started":
        speaking = ev.responseId;
        return;
      case "response_audio_done":
        return done(ev.responseId);
      case "response_interrupted": {
        if (transcripts.has(ev.responseId)) return done(ev.responseId, ev.spokenText);
        // A response whose audio was all sent is done already; the client still playing it hears where the router cut it.
        const item = items.get(itemOf(ev.responseId));
        if (item) items.replace(assistantItem(item.id, "incomplete", ev.spokenText));
        return send({ type: "conversation.item.truncated", item_id: itemOf(ev.responseId), content_index: 0, audio_end_ms: ev.audioMs });
      }
      case "provider_switched": // OpenAI's Realtime API has no such event: the transcripts and the answer's audio just go on
      case "language_switched": // nor this one (its applications cannot switch languages)
      case "send_digits": // never told: the conversation has no telephone line
        return;
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

  const port = jsonAudioPort(events.port, event, (delta) => ({ event_id: events.nextId(), type: "response.output_audio.delta", ...part(speaking), delta }));
  return { ...port, items };
}
