import { jsonOf } from "../raw-frames.ts";
import { isObject } from "../../util/is-object.ts";

// What a carrier's media socket says, as the call's session hears it, and what it is told; each
// carrier's file maps its own frames (twilio-media-wire.ts, telnyx-media-wire.ts).

export type CarrierEvent =
  | { type: "connected" }
  /** The stream began: its id (sent back with Twilio's frames), the carrier's call id, and the custom parameters. */
  | { type: "start"; streamId: string; callId: string; customParameters: Record<string, string> }
  /** Caller audio: G.711 µ-law at 8 kHz; `chunk` numbers the frames in the order they were sent (they may arrive out of it). */
  | { type: "media"; payload: Uint8Array; chunk?: number }
  | { type: "dtmf"; digit: string }
  /** The carrier played the audio up to a mark the router sent (or dropped it with `clear`). */
  | { type: "mark"; name: string }
  /** The call is over: the caller hung up, or the carrier ended the stream. */
  | { type: "stop" }
  /** A frame the router takes no action on (an `error` report, an event added since). */
  | { type: "other"; event: string }
  | { invalid: string };

/** The router's frames to one stream (sent as JSON text). */
export interface CarrierReply {
  media(payload: Uint8Array): Record<string, unknown>;
  mark(name: string): Record<string, unknown>;
  clear(): Record<string, unknown>;
}

export interface MediaWire {
  read(frame: string | Uint8Array): CarrierEvent;
  reply(streamId: string): CarrierReply;
}

/** A frame as both carriers send them: a JSON object with a string `event`. */
export function carrierFrame(frame: string | Uint8Array): (Record<string, unknown> & { event: string }) | { invalid: string } {
  if (typeof frame !== "string") return { invalid: "frames are JSON text, not binary" };
  const msg = jsonOf(frame);
  if (!isObject(msg) || typeof msg.event !== "string") return { invalid: "a frame is a JSON object with a string event" };
  return msg as Record<string, unknown> & { event: string };
}

/** `obj[key]` when it is an object, else an empty one. */
const objectAt = (obj: Record<string, unknown>, key: string): Record<string, unknown> => {
  const v = obj[key];
  return isObject(v) ? v : {};
};

/** The string members of a custom parameters object (none when it is not one). */
export function stringsOf(obj: unknown): Record<string, string> {
  if (!isObject(obj)) return {};
  return Object.fromEntries(Object.entries(obj).filter((e): e is [string, string] => typeof e[1] === "string"));
}

/** A `media` frame's audio, or why it cannot be taken. */
function payloadOf(media: Record<string, unknown>): CarrierEvent {
  if (typeof media.payload !== "string") return { invalid: "media needs a base64 payload" };
  const payload = new Uint8Array(Buffer.from(media.payload, "base64"));
  const chunk = Number(media.chunk);
  return Number.isSafeInteger(chunk) && chunk >= 0 ? { type: "media", payload, chunk } : { type: "media", payload };
}

/** A `dtmf` frame's digit, or why it cannot be taken. */
function digitOf(dtmf: Record<string, unknown>): CarrierEvent {
  if (typeof dtmf.digit !== "string" || !/^[0-9*#A-Da-dw]$/.test(dtmf.digit)) return { invalid: "dtmf needs a digit" };
  return { type: "dtmf", digit: dtmf.digit };
}

/** A carrier's reader: the frames both carriers spell alike, and its own `start` (`frame`, `frame.start`). */
export function mediaReader(startOf: (frame: Record<string, unknown>, start: Record<string, unknown>) => CarrierEvent): (frame: string | Uint8Array) => CarrierEvent {
  return (frame) => {
    const msg = carrierFrame(frame);
    if (!("event" in msg)) return msg;
    switch (msg.event) {
      case "connected":
        return { type: "connected" };
      case "start":
        return startOf(msg, objectAt(msg, "start"));
      case "media":
        return payloadOf(objectAt(msg, "media"));
      case "dtmf":
        return digitOf(objectAt(msg, "dtmf"));
      case "mark":
        return { type: "mark", name: String(objectAt(msg, "mark").name ?? "") };
      case "stop":
        return { type: "stop" };
      default:
        return { type: "other", event: msg.event };
    }
  };
}
