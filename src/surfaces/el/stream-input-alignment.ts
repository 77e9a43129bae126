import type { CharacterTimes } from "../../providers/types.ts";
import type { TtsSessionEvent } from "../../sessions/tts-events.ts";

/** ElevenLabs' `stream-input` alignment: each character, its start and its duration in ms from the start of its frame's audio. */
export interface FrameAlignment {
  chars: string[];
  charStartTimesMs: number[];
  charDurationsMs: number[];
}

const none = (): CharacterTimes => ({ chars: [], starts: [], ends: [] });

/**
 * A session's character times (seconds from its first audio) handed out frame by frame, as
 * `sync_alignment=true` asks: each audio frame carries the characters that start before its audio
 * ends, timed from where its audio starts. Times come before their audio, so none is ever
 * earlier than the frame that carries it.
 */
export class FrameAligner {
  private pending = { alignment: none(), normalized: none() };

  add(event: Extract<TtsSessionEvent, { type: "alignment" }>): void {
    for (const line of ["alignment", "normalized"] as const) {
      const [held, more] = [this.pending[line], event[line]];
      this.pending[line] = { chars: [...held.chars, ...more.chars], starts: [...held.starts, ...more.starts], ends: [...held.ends, ...more.ends] };
    }
  }

  /** Whether characters wait for a frame. */
  get waiting(): boolean {
    return this.pending.alignment.chars.length > 0 || this.pending.normalized.chars.length > 0;
  }

  /** For a frame whose audio runs from `start` to `end` seconds (no `end`: every character left). */
  take(start: number, end = Number.POSITIVE_INFINITY): { alignment: FrameAlignment; normalizedAlignment: FrameAlignment } {
    return { alignment: this.takeFrom("alignment", start, end), normalizedAlignment: this.takeFrom("normalized", start, end) };
  }

  private takeFrom(line: "alignment" | "normalized", start: number, end: number): FrameAlignment {
    const times = this.pending[line];
    let n = times.starts.findIndex((t) => t >= end);
    if (n < 0) n = times.chars.length;
    const ms = (seconds: number) => Math.round(seconds * 1000);
    const starts = times.starts.splice(0, n);
    const ends = times.ends.splice(0, n);
    return { chars: times.chars.splice(0, n), charStartTimesMs: starts.map((t) => ms(t) - ms(start)), charDurationsMs: starts.map((t, i) => ms(ends[i]) - ms(t)) };
  }
}
