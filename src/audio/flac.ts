import * as Flac from "libflacjs/dist/libflac.js";
import { samplesOf } from "./bytes.ts";
import { SampleCarry } from "./sample-carry.ts";

// libFLAC compiled to asm.js (`libflacjs`): pure JavaScript, so it runs inside the single binary
// with no .wasm file to find. It initializes asynchronously (about 30 ms), once, on import.
await new Promise<void>((ready) => (Flac.isReady() ? ready() : Flac.on("ready", () => ready())));

/** libFLAC's default compression level. */
const COMPRESSION = 5;
/** Encoders not yet released: the asm.js heap grows to hold them and never shrinks. */
let live = 0;

/** How many FLAC encoders hold memory in libFLAC's heap (tests check that every response frees its own). */
export const liveFlacEncoders = () => live;

/**
 * Streaming FLAC (native container) for 16-bit mono PCM: frames come out as libFLAC completes
 * them (4096-sample blocks). A stream cannot seek back, so STREAMINFO leaves the total length
 * unknown, as FLAC allows; decoders read to the end. `release` frees libFLAC's encoder, after
 * which it takes and gives nothing.
 */
export class FlacStreamEncoder {
  private readonly encoder: number;
  private readonly carry = new SampleCarry();
  private out: Uint8Array[] = [];
  private released = false;

  constructor(sampleRate: number) {
    this.encoder = Flac.create_libflac_encoder(sampleRate, 1, 16, COMPRESSION, 0, false, 0);
    if (!this.encoder) throw new Error("libFLAC refused the encoder settings");
    const status = Flac.init_encoder_stream(this.encoder, (data: Uint8Array) => void this.out.push(data.slice()));
    if (status !== 0) {
      Flac.FLAC__stream_encoder_delete(this.encoder);
      throw new Error(`libFLAC init failed (${status})`);
    }
    live++;
  }

  encode(pcm: Uint8Array): Uint8Array {
    if (this.released) return new Uint8Array(0);
    const samples = samplesOf(this.carry.wholeSamples(pcm));
    if (samples.length) Flac.FLAC__stream_encoder_process_interleaved(this.encoder, Int32Array.from(samples), samples.length);
    return this.take();
  }

  flush(): Uint8Array {
    if (this.released) return new Uint8Array(0);
    Flac.FLAC__stream_encoder_finish(this.encoder);
    return this.take();
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    live--;
    Flac.FLAC__stream_encoder_delete(this.encoder);
  }

  private take(): Uint8Array {
    const bytes = Bun.concatArrayBuffers(this.out, Infinity, true) as Uint8Array;
    this.out = [];
    return bytes;
  }
}
