import { type Items, userItem } from "./realtime-items.ts";
import type { OaiEvents } from "./realtime-events.ts";

// The caller's turns in OpenAI's order (upstreams sheet 2c; docs/compat-oai.md): speech started,
// speech stopped, the buffer committed as a user item (`conversation.item.added` / `.done`), then
// its transcription, as deltas and the completed transcript. OpenAI transcribes a turn once it is
// committed; our recognizers hear it as it is spoken, so their final segments wait for the commit.
// Deltas only ever add (clients concatenate them): interim transcripts are not sent.

export class HeardTurns {
  /** Each open turn's final segments so far. */
  private readonly segments = new Map<string, string[]>();
  /** Turns whose speech_started went out and that are not committed yet. */
  private readonly speaking = new Set<string>();

  constructor(
    private readonly events: OaiEvents,
    private readonly items: Items,
  ) {}

  static itemOf(turnId: string): string {
    return `item_${turnId}`;
  }

  /** Whether the caller's speech in `turnId` was announced. */
  started(turnId: string): boolean {
    return this.speaking.has(turnId);
  }

  speech(turnId: string, state: "started" | "stopped", atMs: number): void {
    const item_id = HeardTurns.itemOf(turnId);
    if (state === "stopped") return this.events.send({ type: "input_audio_buffer.speech_stopped", audio_end_ms: atMs, item_id });
    if (this.speaking.has(turnId)) return;
    this.speaking.add(turnId);
    this.events.send({ type: "input_audio_buffer.speech_started", audio_start_ms: atMs, item_id });
  }

  /** A final segment of `turnId`, kept for the commit. */
  heard(turnId: string, text: string): void {
    const words = text.trim();
    if (!words) return;
    const segments = this.segments.get(turnId) ?? [];
    segments.push(words);
    this.segments.set(turnId, segments);
  }

  /** The turn is over: committed, its item added, then its transcription (`transcript`, or the segments heard). */
  committed(turnId: string, transcript?: string): void {
    const item = HeardTurns.itemOf(turnId);
    const segments = this.segments.get(turnId) ?? [];
    this.segments.delete(turnId);
    this.speaking.delete(turnId);
    this.events.send({ type: "input_audio_buffer.committed", item_id: item, previous_item_id: this.items.lastId });
    this.items.add(userItem(item, { type: "input_audio", transcript: null }));
    const text = transcript ?? segments.join(" ");
    // Segments the recognizer dropped since (a cleared buffer) are not the transcript: then it goes out whole.
    const deltas = segments.join(" ") === text ? segments : [text];
    for (const [i, segment] of deltas.entries()) {
      this.events.send({ type: "conversation.item.input_audio_transcription.delta", item_id: item, content_index: 0, delta: i ? ` ${segment}` : segment });
    }
    this.events.send({ type: "conversation.item.input_audio_transcription.completed", item_id: item, content_index: 0, transcript: text });
    this.items.replace(userItem(item, { type: "input_audio", transcript: text }));
  }

  /** The buffer was cleared: what was heard of the open turns is dropped. */
  cleared(): void {
    this.segments.clear();
    this.speaking.clear();
  }
}
