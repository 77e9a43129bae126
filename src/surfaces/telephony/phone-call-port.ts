import { dtmfTones } from "../../audio/dtmf-tones.ts";
import type { Logger } from "../../log.ts";
import type { ConversationPort } from "../../realtime/conversation/conversation-events.ts";
import type { WsPort } from "../ws-port.ts";
import type { CarrierReply } from "./media-wire.ts";

// A phone call as a conversation's port: the answers' µ-law goes to the carrier in 20 ms `media`
// frames (160 bytes at 8 kHz), a `mark` named after the response follows each answer's last
// audio, and a barge-in sends `clear` (the carrier drops what it still holds of the answer). The
// application's `sendDigits` are played in-band as DTMF tones, after the audio already given to
// the call (docs/telephony.md#digits-the-application-sends). The conversation's other events
// concern only the log: how the call ended, with its reason.

export const FRAME_BYTES = 160;

export function phoneCallPort(port: WsPort, reply: CarrierReply, log: Logger): ConversationPort {
  let carry = new Uint8Array(0);
  /** Moves on at each barge-in: frames of the interrupted answer still waiting for the socket are not sent. */
  let answer = 0;
  /** Whether the conversation said how it ended (`ended`); a failure closes without it. */
  let told = false;
  /** What is still being sent while the socket is behind: later frames, marks and tones wait for it, in order. */
  let behind: Promise<void> | undefined;
  const sendFrame = (frame: Uint8Array) => port.sendAudio(JSON.stringify(reply.media(frame)));

  /** The frames of `bytes` while `wanted()`; a promise only while the socket is behind. */
  const sendFrames = (bytes: Uint8Array, wanted: () => boolean): void | Promise<void> => {
    for (let at = 0; at < bytes.length && wanted(); at += FRAME_BYTES) {
      const waiting = sendFrame(bytes.subarray(at, at + FRAME_BYTES));
      if (waiting) return waiting.then(() => sendFrames(bytes.subarray(at + FRAME_BYTES), wanted));
    }
  };
  /** Whether no barge-in moved past answer `of`. */
  const current = (of: number) => () => of === answer;
  const always = () => true;
  /** Runs `send` after what is still being sent; synchronous while the socket keeps up. */
  const inTurn = (send: () => void | Promise<void>): void | Promise<void> => {
    const run = behind ? behind.then(send) : send();
    if (!run) return;
    const mine: Promise<void> = run.finally(() => {
      if (behind === mine) behind = undefined;
    });
    behind = mine;
    return mine;
  };
  /** The part frame an answer left, sent as it is (a carrier takes any payload length). */
  const sendCarry = () => {
    const rest = carry;
    carry = new Uint8Array(0);
    const wanted = current(answer);
    if (rest.length) void inTurn(() => sendFrames(rest, wanted));
  };

  return {
    event(event) {
      switch (event.type) {
        case "response_audio_done": {
          sendCarry();
          const wanted = current(answer);
          return void inTurn(() => (wanted() ? port.sendEvent(reply.mark(event.responseId)) : undefined));
        }
        case "response_interrupted":
          answer++;
          carry = new Uint8Array(0);
          return port.sendEvent(reply.clear());
        case "send_digits": {
          sendCarry();
          const tones = dtmfTones(event.digits);
          // Tones are no answer's: a barge-in's `clear` drops those the carrier holds, but not those still to send.
          return void inTurn(() => sendFrames(tones, always));
        }
        case "error":
          return log.info({ code: event.code, reason: event.message }, "call error");
        case "ended":
          told = true;
          return log.info({ reason: event.reason, usage: event.usage }, "call ended");
        default:
          return;
      }
    },
    sendAudio(chunk) {
      const bytes = carry.length ? Buffer.concat([carry, chunk]) : chunk;
      const whole = bytes.length - (bytes.length % FRAME_BYTES);
      carry = bytes.slice(whole);
      const wanted = current(answer);
      return inTurn(() => sendFrames(bytes.subarray(0, whole), wanted));
    },
    close: (code, reason) => {
      if (!told) log.info({ reason: "error", code, closeReason: reason }, "call ended");
      port.close(code, reason);
    },
  };
}
