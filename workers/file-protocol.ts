import type { Probe } from "../src/audio/probe.ts";
import type { ErrorCode } from "../src/errors.ts";

// Messages between the file pool (main thread) and a file worker: the CPU work an uploaded file
// needs before a provider gets it. To be measured, the file crosses as a transferred ArrayBuffer
// and comes back with the answer. To be decoded, it is copied once (the caller keeps its own, for
// a fallback provider) and decoded a batch at a time, each when the reader asks for it (`more`),
// so that neither side holds more than a batch or two of PCM; decoded audio crosses as
// transferred ArrayBuffers.

export type ToFiles =
  | { op: "probe"; sid: number; file: ArrayBuffer }
  /**
   * Opens the file's decoding to mono 16-bit PCM at `rate`, at most `maxSamples` samples in all,
   * and answers the first batch: `batchSamples` samples in chunks of `chunkSamples`.
   */
  | { op: "decode"; sid: number; file: Uint8Array; container: string; rate: number; maxSamples: number; batchSamples: number; chunkSamples: number }
  /** The next batch. */
  | { op: "more"; sid: number }
  /** The reader stopped before the end: the worker lets go of the file. */
  | { op: "drop"; sid: number };

/** An error thrown in the worker, as it crosses: an ApiError keeps its code and extra fields. */
export interface WireError {
  message: string;
  code?: ErrorCode;
  extra?: Record<string, unknown>;
}

export type FromFiles =
  | { sid: number; ev: "probed"; probe: Probe; file: ArrayBuffer }
  /** A batch of decoded audio; `done`: the last one. */
  | { sid: number; ev: "decoded"; chunks: ArrayBuffer[]; done: boolean }
  | { sid: number; ev: "error"; error: WireError };
