import { ApiError } from "../../errors.ts";
import type { ClientEvent, OaiEvents } from "./realtime-events.ts";

// The conversation's items as OpenAI's Realtime API (GA) holds them: each caller turn a user
// message, each answer an assistant message, linked by `previous_item_id` in the order they came.
// Clients that build their history from events (OpenAI's Agents SDK) announce them with
// `conversation.item.added` / `.done` and read them back with `conversation.item.retrieve`.
// No audio is kept: a retrieved item carries its transcript, as every `.done` event does.

export type Item = Record<string, unknown> & { id: string; role: "user" | "assistant"; status: "in_progress" | "completed" | "incomplete"; content: Record<string, unknown>[] };

export const userItem = (id: string, content: Record<string, unknown>): Item => ({ id, object: "realtime.item", type: "message", role: "user", status: "completed", content: [content] });

export const assistantItem = (id: string, status: Item["status"], transcript?: string): Item => ({
  id,
  object: "realtime.item",
  type: "message",
  role: "assistant",
  status,
  content: transcript === undefined ? [] : [{ type: "output_audio", transcript }],
});

/** The turns a conversation or transcription session heard, each a user item after the one before. */
export class Items {
  private readonly items = new Map<string, Item>();
  private last: string | null = null;

  constructor(private readonly events: OaiEvents) {}

  /** The id of the item the next one follows. */
  get lastId(): string | null {
    return this.last;
  }

  /** Adds `item` after the last one and says `conversation.item.added` (and `.done` when it is finished already). */
  add(item: Item): void {
    const previous = this.last;
    this.items.set(item.id, item);
    this.last = item.id;
    this.events.send({ type: "conversation.item.added", previous_item_id: previous, item });
    if (item.status !== "in_progress") this.events.send({ type: "conversation.item.done", previous_item_id: previous, item });
  }

  /** The item as it is now finished, `conversation.item.done` said. */
  done(item: Item): void {
    this.items.set(item.id, item);
    const ids = [...this.items.keys()];
    this.events.send({ type: "conversation.item.done", previous_item_id: ids[ids.indexOf(item.id) - 1] ?? null, item });
  }

  get(id: string): Item | undefined {
    return this.items.get(id);
  }

  /** Keeps what is said of `id` from now on (a barge-in's cut), without an event. */
  replace(item: Item): void {
    if (this.items.has(item.id)) this.items.set(item.id, item);
  }

  /** `conversation.item.retrieve`: the item as `conversation.item.retrieved`, or an error naming item_id. */
  retrieve(msg: ClientEvent): void {
    const item = typeof msg.item_id === "string" ? this.items.get(msg.item_id) : undefined;
    if (!item) return this.events.error(new ApiError("invalid_request", `no item ${String(msg.item_id).slice(0, 64)} in this conversation`, { param: "item_id" }), msg);
    this.events.send({ type: "conversation.item.retrieved", item });
  }

  /**
   * `conversation.item.truncate`: where the client stopped playing an answer, acknowledged as
   * `conversation.item.truncated`. The item keeps what the router knows the caller heard (the
   * conversation cut the answer at the barge-in, by its own clock); nothing else changes.
   */
  truncate(msg: ClientEvent): void {
    const item = typeof msg.item_id === "string" ? this.items.get(msg.item_id) : undefined;
    if (item?.role !== "assistant") return this.events.error(new ApiError("invalid_request", "item_id must name an assistant message of this conversation", { param: "item_id" }), msg);
    const { content_index: index, audio_end_ms: endMs } = msg;
    if (index !== 0) return this.events.error(new ApiError("invalid_request", "an answer has one content part: content_index must be 0", { param: "content_index" }), msg);
    if (typeof endMs !== "number" || !Number.isInteger(endMs) || endMs < 0) {
      return this.events.error(new ApiError("invalid_request", "audio_end_ms must be a whole number of milliseconds", { param: "audio_end_ms" }), msg);
    }
    this.events.send({ type: "conversation.item.truncated", item_id: item.id, content_index: 0, audio_end_ms: endMs });
  }
}
