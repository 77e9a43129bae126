import { indeterminate } from "./indeterminate.ts";
import { afterId3 } from "./mpeg.ts";

// FLAC measured by its frames: each frame header (checked by its CRC-8) says how many samples it
// holds. STREAMINFO's total sample count is a claim and is not read; its sample rate is how the
// frames that do not state one are played.

const FRAME_RATES = [0, 88200, 176400, 192000, 8000, 16000, 22050, 24000, 32000, 44100, 48000, 96000];

const CRC8 = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let i = 0; i < 8; i++) c = c & 0x80 ? ((c << 1) ^ 0x07) & 0xff : (c << 1) & 0xff;
  return c;
});

/** A FLAC frame header at `at`: the samples it holds and its sample rate (0: STREAMINFO's). */
export function flacFrame(b: Uint8Array, at: number): { samples: number; rate: number } | undefined {
  if (b[at] !== 0xff || (b[at + 1] & 0xfe) !== 0xf8) return;
  const sizeCode = b[at + 2] >> 4;
  const rateCode = b[at + 2] & 15;
  if (sizeCode === 0 || rateCode === 15 || b[at + 3] >> 4 > 10 || ((b[at + 3] >> 1) & 7) === 3 || b[at + 3] & 1) return;
  let p = at + 4;
  // The frame or sample number, UTF-8 coded: its first byte says how many follow.
  const lead = b[p++];
  const extra = lead < 0x80 ? 0 : lead >= 0xc0 && lead <= 0xfe ? Math.clz32(~(lead << 24)) - 1 : -1;
  if (extra < 0) return;
  for (let i = 0; i < extra; i++) if ((b[p++] & 0xc0) !== 0x80) return;
  let samples = sizeCode === 1 ? 192 : sizeCode <= 5 ? 576 << (sizeCode - 2) : sizeCode >= 8 ? 256 << (sizeCode - 8) : 0;
  if (sizeCode === 6) samples = b[p++] + 1;
  else if (sizeCode === 7) samples = ((b[p++] << 8) | b[p++]) + 1;
  let rate = FRAME_RATES[rateCode] ?? 0;
  if (rateCode === 12) rate = b[p++] * 1000;
  else if (rateCode === 13) rate = (b[p++] << 8) | b[p++];
  else if (rateCode === 14) rate = ((b[p++] << 8) | b[p++]) * 10;
  if (p >= b.length) return;
  let crc = 0;
  for (let i = at; i < p; i++) crc = CRC8[crc ^ b[i]];
  return crc === b[p] ? { samples, rate } : undefined;
}

/** STREAMINFO's sample rate, from the block's data. */
export const streamInfoRate = (block: Uint8Array) => (block[10] << 12) | (block[11] << 4) | (block[12] >> 4);

/** The seconds of audio in a frame or run of frames, with `rate` for frames that defer to STREAMINFO. */
function flacFramesSeconds(b: Uint8Array, rate: number, start = 0): number {
  let seconds = 0;
  for (let at = start; (at = b.indexOf(0xff, at)) >= 0; at++) {
    const frame = flacFrame(b, at);
    if (frame && (frame.rate || rate)) seconds += frame.samples / (frame.rate || rate);
  }
  return seconds;
}

/**
 * A native FLAC file: metadata blocks, then frames. Frame lengths are not in their headers, so every
 * position is searched for a valid header: a false one (CRC-8 included) is rare, and only adds.
 */
export function flacSeconds(b: Uint8Array): number {
  let at = afterId3(b) + 4;
  let rate = 0;
  for (let last = false; !last && at + 4 <= b.length; ) {
    last = (b[at] & 0x80) !== 0;
    const size = (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3];
    if ((b[at] & 0x7f) === 0) rate = streamInfoRate(b.subarray(at + 4, at + 4 + size));
    at += 4 + size;
  }
  const seconds = flacFramesSeconds(b, rate, at);
  if (!seconds) throw indeterminate("no FLAC frames were found");
  return seconds;
}
