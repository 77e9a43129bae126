import type { ConversationEvent, ConversationPort } from "../../realtime/conversation/conversation-events.ts";
import { outputFormatName } from "../../realtime/output-formats.ts";
import { unreachable } from "../../util/unreachable.ts";
import { jsonAudioPort } from "../json-audio-port.ts";
import type { WsPort } from "../ws-port.ts";

// A conversation as ElevenLabs' conversation socket frames it (upstreams sheet 1d; docs/compat-el.md):
// every server message a JSON text frame `{type, <type>_event: {...}}`, audio base64 inside JSON.
// An answer's number is the `event_id` of its `agent_response`, its audio and, when the caller
// talks over it, its `interruption` and `agent_response_correction` (required fields in
// ElevenLabs' published event types, @elevenlabs/types). On `interruption` the browser SDK
// flushes what its player holds; no audio of the interrupted answer follows it.

/** ElevenLabs' names for our output formats (they are the same strings). */

/** How often the server pings; the SDK answers each with `pong`. */
export const PING_EVERY_MS = 5000;

/**
 * Pings start with the conversation: `conversation_initiation_metadata` must be the first frame, as
 * ElevenLabs' browser SDK takes the first message as the handshake's answer and waits for no other
 * (`@elevenlabs/client` WebSocketConnection.create: a `once` listener). A start slower than a ping
 * (a recognizer or application slow to connect) would otherwise leave the SDK connecting until the socket closed.
 */
export function elConversationPort(port: WsPort, inputFormat: string, pingEveryMs = PING_EVERY_MS): ConversationPort & { stop(): void } {
  /** The answer whose audio is going out (`resp_N` → N), and its text so far. */
  let answer = 0;
  const texts = new Map<string, string>();
  let pings = 0;
  let pinger: ReturnType<typeof setInterval> | undefined;
  const numberOf = (responseId: string) => Number(responseId.slice("resp_".length));

  const event = (ev: ConversationEvent): void => {
    switch (ev.type) {
      case "started":
        pinger ??= setInterval(() => port.sendEvent({ type: "ping", ping_event: { event_id: ++pings, ping_ms: null } }), pingEveryMs);
        return port.sendEvent({
          type: "conversation_initiation_metadata",
          conversation_initiation_metadata_event: {
            conversation_id: ev.sessionId,
            agent_output_audio_format: outputFormatName(ev.output),
            user_input_audio_format: inputFormat,
          },
        });
      case "turn_ended":
        return port.sendEvent({ type: "user_transcript", user_transcription_event: { user_transcript: ev.text } });
      case "response_text": {
        const text = (texts.get(ev.responseId) ?? "") + ev.token;
        texts.set(ev.responseId, text);
        if (ev.last) port.sendEvent({ type: "agent_response", agent_response_event: { agent_response: text, event_id: numberOf(ev.responseId) } });
        return;
      }
      case "response_audio_started":
        answer = numberOf(ev.responseId);
        // An answer's text is kept while its audio may still be playing: until the next one speaks.
        for (const id of texts.keys()) if (numberOf(id) < answer) texts.delete(id);
        return;
      case "response_interrupted": {
        const said = texts.get(ev.responseId);
        port.sendEvent({ type: "interruption", interruption_event: { event_id: numberOf(ev.responseId), reason: "user" } });
        // The whole answer went out as agent_response: ElevenLabs corrects it to what was heard.
        if (said !== undefined && said !== ev.spokenText) {
          port.sendEvent({
            type: "agent_response_correction",
            agent_response_correction_event: { original_agent_response: said, corrected_agent_response: ev.spokenText, event_id: numberOf(ev.responseId) },
          });
        }
        return;
      }
      case "vad":
        // Three decimals: finer is noise, and the frame goes out four times a second.
        return port.sendEvent({ type: "vad_score", vad_score_event: { vad_score: Math.round(ev.score * 1000) / 1000 } });
      case "provider_switched": // ElevenLabs' protocol has no such event: the call just goes on
      case "language_switched":
      case "send_digits": // never told: the conversation has no telephone line
      case "response_audio_done":
      case "speech":
      case "transcript":
      case "error": // the close that follows carries the code
      case "ended":
        return;
      default:
        return unreachable(ev, "conversation event");
    }
  };

  const stop = () => clearInterval(pinger);
  const framed = jsonAudioPort(port, event, (audio) => ({ type: "audio", audio_event: { audio_base_64: audio, event_id: answer } }));
  return {
    ...framed,
    close: (code, reason) => {
      stop();
      framed.close(code, reason);
    },
    stop,
  };
}
