import type { ConversationEvent, ConversationPort } from "../../realtime/conversation/conversation-events.ts";
import { outputFormatName } from "../../realtime/output-formats.ts";
import { unreachable } from "../../util/unreachable.ts";
import type { WsPort } from "../ws-port.ts";
import { errorEvent, eventNumbering, type WireEvent } from "./numbered-events.ts";

// The `/v1/realtime` frames (docs/realtime.md#the-v1realtime-socket): every event a JSON text frame
// with `type`, a gapless `seq` and a stable `event_id`; audio as binary frames.

/** The events `/v1/realtime` frames: all but the router VAD's scores, which its conversations do not ask for (`vadScores`), and digits for a telephone line it does not have. */
export type RealtimeWireEvent = Exclude<ConversationEvent, { type: "vad" | "send_digits" }>;

export function realtimeWireEvent(event: RealtimeWireEvent): WireEvent {
  if (event.type === "error") return errorEvent("realtime", event);
  switch (event.type) {
    case "started":
      return {
        type: "realtime.session.started",
        session_id: event.sessionId,
        profile_id: event.profileId,
        input_audio_format: event.input.audioFormat,
        output_audio_format: outputFormatName(event.output),
        stt: event.stt,
      };
    case "speech":
      return { type: event.state === "started" ? "realtime.input_audio.speech_started" : "realtime.input_audio.speech_stopped", turn_id: event.turnId, audio_ms: event.atMs };
    case "transcript":
      return { type: event.final ? "realtime.transcript.final" : "realtime.transcript.interim", turn_id: event.turnId, text: event.text };
    case "turn_ended":
      return { type: "realtime.turn.ended", turn_id: event.turnId, text: event.text };
    case "response_text":
      return { type: "realtime.response.text", response_id: event.responseId, token: event.token, last: event.last };
    case "response_audio_started":
      return { type: "realtime.response.audio.started", response_id: event.responseId, provider: event.provider, model: event.model, ...(event.voice ? { voice: event.voice } : {}) };
    case "response_audio_done":
      return { type: "realtime.response.audio.done", response_id: event.responseId, characters: event.characters, audio_ms: event.audioMs };
    case "response_interrupted":
      return { type: "realtime.response.interrupted", response_id: event.responseId, spoken_text: event.spokenText, audio_ms: event.audioMs };
    case "provider_switched":
      return {
        type: "realtime.provider.switched",
        stage: event.stage,
        ...(event.stage === "tts" ? { response_id: event.responseId } : {}),
        provider: event.provider,
        model: event.model,
        ...(event.stage === "tts" && event.voice ? { voice: event.voice } : {}),
        previous_provider: event.previous,
        reason: event.reason,
      };
    case "language_switched":
      return { type: "realtime.language.switched", stage: event.stage, language: event.language, ...(event.stage === "tts" ? { voice: event.voice } : {}) };
    case "ended":
      return {
        type: "realtime.session.ended",
        session_id: event.sessionId,
        reason: event.reason,
        ...(event.handoffData !== undefined ? { handoff_data: event.handoffData } : {}),
        usage: { stt_seconds: event.usage.sttSeconds, tts_characters: event.usage.ttsCharacters },
      };
    default:
      return unreachable(event, "realtime conversation event");
  }
}

/** A `/v1/realtime` socket as a conversation's port. */
export function nativeRealtimePort(port: WsPort, sessionId: string): ConversationPort {
  const numbered = eventNumbering(sessionId);
  return {
    event(event) {
      if (event.type !== "vad" && event.type !== "send_digits") port.sendEvent(numbered(realtimeWireEvent(event)));
    },
    sendAudio: (chunk) => port.sendAudio(chunk),
    close: (code, reason) => port.close(code, reason),
  };
}
