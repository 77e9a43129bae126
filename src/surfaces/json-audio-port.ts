import { base64Of } from "../audio/bytes.ts";
import type { ConversationEvent, ConversationPort } from "../realtime/conversation/conversation-events.ts";
import type { WsPort } from "./ws-port.ts";

/**
 * A conversation's port on a socket whose protocol carries audio base64 inside a JSON text frame
 * (ElevenLabs' conversation socket, OpenAI's Realtime API): `event` frames each event the
 * surface's way, `audioFrame` wraps a chunk's base64.
 */
export function jsonAudioPort(port: WsPort, event: (ev: ConversationEvent) => void, audioFrame: (audioBase64: string) => Record<string, unknown>): ConversationPort {
  return {
    event,
    sendAudio: (chunk) => port.sendAudio(JSON.stringify(audioFrame(base64Of(chunk)))),
    close: (code, reason) => port.close(code, reason),
  };
}
