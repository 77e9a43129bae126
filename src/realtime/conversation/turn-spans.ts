import type { SpanFields, TraceSpan } from "../../tracing/spans.ts";
import type { ConversationEvent } from "./conversation-events.ts";

// A conversation's spans (tracing on): the conversation's root, claimed from its WebSocket
// request and ended with its close, and a `realtime.turn` span per caller turn, read from the
// events the conversation tells its client: the end of speech (or the turn's end, for a typed
// turn or a client's commit), the prompt to the application, its first token, the answer's first
// audio, the answer made. A barge-in is an event of the turn whose answer it stopped while it was
// made (it ends the turn), or of the conversation when the answer was made and still playing.

export class TurnSpans {
  private turn: TraceSpan | undefined;
  private prompted = false;
  private answered = false;
  private spoke = false;

  constructor(readonly root: TraceSpan) {}

  /** The span a turn's answer session (its TTS) belongs to: the turn's, else the conversation's. */
  get current(): TraceSpan {
    return this.turn ?? this.root;
  }

  observe(event: ConversationEvent): void {
    switch (event.type) {
      case "speech":
        if (event.state === "stopped") this.open(event.turnId).event("end_of_speech", { "voxroute.audio_ms": event.atMs });
        return;
      case "turn_ended":
        this.open(event.turnId).event("prompt", { "voxroute.typed": event.typed, "voxroute.characters": event.text.length });
        this.prompted = true;
        return;
      case "response_text":
        if (this.turn && this.prompted && !this.answered) {
          this.answered = true;
          this.turn.event("first_token", { "voxroute.response_id": event.responseId });
        }
        return;
      case "response_audio_started":
        if (this.turn && this.prompted && !this.spoke) {
          this.spoke = true;
          this.turn.event("first_audio", { "voxroute.provider": event.provider, "voxroute.model": event.model });
        }
        return;
      case "response_audio_done":
        return this.close({ "voxroute.audio_ms": event.audioMs, "voxroute.characters": event.characters });
      case "response_interrupted":
        // An answer already made may still be playing: its turn is over, the barge-in is the conversation's.
        (this.turn ?? this.root).event("barge_in", { "voxroute.response_id": event.responseId, "voxroute.audio_ms": event.audioMs });
        return this.close({ "voxroute.interrupted": true });
      case "ended":
        this.close({});
        this.root.set({ "voxroute.end_reason": event.reason, "voxroute.stt_seconds": event.usage.sttSeconds, "voxroute.tts_characters": event.usage.ttsCharacters });
        return;
    }
  }

  /** The conversation closed (`code` undefined: the caller left). */
  end(code: number | undefined, reason: string): void {
    this.close({});
    this.root.set({ "websocket.close_code": code, "websocket.close_reason": reason });
    this.root.end();
  }

  /** The turn being heard; a new one once the last was prompted. */
  private open(turnId: string): TraceSpan {
    if (this.turn && !this.prompted) return this.turn;
    this.close({});
    this.turn = this.root.child("realtime.turn", { "voxroute.turn_id": turnId });
    return this.turn;
  }

  private close(fields: SpanFields): void {
    if (!this.turn) return;
    this.turn.set(fields);
    this.turn.end();
    this.turn = undefined;
    this.prompted = this.answered = this.spoke = false;
  }
}
