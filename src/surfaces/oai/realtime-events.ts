import { ApiError } from "../../errors.ts";
import { isObject } from "../../util/is-object.ts";
import { jsonOf } from "../raw-frames.ts";
import type { WsPort } from "../ws-port.ts";
import { openAiErrorObject } from "./errors.ts";

// The server side of an `/oai/realtime` socket's events: each with its own `event_id`, and errors
// in OpenAI's shape (`type`, `code`, `message`, `param`, and the `event_id` of the client event
// that caused them). Most errors leave the session open, as OpenAI's do.

export type ClientEvent = Record<string, unknown> & { type: string };

export class OaiEvents {
  private sent = 0;

  constructor(readonly port: WsPort) {}

  nextId(): string {
    return `event_${++this.sent}`;
  }

  send(event: Record<string, unknown> & { type: string }): void {
    this.port.sendEvent({ event_id: this.nextId(), ...event });
  }

  error(err: ApiError, cause?: ClientEvent): void {
    const { code, param } = openAiErrorObject(err).error;
    const type = code === "insufficient_quota" ? code : err.status < 500 ? "invalid_request_error" : "server_error";
    this.send({ type: "error", error: { type, code, message: err.message, param, event_id: typeof cause?.event_id === "string" ? cause.event_id : null } });
  }

  /** A client frame as an event, or undefined after telling the client why it is not one. */
  parse(frame: string | Uint8Array): ClientEvent | undefined {
    const msg = typeof frame === "string" ? jsonOf(frame) : undefined;
    if (isObject(msg) && typeof msg.type === "string") return msg as ClientEvent;
    this.error(new ApiError("invalid_request", "events are JSON text frames: objects with a string type"));
  }

  unsupported(msg: ClientEvent, why = "is not supported here"): void {
    this.error(new ApiError("invalid_request", `${msg.type.slice(0, 64)} ${why}`, { param: "type" }), msg);
  }
}

/**
 * Standard base64 with its padding, as OpenAI takes it, decoded. Buffer.from skips any character
 * outside both base64 alphabets and stops at a `=` inside: either leaves fewer bytes than a padded
 * text of this length holds, so the length tells, without a second pass over the text; only the
 * URL-safe alphabet, which it decodes, is looked for.
 */
function decodedBase64(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(text, "base64");
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  if (bytes.byteLength !== (text.length / 4) * 3 - padding || text.includes("-") || text.includes("_")) return undefined;
  return bytes;
}

/** The audio of an `input_audio_buffer.append`, or undefined after telling the client it has none (the session goes on). */
export function appendedAudio(msg: ClientEvent, events: OaiEvents): Uint8Array | undefined {
  const bytes = typeof msg.audio === "string" ? decodedBase64(msg.audio) : undefined;
  if (bytes) return bytes;
  events.error(new ApiError("invalid_request", "input_audio_buffer.append needs audio as base64 (standard alphabet, padded)", { param: "audio" }), msg);
}
