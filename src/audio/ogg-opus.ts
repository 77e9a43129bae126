import { Encoder } from "@evan/opus";
import { OGG_BOS, OGG_EOS, OggPager } from "./ogg.ts";
import { samplesOf } from "./bytes.ts";
import { SampleCarry } from "./sample-carry.ts";

/** Opus runs at 48 kHz here: the PCM is resampled to it before it comes in. */
export const OPUS_RATE = 48000;
/** 20 ms frames, Opus' usual for speech. */
const FRAME = OPUS_RATE / 50;
/** Packets per Ogg page: a page every 200 ms at most keeps latency low and pages small. */
const PACKETS_PER_PAGE = 10;

const ascii = (text: string) => new TextEncoder().encode(text);

/**
 * Streaming Ogg Opus (libopus through `@evan/opus`) for 16-bit mono PCM at 48 kHz: the headers
 * with the first audio, then a page of packets per call (encoded frame by frame, so a call never
 * holds the event loop for long); the end zero-padded and trimmed by the last page's granule position.
 */
export class OggOpusStreamEncoder {
  private readonly encoder: Encoder;
  private readonly pager = new OggPager();
  private readonly carry = new SampleCarry();
  private pending = new Int16Array(0);
  private readonly preSkip: number;
  /** Samples of input encoded (padding excluded), and samples the packets so far decode to. */
  private samples = 0;
  private decoded = 0;
  private started = false;

  constructor(kbps: number) {
    this.encoder = new Encoder({ channels: 1, sample_rate: OPUS_RATE, application: "audio" });
    this.encoder.bitrate = kbps * 1000;
    // The typings spell it `lookhead`; the getter is `lookahead`.
    this.preSkip = (this.encoder as unknown as { lookahead: number }).lookahead;
  }

  encode(pcm: Uint8Array): Uint8Array {
    const input = samplesOf(this.carry.wholeSamples(pcm));
    const all = new Int16Array(this.pending.length + input.length);
    all.set(this.pending);
    all.set(input, this.pending.length);
    const whole = all.length - (all.length % FRAME);
    this.pending = all.slice(whole);
    return this.pages(all.subarray(0, whole), false);
  }

  flush(): Uint8Array {
    // Silence past the end pushes the encoder's lookahead out; the end page's granule trims it.
    const padded = new Int16Array(Math.ceil((this.pending.length + this.preSkip) / FRAME) * FRAME);
    padded.set(this.pending);
    const real = this.pending.length;
    this.pending = new Int16Array(0);
    return this.pages(padded, true, real);
  }

  /** Pages for whole frames of `samples` (after the headers, the first time); the last one marked when `end`. */
  private pages(samples: Int16Array, end: boolean, real = samples.length): Uint8Array {
    const out: Uint8Array[] = this.started ? [] : this.headers();
    let packets: Uint8Array[] = [];
    for (let at = 0; at < samples.length; at += FRAME) {
      packets.push(this.encoder.encode(samples.subarray(at, at + FRAME)).slice());
      this.samples += Math.max(0, Math.min(FRAME, real - at));
      this.decoded += FRAME;
      if (packets.length === PACKETS_PER_PAGE && (!end || at + FRAME < samples.length)) {
        out.push(this.pager.page(packets, this.decoded));
        packets = [];
      }
    }
    // A page's granule counts decoded samples, pre-skip included; the last one's stops where the input did.
    if (packets.length || end) out.push(this.pager.page(packets, end ? this.preSkip + this.samples : this.decoded, end ? OGG_EOS : 0));
    return Bun.concatArrayBuffers(out, Infinity, true) as Uint8Array;
  }

  private headers(): Uint8Array[] {
    this.started = true;
    const head = new Uint8Array(19);
    const view = new DataView(head.buffer);
    head.set(ascii("OpusHead"));
    view.setUint8(8, 1); // version
    view.setUint8(9, 1); // channels
    view.setUint16(10, this.preSkip, true);
    view.setUint32(12, OPUS_RATE, true);
    // output gain 0, channel mapping family 0
    const vendor = ascii("voxroute (libopus)");
    const tags = new Uint8Array(8 + 4 + vendor.byteLength + 4);
    tags.set(ascii("OpusTags"));
    new DataView(tags.buffer).setUint32(8, vendor.byteLength, true);
    tags.set(vendor, 12);
    return [this.pager.page([head], 0, OGG_BOS), this.pager.page([tags], 0)];
  }
}
