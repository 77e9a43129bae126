import type { Anchor } from "./timing/char-times.ts";

// What an embedded engine offers to the engine worker. Engines run inside worker threads only:
// `synthesize` is synchronous and CPU-bound.

export interface EngineVoice {
  id: string;
  name: string;
  languages: string[];
  gender?: "female" | "male";
  accent?: string;
  /** Where the voice comes from (its recordings, its engine's project). */
  sourceUrls?: string[];
}

export interface LocalEngine {
  voices(): EngineVoice[];
  /** Every name `prepare` takes as a voice: its voices' ids, and any other spelling it accepts. */
  voiceNames(): string[];
  /**
   * Makes a voice ready (loading its data if needed) and returns its native output rate; rejects
   * with `UnknownVoiceError` for a voice the engine lacks.
   */
  prepare(voice: string | undefined): Promise<number>;
  /**
   * Synthesizes one utterance, handing 16-bit little-endian mono PCM to `onAudio` as it is produced.
   * `speed` (1 = natural pace) only reaches engines whose catalogue entry declares `ttsSpeed`.
   * Returns where the text meets the audio, when the engine tells (positions in code points of
   * `text`, seconds from the utterance's first sample).
   */
  synthesize(text: string, voice: string | undefined, onAudio: (pcm: Uint8Array) => void, speed?: number): Anchor[] | undefined;
}

export class UnknownVoiceError extends Error {
  constructor(engine: string, voice: string) {
    super(`${engine} has no voice "${voice}"`);
  }
}
