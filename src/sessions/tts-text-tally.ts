import { characters } from "../ledger/usage.ts";
import type { Outcome } from "./lifecycle/ending.ts";

/**
 * A TTS session's count of characters, from which it is billed: those admitted (paid for by the
 * hold), written to the provider, handed over by it (a stream may hold written text back while
 * the client is slow, see `TtsStream.given`) and confirmed by a `flushed` acknowledgement.
 */
export class TextTally {
  /** Characters admitted (and paid for). */
  admitted = 0;
  /** Characters written to the provider's stream. */
  private written = 0;
  /** Characters written when each pending flush was asked for, oldest first. */
  private flushMarks: number[] = [];
  /** Characters whose audio a `flushed` acknowledgement confirmed. */
  private acknowledged = 0;
  /** Characters the provider had been given when its latest audio went out. */
  private givenAtAudio = 0;
  /** Characters whose audio a stream marked as all yielded (`spoken`). */
  private spokenUpTo = 0;
  /** Characters written before the current provider took over (its counts start there). */
  private base = 0;

  wrote(text: string): void {
    this.written += characters(text);
  }

  flushAsked(): void {
    this.flushMarks.push(this.written);
  }

  flushAnswered(): void {
    this.acknowledged = this.flushMarks.shift() ?? this.acknowledged;
  }

  get flushesOpen(): boolean {
    return this.flushMarks.length > 0;
  }

  /** Audio went out; `streamGiven` is what the provider's stream reports it was handed. */
  audioSent(streamGiven: number | undefined): void {
    this.givenAtAudio = this.given(streamGiven);
  }

  /** The stream yielded all the audio of its first `chars` characters. */
  spoken(chars: number): void {
    this.spokenUpTo = Math.max(this.spokenUpTo, this.base + chars);
  }

  /** Characters whose audio has gone out to its end: where a provider's successor takes over. */
  get heard(): number {
    return Math.max(this.acknowledged, this.spokenUpTo);
  }

  /** What a crash of the server is billed: the text whose audio has gone out. */
  get delivered(): number {
    return Math.max(this.acknowledged, this.givenAtAudio);
  }

  /**
   * A new provider takes over at `from` characters (0 before any audio went out; after, the text
   * heard to its end): the text from there is written to it again, and its counts start there.
   */
  resumeAt(from: number): void {
    this.base = from;
    this.written = from;
    this.flushMarks = [];
    this.acknowledged = Math.max(this.acknowledged, from);
    this.givenAtAudio = from;
  }

  /**
   * What the session pays for. All admitted text once it completed (or was cut off, having spoken
   * what was admitted). A provider failure or the server's own end costs the client only what a
   * flush confirmed; a client that leaves (or breaks the rules) once audio has begun pays for all
   * the text the provider was given, which it has spoken or is speaking: leaving must not be a way
   * to get audio for free. Text still held back from the provider was never given.
   */
  billed(outcome: Outcome, audioStarted: boolean, streamGiven: number | undefined): number {
    if (outcome === "completed" || outcome === "cut_off") return this.admitted;
    if (outcome === "client_left" && audioStarted) return Math.max(this.given(streamGiven), this.acknowledged);
    return this.acknowledged;
  }

  /**
   * Characters the provider has been handed: what its stream reports, never more than was
   * written. A flush's acknowledgement covers its text whatever a stream reports.
   */
  private given(streamGiven: number | undefined): number {
    return Math.min(this.written, streamGiven === undefined ? this.written : this.base + streamGiven);
  }
}
