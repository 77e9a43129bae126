import type { SttAudioFormat } from "../catalogue/types.ts";
import { codePoints } from "../util/code-points.ts";

// Usage as billed: the one place that turns what a request delivered into the units the meter
// holds, notes and settles. Audio is billed by the second, every second begun counting whole;
// text by the character, a character being a Unicode code point (an emoji is one, not the two
// UTF-16 units JavaScript's `length` counts). Providers that report the text they were given
// (`TtsStream.given`) count with the same `codePoints`.

/** Bytes in one second of streamed audio: `pcm_<rate>` is 16-bit, `ulaw_<rate>` 8-bit, per channel. */
export function audioBytesPerSecond(format: SttAudioFormat, channels: number): number {
  const [encoding, rate] = format.split("_");
  return Number(rate) * channels * (encoding === "ulaw" ? 1 : 2);
}

/** Billed seconds of a duration in seconds. */
export function billedSeconds(seconds: number): number {
  return Math.ceil(seconds);
}

/** Billed seconds of `bytes` of streamed audio (`bytesPerSecond` from `audioBytesPerSecond`). */
export function audioSeconds(bytes: number, bytesPerSecond: number): number {
  return billedSeconds(bytes / bytesPerSecond);
}

/** Billed characters of `text`: its code points. */
export function characters(text: string): number {
  return codePoints(text);
}
