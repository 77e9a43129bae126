import { indeterminate } from "./indeterminate.ts";

// MPEG audio (MP1/MP2/MP3) and ADTS (AAC) streams measured by their frames: every frame a decoder
// would play, counted from its own header. A Xing, Info or VBRI header's frame count and an ID3
// length are claims, and are not read.

const KBPS: Record<string, number[]> = {
  "1-1": [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  "1-2": [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  "1-3": [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  "2-1": [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  "2-2": [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  "2-3": [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const MPEG_RATES = [44100, 48000, 32000];
export const AAC_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];

export interface Frame {
  /** Bytes, header included; 0 for a free-format MPEG frame, whose length only the next header tells. */
  length: number;
  samples: number;
  rate: number;
}

/** The MPEG audio frame whose header starts at `at`, if one does. */
export function mpegFrame(b: Uint8Array, at: number): Frame | undefined {
  if (at + 4 > b.length || b[at] !== 0xff || (b[at + 1] & 0xe0) !== 0xe0) return;
  const version = (b[at + 1] >> 3) & 3; // 0: MPEG 2.5, 1: reserved, 2: MPEG 2, 3: MPEG 1
  const layer = 4 - ((b[at + 1] >> 1) & 3); // 4: reserved
  const bitrateIndex = b[at + 2] >> 4;
  const rateIndex = (b[at + 2] >> 2) & 3;
  if (version === 1 || layer === 4 || bitrateIndex === 15 || rateIndex === 3) return;
  const rate = MPEG_RATES[rateIndex] / (version === 3 ? 1 : version === 2 ? 2 : 4);
  const padding = (b[at + 2] >> 1) & 1;
  const bitrate = KBPS[`${version === 3 ? 1 : 2}-${layer}`][bitrateIndex] * 1000;
  const samples = layer === 1 ? 384 : layer === 3 && version !== 3 ? 576 : 1152;
  const length = !bitrate ? 0 : layer === 1 ? (Math.floor((12 * bitrate) / rate) + padding) * 4 : Math.floor(((samples / 8) * bitrate) / rate) + padding;
  return { length, samples, rate };
}

/** The ADTS (AAC) frame whose header starts at `at`, if one does. */
export function adtsFrame(b: Uint8Array, at: number): Frame | undefined {
  if (at + 7 > b.length || b[at] !== 0xff || (b[at + 1] & 0xf6) !== 0xf0) return;
  const rate = AAC_RATES[(b[at + 2] >> 2) & 15];
  const length = ((b[at + 3] & 3) << 11) | (b[at + 4] << 3) | (b[at + 5] >> 5);
  if (!rate || length < 7) return;
  return { length, samples: 1024 * ((b[at + 6] & 3) + 1), rate };
}

/** Where the audio starts: past any ID3v2 tags. */
export function afterId3(b: Uint8Array, at = 0): number {
  while (at + 10 <= b.length && b[at] === 0x49 && b[at + 1] === 0x44 && b[at + 2] === 0x33) {
    const size = ((b[at + 6] & 0x7f) << 21) | ((b[at + 7] & 0x7f) << 14) | ((b[at + 8] & 0x7f) << 7) | (b[at + 9] & 0x7f);
    at += 10 + size + (b[at + 5] & 0x10 ? 10 : 0);
  }
  return at;
}

/** Tags that may follow the last frame (ID3v1, APE, Lyrics3, ID3v2): a frame that ends at one is whole. */
const TRAILERS = ["TAG", "APETAGEX", "LYRICS", "ID3"];
const atTrailer = (b: Uint8Array, at: number) => TRAILERS.some((t) => [...t].every((c, i) => b[at + i] === c.charCodeAt(0)));

/**
 * The seconds of audio in a stream of frames. Junk between frames is skipped byte by byte, as
 * decoders resynchronise. A frame is stepped over whole only when another frame, a trailing tag or
 * the end follows it; otherwise what looks like a header is counted and the search goes on inside
 * it, so that no frame a decoder could find is missed (at worst a false header adds a frame).
 */
export function frameStreamSeconds(b: Uint8Array, frameAt: (b: Uint8Array, at: number) => Frame | undefined, start = afterId3(b)): number {
  let seconds = 0;
  let at = start;
  while ((at = b.indexOf(0xff, at)) >= 0) {
    const frame = frameAt(b, at);
    if (!frame) {
      at++;
      continue;
    }
    seconds += frame.samples / frame.rate;
    const next = at + frame.length;
    const whole = frame.length > 0 && (next === b.length || frameAt(b, next) !== undefined || atTrailer(b, next));
    at = whole ? next : at + 1;
  }
  return seconds;
}

/** Whether an MPEG audio or ADTS stream starts at `at`: that many frames there, one after another (or up to the end). */
export function streamStartsAt(b: Uint8Array, at: number, frameAt: (b: Uint8Array, at: number) => Frame | undefined, frames = 2): boolean {
  for (let i = 0; i < frames && at < b.length; i++) {
    const frame = frameAt(b, at);
    if (!frame?.length) return false;
    at += frame.length;
  }
  return at <= b.length;
}

export function mpegSeconds(b: Uint8Array, frameAt: (b: Uint8Array, at: number) => Frame | undefined): number {
  const seconds = frameStreamSeconds(b, frameAt);
  if (!seconds) throw indeterminate("no audio frames were found");
  return seconds;
}
