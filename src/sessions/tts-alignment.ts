import type { CharacterTimes, TtsEvent } from "../providers/types.ts";
import type { TtsSessionEvent } from "./tts-events.ts";

type ProviderAlignment = Extract<TtsEvent, { type: "alignment" }>;
type AlignmentEvent = Extract<TtsSessionEvent, { type: "alignment" }>;

/**
 * A TTS session's character timings on their way to the client. Those a provider gives before its
 * first audio wait for that audio: a provider replaced before any audio went out takes its timings
 * with it, and its successor starts the timeline again. Times never go back (a provider whose
 * clock jitters across chunks is held at the latest time given), so that a client may lay them
 * end to end.
 */
export class AlignmentTimeline {
  private held: ProviderAlignment[] = [];
  private readonly latest = { alignment: 0, normalized: 0 };
  /** Seconds into the session's audio where the current provider's timeline begins (after a failover mid-session). */
  private offset = 0;

  /** A provider's timings: the events to send now (none before the first audio). */
  add(ev: ProviderAlignment, audioStarted: boolean): AlignmentEvent[] {
    this.held.push(ev);
    return audioStarted ? this.release() : [];
  }

  /** The first audio is going out: what waited for it. */
  release(): AlignmentEvent[] {
    return this.held.splice(0).map((ev) => {
      const alignment = this.forward(ev.alignment, "alignment");
      return { type: "alignment", alignment, normalized: ev.normalized ? this.forward(ev.normalized, "normalized") : alignment };
    });
  }

  /**
   * The provider is replaced: the timings it gave before any audio go with it; its successor's
   * timeline begins `at` seconds into the session's audio (0 before any audio went out; after,
   * where its audio had got to, else the latest time given).
   */
  drop(at?: number): void {
    this.held = [];
    this.offset = at ?? this.latest.alignment;
  }

  private forward(times: CharacterTimes, line: keyof AlignmentTimeline["latest"]): CharacterTimes {
    const starts: number[] = [];
    const ends: number[] = [];
    times.chars.forEach((_, i) => {
      const start = Math.max((times.starts[i] ?? 0) + this.offset, this.latest[line]);
      starts.push(start);
      ends.push(Math.max((times.ends[i] ?? 0) + this.offset, start));
      this.latest[line] = start;
    });
    return { chars: times.chars, starts, ends };
  }
}
