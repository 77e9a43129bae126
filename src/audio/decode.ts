// A namespace import: Bun's bundler, given the named import, leaves out the package's other
// export that its index still refers to ("MPEGDecoderWebWorker is not defined" in `bun run build`).
import * as mpg123 from "mpg123-decoder";
import { ApiError } from "../errors.ts";
import { decoderFor } from "./decodable.ts";
import { readWav } from "./wav.ts";

// Files to mono 16-bit PCM at the rate a recognizer takes (16 kHz for the embedded one, the
// streaming session's rate for a file sent through one): WAV (16-bit PCM) and MP3 (mpg123,
// compiled to WebAssembly). Other containers go to providers that take them as they are.
// Decoded a stretch at a time, as it is read: what is held does not grow with the file.

/** A stretch of audio at its own rate, one array per channel. */
interface Stretch {
  rate: number;
  channels: Float32Array[];
}

interface StretchSource {
  /** The next stretch; undefined at the end. */
  next(): Stretch | undefined;
  free(): void;
}

/** WAV frames a stretch. */
const WAV_FRAMES = 65536;
/** MP3 bytes a stretch: what mpg123-decoder feeds its decoder at a time, so the samples are those of decoding the file whole. */
const MP3_BYTES = 4096;

/**
 * The channels' mean, linearly interpolated to `target`, over audio that comes a stretch at a
 * time: output sample i is read at input position i × rate / target between the two samples
 * around it (at the very end, the last one twice), so no sample depends on where stretches were cut.
 */
class Downmix {
  /** Input from frame `base` on, one array per channel. */
  private held: Float32Array[] = [];
  private base = 0;
  private received = 0;
  private produced = 0;

  constructor(
    readonly rate: number,
    private readonly target: number,
  ) {}

  /** The output samples this stretch completes. */
  push(channels: Float32Array[]): Int16Array {
    this.held = this.held.length ? channels.map((ch, c) => joined(this.held[c]!, ch)) : channels;
    this.received += channels[0]!.length;
    const last = Math.floor((this.received * this.target) / this.rate);
    // Sample i needs input frames j and j + 1 (j = ⌊i × rate / target⌋); a later stretch changes neither.
    return this.take((i) => i < last && Math.floor((i * this.rate) / this.target) + 1 < this.received);
  }

  /** The rest, once the input has ended. */
  end(): Int16Array {
    const last = Math.floor((this.received * this.target) / this.rate);
    return this.take((i) => i < last);
  }

  private take(ready: (i: number) => boolean): Int16Array {
    let count = 0;
    while (ready(this.produced + count)) count++;
    const out = new Int16Array(count);
    for (let k = 0; k < count; k++) {
      const pos = ((this.produced + k) * this.rate) / this.target;
      const j = Math.floor(pos);
      const frac = pos - j;
      let sum = 0;
      for (const ch of this.held) {
        const a = ch[j - this.base] ?? 0;
        const b = ch[j + 1 - this.base] ?? a;
        sum += a + (b - a) * frac;
      }
      out[k] = Math.max(-32768, Math.min(32767, Math.round((sum / this.held.length) * 32768)));
    }
    this.produced += count;
    const unneeded = Math.floor((this.produced * this.rate) / this.target) - this.base;
    if (unneeded > 0) {
      this.held = this.held.map((ch) => ch.subarray(unneeded));
      this.base += unneeded;
    }
    return out;
  }
}

function joined(a: Float32Array, b: Float32Array): Float32Array {
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** The audio probeDuration measured: every data chunk (see readWav), so what is heard is what is billed. */
function wavStretches(bytes: Uint8Array): StretchSource {
  const { format, data } = readWav(bytes);
  if (format.codec !== 1 || format.bits !== 16) throw unsupported("WAV other than 16-bit PCM");
  let chunk = 0;
  let at = 0;
  return {
    next() {
      while (chunk < data.length && at + format.blockAlign > data[chunk]!.byteLength) [chunk, at] = [chunk + 1, 0];
      const d = data[chunk];
      if (!d) return undefined;
      const frames = Math.min(WAV_FRAMES, Math.floor((d.byteLength - at) / format.blockAlign));
      const view = new DataView(d.buffer, d.byteOffset + at, frames * format.blockAlign);
      const channels = Array.from({ length: format.channels }, () => new Float32Array(frames));
      for (let i = 0; i < frames; i++) {
        for (let c = 0; c < format.channels; c++) channels[c]![i] = view.getInt16(i * format.blockAlign + c * 2, true) / 32768;
      }
      at += frames * format.blockAlign;
      return { rate: format.rate, channels };
    },
    free() {},
  };
}

async function mp3Stretches(bytes: Uint8Array): Promise<StretchSource> {
  const decoder = new mpg123.MPEGDecoder();
  await decoder.ready;
  let at = 0;
  let decoded = false;
  let error: string | undefined;
  return {
    next() {
      while (at < bytes.length) {
        const { channelData, sampleRate, errors } = decoder.decode(bytes.subarray(at, at + MP3_BYTES));
        at += MP3_BYTES;
        error ??= errors[0]?.message;
        if (channelData[0]?.length) {
          decoded = true;
          return { rate: sampleRate, channels: channelData };
        }
      }
      if (!decoded) throw unsupported(`an MP3 that does not decode${error ? ` (${error})` : ""}`);
      return undefined;
    },
    free: () => decoder.free(),
  };
}

const unsupported = (what: string) => new ApiError("validation", `the recognizer cannot read ${what}; send WAV (16-bit PCM) or MP3`, { param: "file" });

/** A WAV or MP3 file as mono 16-bit PCM at `rate`, read a stretch at a time. Call `free` when done with it. */
export class PcmDecoder {
  private downmix: Downmix | undefined;
  private ready: Int16Array[] = [];
  private readyCount = 0;
  private ended = false;

  private constructor(
    private readonly source: StretchSource,
    private readonly target: number,
  ) {}

  /** Refuses (422 `validation`) a container or codec it cannot decode. */
  static async open(bytes: Uint8Array, container: string, rate: number): Promise<PcmDecoder> {
    const decoder = decoderFor(container);
    if (!decoder) throw unsupported(`${container} files`);
    return new PcmDecoder(decoder === "wav" ? wavStretches(bytes) : await mp3Stretches(bytes), rate);
  }

  /** The next `samples` samples, fewer only at the end (none: the end). An MP3 with no audio that decodes is refused at the first read. */
  read(samples: number): Int16Array {
    while (this.readyCount < samples && !this.ended) this.decodeStretch();
    const out = new Int16Array(Math.min(samples, this.readyCount));
    let filled = 0;
    while (filled < out.length) {
      const first = this.ready[0]!;
      const take = Math.min(first.length, out.length - filled);
      out.set(first.subarray(0, take), filled);
      filled += take;
      if (take === first.length) this.ready.shift();
      else this.ready[0] = first.subarray(take);
    }
    this.readyCount -= filled;
    return out;
  }

  free(): void {
    this.source.free();
  }

  private decodeStretch(): void {
    const stretch = this.source.next();
    if (!stretch) {
      this.ended = true;
      if (this.downmix) this.keep(this.downmix.end());
      return;
    }
    // A stream whose rate changes (a chained MP3) goes on at the new rate.
    if (this.downmix?.rate !== stretch.rate) {
      if (this.downmix) this.keep(this.downmix.end());
      this.downmix = new Downmix(stretch.rate, this.target);
    }
    this.keep(this.downmix.push(stretch.channels));
  }

  private keep(samples: Int16Array): void {
    if (!samples.length) return;
    this.ready.push(samples);
    this.readyCount += samples.length;
  }
}
