import type { VadOptions } from "../src/audio/vad.ts";

// Messages between an audio session on the main thread and its audio worker. Audio crosses as a
// transferred ArrayBuffer (16-bit little-endian PCM), never copied on the main thread.

/** What an audio worker is started with: its decoders, and where their model is (unset: Debian's place). */
export interface AudioWorkerOptions {
  decoders: number;
  modelDir: string | undefined;
  /** Where the executable copies onnxruntime's library to load it (the router VAD). */
  cacheDir?: string;
}

export type ToAudio =
  /**
   * `recognizer`: the session holds one of the worker's PocketSphinx decoders (see pool.ts seats).
   * `scores`: with `vad`, the VAD's speech probability comes back as `vad_score` (one per window, see audio-worker.ts).
   */
  | { op: "open"; sid: number; rate: number; vad?: VadOptions; scores?: boolean; recognizer: boolean; autoCommit: boolean; interim: boolean }
  | { op: "audio"; sid: number; buf: ArrayBuffer }
  | { op: "commit"; sid: number }
  | { op: "clear"; sid: number }
  | { op: "end"; sid: number }
  | { op: "drop"; sid: number }
  /** The pool is closing: finish the work in hand (inference must not be cut off), then exit. */
  | { op: "shutdown"; sid: 0 };

export type FromAudio =
  | { sid: number; ev: "opened" }
  | { sid: number; ev: "speech_started"; atMs: number }
  /** `committed`: the end committed the utterance (auto commit); its final came just before. */
  | { sid: number; ev: "speech_ended"; atMs: number; committed: boolean }
  /** The highest speech probability (0–1) the VAD gave the frames of the window ending at `atMs`. */
  | { sid: number; ev: "vad_score"; score: number; atMs: number }
  | { sid: number; ev: "interim"; text: string; startMs: number; endMs: number }
  | { sid: number; ev: "final"; text: string; startMs: number; endMs: number }
  | { sid: number; ev: "committed"; atMs: number }
  | { sid: number; ev: "cleared"; atMs: number }
  | { sid: number; ev: "ended"; audioMs: number }
  | { sid: number; ev: "error"; message: string };
