import { parseBuffer } from "music-metadata";
import { ApiError } from "../errors.ts";
import { matroskaDuration } from "./matroska-duration.ts";

/** Longest file accepted: a day. A duration beyond it is a broken header, not audio. */
const MAX_SECONDS = 24 * 3600;

export interface Probe {
  seconds: number;
  container: string;
  codec?: string;
  sampleRate?: number;
}

/**
 * The duration of an audio file, read from its container (WAV, MP3, FLAC, Ogg/Opus, WebM, M4A, …)
 * by music-metadata. Billing depends on it, so an unknown container or an undeterminable or
 * absurd duration is 422 `indeterminate_audio_duration`: never a guess.
 */
export async function probeDuration(bytes: Uint8Array, mimeType?: string): Promise<Probe> {
  const indeterminate = (why: string) => new ApiError("indeterminate_audio_duration", `the audio's duration cannot be determined: ${why}`);
  const parse = (type?: string) => parseBuffer(bytes, type ? { mimeType: type } : undefined, { duration: true, skipCovers: true });
  let meta;
  try {
    // The bytes first: a declared type may be wrong (a WAV sent as audio/mpeg); it is only a fallback.
    meta = await parse();
    if (meta.format.duration === undefined && mimeType) meta = await parse(mimeType);
  } catch (err) {
    if (!mimeType) throw indeterminate((err as Error).message);
    try {
      meta = await parse(mimeType);
    } catch {
      throw indeterminate((err as Error).message);
    }
  }
  const container = meta.format.container ?? "unknown";
  // Matroska/WebM: the blocks say how long the audio is; the header may not say, or may lie.
  const seconds = /webm|matroska/i.test(container) ? ((await matroskaDuration(bytes).catch(() => undefined)) ?? meta.format.duration) : meta.format.duration;
  if (seconds === undefined || !Number.isFinite(seconds) || seconds <= 0) throw indeterminate("the container does not say");
  if (seconds > MAX_SECONDS) throw indeterminate(`${seconds} s is not a plausible recording`);
  return { seconds, container, codec: meta.format.codec, sampleRate: meta.format.sampleRate };
}
