import { fourcc, view } from "./duration/bits.ts";
import { indeterminate } from "./duration/indeterminate.ts";

/** The PCM payload of a RIFF/WAVE file (its `data` chunk), without copying: a view, whose `.buffer` is the whole file (see bytes.ts). */
export function pcmOfWav(wav: Uint8Array): Uint8Array {
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
  const tag = (at: number) => String.fromCharCode(wav[at], wav[at + 1], wav[at + 2], wav[at + 3]);
  if (wav.byteLength < 12 || tag(0) !== "RIFF" || tag(8) !== "WAVE") throw new Error("not a WAVE file");
  let at = 12;
  while (at + 8 <= wav.byteLength) {
    const size = view.getUint32(at + 4, true);
    if (tag(at) === "data") return wav.subarray(at + 8, Math.min(at + 8 + size, wav.byteLength));
    at += 8 + size + (size & 1);
  }
  throw new Error("WAVE file has no data chunk");
}

/**
 * A 44-byte header for 16-bit PCM. Without `dataBytes` the sizes are the maximum, as streamed WAV
 * does when the length is not known yet (players read to the end of the body).
 */
export function wavHeader(sampleRate: number, channels: number, dataBytes?: number): Uint8Array {
  const header = new Uint8Array(44);
  const view = new DataView(header.buffer);
  const ascii = (at: number, text: string) => header.set(new TextEncoder().encode(text), at);
  ascii(0, "RIFF");
  view.setUint32(4, dataBytes === undefined ? 0xffffffff : 36 + dataBytes, true);
  ascii(8, "WAVEfmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * channels * 2, true);
  view.setUint16(32, channels * 2, true);
  view.setUint16(34, 16, true);
  ascii(36, "data");
  view.setUint32(40, dataBytes ?? 0xffffffff, true);
  return header;
}

/** WAVE format tags whose samples are a fixed number of bytes: PCM, IEEE float, A-law, µ-law. */
const FIXED_FRAME_CODECS = new Set([1, 3, 6, 7]);
const EXTENSIBLE = 0xfffe;

export interface WavFormat {
  /** The format tag, the sub-format's for WAVE_FORMAT_EXTENSIBLE. */
  codec: number;
  channels: number;
  rate: number;
  bits: number;
  /** Bytes per sample frame (all channels). */
  blockAlign: number;
}

export interface WavAudio {
  format: WavFormat;
  /** Every `data` chunk's bytes, in order. */
  data: Uint8Array[];
}

/**
 * A WAVE file's format and audio, by what its bytes hold rather than what its sizes claim: every
 * `data` chunk (a player may play one or all: all are billed, and the embedded recognizer hears
 * all), cut at the end of the file when its size runs past it. Bytes after a `data` chunk that are not chunks up to the end of the file are
 * audio too: a data size smaller than its data is not believed. `fact` and the RIFF size are not
 * read. For fixed-size samples, a block alignment or byte rate that disagrees with the channels,
 * bits and rate is refused, as is a second `fmt ` or data before any `fmt `.
 */
export function readWav(wav: Uint8Array): WavAudio {
  const bytes = view(wav);
  if (wav.byteLength < 12 || fourcc(wav, 0) !== "RIFF" || fourcc(wav, 8) !== "WAVE") throw indeterminate("not a WAVE file");
  let format: WavFormat | undefined;
  const data: Uint8Array[] = [];
  let at = 12;
  while (at + 8 <= wav.byteLength) {
    const tag = fourcc(wav, at);
    const size = bytes.getUint32(at + 4, true);
    const end = at + 8 + size;
    if (tag === "fmt ") {
      if (format) throw indeterminate("the WAVE file has two fmt chunks");
      if (size < 16 || end > wav.byteLength) throw indeterminate("the WAVE fmt chunk is cut short");
      format = wavFormat(wav.subarray(at + 8, end));
    } else if (tag === "data") {
      if (!format) throw indeterminate("the WAVE data comes before its fmt chunk");
      data.push(wav.subarray(at + 8, Math.min(end, wav.byteLength)));
    } else if (end > wav.byteLength && data.length) {
      // Not a chunk: the audio before it ran on past its declared size.
      const last = data.pop()!;
      data.push(wav.subarray(last.byteOffset - wav.byteOffset));
      break;
    }
    at = end + (size & 1);
  }
  if (!format || !data.length) throw indeterminate("the WAVE file has no data chunk");
  return { format, data };
}

function wavFormat(fmt: Uint8Array): WavFormat {
  const v = view(fmt);
  const tag = v.getUint16(0, true);
  const format: WavFormat = {
    codec: tag === EXTENSIBLE && fmt.byteLength >= 26 ? v.getUint16(24, true) : tag,
    channels: v.getUint16(2, true),
    rate: v.getUint32(4, true),
    bits: v.getUint16(14, true),
    blockAlign: v.getUint16(12, true),
  };
  if (!format.channels || !format.rate) throw indeterminate("the WAVE fmt chunk has no channels or no sample rate");
  if (FIXED_FRAME_CODECS.has(format.codec)) {
    const blockAlign = format.channels * Math.ceil(format.bits / 8);
    const byteRate = v.getUint32(8, true);
    if (!format.bits || format.blockAlign !== blockAlign || byteRate !== format.rate * blockAlign) {
      throw indeterminate(
        `the WAVE fmt chunk disagrees with itself: ${format.channels} channels of ${format.bits} bits at ${format.rate} Hz are ${blockAlign} bytes a frame and ${format.rate * blockAlign} a second, not ${format.blockAlign} and ${byteRate}`,
      );
    }
  }
  return format;
}

/** Whether a WAVE format's samples are a fixed number of bytes, so its data's length is its duration. */
export const fixedFrameWav = (format: WavFormat) => FIXED_FRAME_CODECS.has(format.codec);
