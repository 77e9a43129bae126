import type { ServerWebSocket } from "bun";
import type { SttInputConfig, SttPort, SttSessionEvent } from "../../sessions/stt-events.ts";
import { unreachable } from "../../util/unreachable.ts";
import { TurnCorkedSender } from "../turn-corked-sender.ts";
import { errorEvent, eventNumbering, type WireEvent } from "./numbered-events.ts";

/** The events `/v1/stt` frames: all but the router VAD's scores, which its sessions do not ask for (`vadScores`). */
export type SttWireEvent = Exclude<SttSessionEvent, { type: "vad" }>;

/** An STT session event as `/v1/stt` frames it, without its `event_id` and `seq` (docs/stt-websocket.md). */
export function sttWireEvent(event: SttWireEvent): WireEvent {
  if (event.type === "error") return errorEvent("stt", event);
  switch (event.type) {
    case "started":
      return { type: "stt.session.started", session_id: event.sessionId, provider: event.provider, model: event.model, input_config: inputFrame(event.input) };
    case "switched":
      return {
        type: "stt.provider.switched",
        provider: event.provider,
        model: event.model,
        previous_provider: event.previous,
        reason: event.reason,
        audio_ms: event.fromMs,
        input_config: inputFrame(event.input),
      };
    case "signal":
      return {
        type: "stt.signal",
        origin: event.origin,
        signal: event.signal,
        turn_scope: event.scope ?? "utterance",
        basis: event.origin === "router" ? ["vad"] : ["provider"],
        turn_id: event.turnId,
        audio_ms: event.atMs,
      };
    case "transcript":
      return {
        type: event.final ? "stt.transcript.final" : "stt.transcript.interim",
        turn_id: event.turnId,
        text: event.text,
        audio_start_ms: event.startMs,
        audio_end_ms: event.endMs,
      };
    case "committed":
      return { type: "stt.audio.committed", turn_id: event.turnId, origin: event.origin, audio_ms: event.atMs };
    case "cleared":
      return { type: "stt.audio.cleared", turn_id: event.turnId, audio_ms: event.atMs };
    case "ended":
      return {
        type: "stt.session.ended",
        session_id: event.sessionId,
        provider: event.provider,
        model: event.model,
        audio_ms: event.audioMs,
        billed_seconds: event.billedSeconds,
      };
    default:
      return unreachable(event, "STT session event");
  }
}

function inputFrame(input: SttInputConfig) {
  return {
    audio_format: input.audioFormat,
    sample_rate: input.sampleRate,
    channels: input.channels,
    language: input.language,
    interim_results: input.interimResults,
    commit_strategy: input.commitStrategy,
    turn_detection: input.turnDetection,
    turn_detector: input.turnDetector,
    event_format: "normalized",
  };
}

/**
 * A `/v1/stt` socket as an STT session's port: every event numbered gaplessly (`seq`) with a stable
 * `event_id`; the events of one loop turn after its first (a provider's burst) share one write.
 */
export function nativeSttPort(raw: ServerWebSocket<unknown>, sessionId: string): SttPort {
  const numbered = eventNumbering(sessionId);
  const toClient = new TurnCorkedSender(raw);
  return {
    event(event) {
      if (event.type !== "vad") toClient.send(JSON.stringify(numbered(sttWireEvent(event))));
    },
    close: (code, reason) => toClient.close(code, reason),
  };
}
