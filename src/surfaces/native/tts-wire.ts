import type { CharacterTimes } from "../../providers/types.ts";
import type { TtsPort, TtsSessionEvent } from "../../sessions/tts-events.ts";
import { toMillisecond } from "../../util/milliseconds.ts";
import { unreachable } from "../../util/unreachable.ts";
import { WsPort } from "../ws-port.ts";

/** A TTS session event as `/v1/tts` frames it (docs/tts-websocket.md). */
export function ttsWireEvent(event: TtsSessionEvent): Record<string, unknown> {
  switch (event.type) {
    case "ready":
      return { type: "service.tts_session_ready", session_id: event.sessionId };
    case "provider_status": {
      const { provider, model, status, voice, reason } = event;
      return { type: "service.tts_provider_status", provider, model, status, ...(voice ? { voice } : {}), ...(reason ? { reason } : {}) };
    }
    case "audio_started": {
      const { provider, model, format } = event;
      return { type: "service.tts_audio_started", provider, model, encoding: format.encoding, sample_rate: format.sampleRate, channels: format.channels };
    }
    case "flushed":
      return { type: "service.tts_flushed" };
    case "alignment":
      return { type: "service.tts_alignment", alignment: timesOf(event.alignment), normalized_alignment: timesOf(event.normalized) };
    case "error": {
      const { code, message, param } = event;
      return { type: "service.tts_error", code, message, ...(param ? { param } : {}) };
    }
    case "ended":
      return {
        type: "service.tts_session_ended",
        session_id: event.sessionId,
        provider: event.provider,
        model: event.model,
        characters: event.characters,
        audio_bytes: event.audioBytes,
      };
    default:
      return unreachable(event, "TTS session event");
  }
}

const timesOf = (t: CharacterTimes) => ({ characters: t.chars, start_times: t.starts.map(toMillisecond), end_times: t.ends.map(toMillisecond) });

/** A `/v1/tts` socket as a TTS session's port: events as JSON text frames, audio as binary frames. */
export class NativeTtsPort extends WsPort implements TtsPort {
  event(event: TtsSessionEvent): void {
    this.sendEvent(ttsWireEvent(event));
  }
}
