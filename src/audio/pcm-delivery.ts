import { alaw, mulaw } from "alawmulaw";
import { samplesOf } from "./bytes.ts";
import { PcmResampler } from "./resampler.ts";
import { SampleCarry } from "./sample-carry.ts";

// PCM as a caller was promised it: at the promised rate (resampled from the provider's when they
// differ) and, for telephony formats, companded to G.711 µ-law or A-law. Audio that already
// matches passes through untouched.

/** The audio a caller was promised: 16-bit PCM at `rate`, or G.711 when `companding` is set. */
export interface PcmPromise {
  rate: number;
  companding?: "ulaw" | "alaw";
}

export class PcmDelivery {
  /** A sample split across chunks, when no resampler keeps it. */
  private readonly carry = new SampleCarry();

  private constructor(
    private readonly resampler: Promise<PcmResampler> | undefined,
    private readonly companding: PcmPromise["companding"],
  ) {}

  /** The conversion for the provider's audio, or undefined when its bytes can go out as they are. */
  static for(promise: PcmPromise | undefined, audio: { encoding: string; sampleRate: number }): PcmDelivery | undefined {
    if (!promise || audio.encoding !== "pcm_s16le") return undefined;
    const resample = audio.sampleRate !== promise.rate;
    if (!resample && !promise.companding) return undefined;
    return new PcmDelivery(resample ? PcmResampler.create(audio.sampleRate, promise.rate) : undefined, promise.companding);
  }

  async process(chunk: Uint8Array): Promise<Uint8Array> {
    const pcm = this.resampler ? (await this.resampler).process(chunk) : this.carry.wholeSamples(chunk);
    if (!this.companding || !pcm.byteLength) return pcm;
    return (this.companding === "ulaw" ? mulaw : alaw).encode(samplesOf(pcm));
  }

  release(): void {
    this.resampler?.then((r) => r.destroy()).catch(() => {}); // a resampler that never started has nothing to free
  }
}
