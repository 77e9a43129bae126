import { alaw, mulaw } from "alawmulaw";
import { PcmResampler } from "./resampler.ts";

// PCM as a caller was promised it: at the promised rate (resampled from the provider's when they
// differ) and, for telephony formats, companded to G.711 µ-law or A-law. Audio that already
// matches passes through untouched.

/** The audio a caller was promised: 16-bit PCM at `rate`, or G.711 when `companding` is set. */
export interface PcmPromise {
  rate: number;
  companding?: "ulaw" | "alaw";
}

export class PcmDelivery {
  /** An odd trailing byte (a sample split across chunks) when no resampler keeps it. */
  private carry: number | undefined;

  private constructor(
    private readonly resampler: Promise<PcmResampler> | undefined,
    private readonly companding: PcmPromise["companding"],
  ) {}

  /** The conversion for the provider's audio, or undefined when its bytes can go out as they are. */
  static for(promise: PcmPromise | undefined, audio: { encoding: string; sample_rate: number }): PcmDelivery | undefined {
    if (!promise || audio.encoding !== "pcm_s16le") return undefined;
    const resample = audio.sample_rate !== promise.rate;
    if (!resample && !promise.companding) return undefined;
    return new PcmDelivery(resample ? PcmResampler.create(audio.sample_rate, promise.rate) : undefined, promise.companding);
  }

  async process(chunk: Uint8Array): Promise<Uint8Array> {
    const pcm = this.resampler ? (await this.resampler).process(chunk) : this.wholeSamples(chunk);
    if (!this.companding || !pcm.byteLength) return pcm;
    const samples = pcm.byteOffset % 2 === 0 ? new Int16Array(pcm.buffer, pcm.byteOffset, pcm.byteLength >> 1) : new Int16Array(pcm.slice().buffer);
    return (this.companding === "ulaw" ? mulaw : alaw).encode(samples);
  }

  private wholeSamples(chunk: Uint8Array): Uint8Array {
    let bytes = chunk;
    if (this.carry !== undefined) {
      bytes = new Uint8Array(chunk.byteLength + 1);
      bytes[0] = this.carry;
      bytes.set(chunk, 1);
      this.carry = undefined;
    }
    if (bytes.byteLength % 2) {
      this.carry = bytes[bytes.byteLength - 1];
      bytes = bytes.subarray(0, bytes.byteLength - 1);
    }
    return bytes;
  }

  release(): void {
    this.resampler?.then((r) => r.destroy()).catch(() => {}); // a resampler that never started has nothing to free
  }
}
