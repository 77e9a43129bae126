import type { Logger } from "../../log.ts";
import type { ConversationPort } from "../../realtime/conversation/conversation-events.ts";
import type { WsPort } from "../ws-port.ts";
import type { CarrierReply } from "./media-wire.ts";

// A phone call as a conversation's port: the answers' µ-law goes to the carrier in 20 ms `media`
// frames (160 bytes at 8 kHz), a `mark` named after the response follows each answer's last
// audio, and a barge-in sends `clear` (the carrier drops what it still holds of the answer). The
// conversation's other events concern only the log: how the call ended, with its reason.

export const FRAME_BYTES = 160;

export function phoneCallPort(port: WsPort, reply: CarrierReply, log: Logger): ConversationPort {
  let carry = new Uint8Array(0);
  /** Moves on at each barge-in: frames of the interrupted answer still waiting for the socket are not sent. */
  let answer = 0;
  /** Whether the conversation said how it ended (`ended`); a failure closes without it. */
  let told = false;
  const sendFrame = (frame: Uint8Array) => port.sendAudio(JSON.stringify(reply.media(frame)));
  return {
    event(event) {
      switch (event.type) {
        case "response_audio_done":
          if (carry.length) void sendFrame(carry);
          carry = new Uint8Array(0);
          return port.sendEvent(reply.mark(event.responseId));
        case "response_interrupted":
          answer++;
          carry = new Uint8Array(0);
          return port.sendEvent(reply.clear());
        case "error":
          return log.info({ code: event.code, reason: event.message }, "call error");
        case "ended":
          told = true;
          return log.info({ reason: event.reason, usage: event.usage }, "call ended");
        default:
          return;
      }
    },
    async sendAudio(chunk) {
      const bytes = carry.length ? Buffer.concat([carry, chunk]) : chunk;
      const whole = bytes.length - (bytes.length % FRAME_BYTES);
      carry = bytes.slice(whole);
      const current = answer;
      for (let at = 0; at < whole && current === answer; at += FRAME_BYTES) await sendFrame(bytes.subarray(at, at + FRAME_BYTES));
    },
    close: (code, reason) => {
      if (!told) log.info({ reason: "error", code, closeReason: reason }, "call ended");
      port.close(code, reason);
    },
  };
}
