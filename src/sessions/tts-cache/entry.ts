import { frameStreamSeconds, mpegFrame } from "../../audio/duration/mpeg.ts";
import type { AudioFormat, CharacterTimes } from "../../providers/types.ts";

// One cached utterance: its audio as the provider made it, and the character timings it gave,
// in seconds from the utterance's own first sample (they are moved onto a stream's timeline when
// the entry is played).

export interface CachedTimes {
  alignment: CharacterTimes;
  normalized?: CharacterTimes;
}

export interface CacheEntry {
  audio: Uint8Array;
  timings: CachedTimes[];
}

/** What an entry holds in memory, roughly: its audio and its timings' numbers. */
export function entryBytes(entry: CacheEntry): number {
  let times = 0;
  for (const t of entry.timings) times += t.alignment.chars.length * 24 + (t.normalized?.chars.length ?? 0) * 24;
  return entry.audio.byteLength + times + 64;
}

/** Seconds of `audio` in `format` (MP3 by its frames). */
export function audioSeconds(audio: Uint8Array, format: AudioFormat): number {
  if (format.encoding === "pcm_s16le") return audio.byteLength / 2 / format.sampleRate;
  return frameStreamSeconds(audio, mpegFrame);
}

/** `times` moved by `by` seconds. */
export function shifted(times: CharacterTimes, by: number): CharacterTimes {
  return { chars: times.chars, starts: times.starts.map((s) => s + by), ends: times.ends.map((e) => e + by) };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** An entry as a file: a 4-byte length, the timings as JSON, then the audio. */
export function encodeEntry(entry: CacheEntry): Uint8Array {
  const head = encoder.encode(JSON.stringify(entry.timings));
  const out = new Uint8Array(4 + head.byteLength + entry.audio.byteLength);
  new DataView(out.buffer).setUint32(0, head.byteLength);
  out.set(head, 4);
  out.set(entry.audio, 4 + head.byteLength);
  return out;
}

/** The entry a file holds; undefined when it is not one (a torn write). */
export function decodeEntry(bytes: Uint8Array): CacheEntry | undefined {
  if (bytes.byteLength < 4) return undefined;
  const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0);
  if (4 + length > bytes.byteLength) return undefined;
  try {
    const timings = JSON.parse(decoder.decode(bytes.subarray(4, 4 + length))) as CachedTimes[];
    return Array.isArray(timings) ? { timings, audio: bytes.slice(4 + length) } : undefined;
  } catch {
    return undefined;
  }
}
