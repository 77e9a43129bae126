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

/** Standard base64 with its padding, as OpenAI takes it: Buffer.from would skip any other character silently. */
const isBase64 = (text: string) => text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text);

/** The audio of an `input_audio_buffer.append`, or undefined after telling the client it has none (the session goes on). */
export function appendedAudio(msg: ClientEvent, events: OaiEvents): Uint8Array | undefined {
  if (typeof msg.audio === "string" && isBase64(msg.audio)) return Buffer.from(msg.audio, "base64");
  events.error(new ApiError("invalid_request", "input_audio_buffer.append needs audio as base64 (standard alphabet, padded)", { param: "audio" }), msg);
}
