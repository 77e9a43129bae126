import type { Probe } from "../src/audio/probe.ts";
import type { ErrorCode } from "../src/errors.ts";

// Messages between the file pool (main thread) and a file worker: the CPU work an uploaded file
// needs before a provider gets it. To be measured, the file crosses as a transferred ArrayBuffer
// and comes back with the answer; to be decoded, it is copied once (the caller keeps its own, for
// a fallback provider). Decoded audio crosses as transferred ArrayBuffers.

export type ToFiles =
  | { op: "probe"; sid: number; file: ArrayBuffer }
  /** Mono 16-bit PCM at `rate`, in chunks of `chunkSamples` samples. */
  | { op: "decode"; sid: number; file: Uint8Array; container: string; rate: number; chunkSamples: number };

/** An error thrown in the worker, as it crosses: an ApiError keeps its code and extra fields. */
export interface WireError {
  message: string;
  code?: ErrorCode;
  extra?: Record<string, unknown>;
}

export type FromFiles = { sid: number; ev: "probed"; probe: Probe; file: ArrayBuffer } | { sid: number; ev: "decoded"; chunks: ArrayBuffer[] } | { sid: number; ev: "error"; error: WireError };
