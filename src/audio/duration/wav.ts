import { fixedFrameWav, readWav } from "../wav.ts";
import { indeterminate } from "./indeterminate.ts";
import { frameStreamSeconds, mpegFrame } from "./mpeg.ts";

/** WAVE format tags of MPEG audio: its data is a stream of frames. */
const MPEG_IN_WAVE = new Set([0x50, 0x55]);

/** A WAVE file's seconds: its data's sample frames at its rate, or its MPEG frames (see readWav). */
export function wavSeconds(b: Uint8Array): number {
  const { format, data } = readWav(b);
  if (fixedFrameWav(format)) return data.reduce((n, d) => n + Math.floor(d.byteLength / format.blockAlign), 0) / format.rate;
  if (MPEG_IN_WAVE.has(format.codec)) return data.reduce((n, d) => n + frameStreamSeconds(d, mpegFrame, 0), 0);
  throw indeterminate(`a WAVE file of a codec that cannot be measured (format 0x${format.codec.toString(16)})`);
}
