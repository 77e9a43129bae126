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

  /** What a crash of the server is billed: the text whose audio has gone out. */
  get delivered(): number {
    return Math.max(this.acknowledged, this.givenAtAudio);
  }

  /** A new provider starts from nothing written (the admitted text is replayed to it). */
  restart(): void {
    this.written = 0;
    this.flushMarks = [];
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
    return Math.min(this.written, streamGiven ?? this.written);
  }
}
