import type { Schema } from "./document-types.ts";
import { constant, integer, object, string } from "./schema.ts";

// The pieces of the AsyncAPI document (asyncapi-document.ts): a WebSocket channel with the
// messages the server receives on it and those it sends.

export interface Message {
  name: string;
  title: string;
  summary: string;
  contentType: string;
  payload: Schema;
  /** Client frames: one the server takes (test/asyncapi.test.ts sends them). */
  examples?: { payload: unknown }[];
}

export interface ChannelPart {
  /** The channel's key in the document (`tts`). */
  id: string;
  address: string;
  title: string;
  description: string;
  receives: Message[];
  sends: Message[];
}

/** A JSON text frame whose `type` is `type`, with `fields` beside it (all required unless in `optional`). */
export function event(type: string, summary: string, fields: Record<string, Schema> = {}, optional: Record<string, Schema> = {}): Message {
  return { name: type, title: type, summary, contentType: "application/json", payload: object({ type: constant(type), ...fields }, optional) };
}

/** Binary frames. */
export const audio = (name: string, summary: string): Message => ({ name, title: "audio", summary, contentType: "application/octet-stream", payload: { type: "string", format: "binary" } });

/** A client command frame `{"type": …}`, which the server takes as it is. */
export const command = (type: string, summary: string, fields: Record<string, Schema> = {}, example: Record<string, unknown> = {}): Message => ({
  ...event(type, summary, fields),
  examples: [{ payload: { type, ...example } }],
});

const NUMBERED = { event_id: string("`<session_id>.<seq>`"), seq: integer("Gapless, from 1", { minimum: 1 }) };

/** An event of `/v1/stt` or `/v1/realtime`, which number theirs: a stable `event_id` and a gapless `seq` from 1. */
export const numberedEvent = (type: string, summary: string, fields: Record<string, Schema> = {}, optional: Record<string, Schema> = {}) => event(type, summary, { ...NUMBERED, ...fields }, optional);
