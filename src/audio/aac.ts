import { adtsHeader } from "./adts.ts";
import { samplesOf } from "./bytes.ts";
import { SampleCarry } from "./sample-carry.ts";

// FFmpeg's AAC encoder compiled to WebAssembly (`@mediabunny/aac-encoder`, MPL-2.0). The package
// exports only a Mediabunny extension that runs it in a Worker; its emscripten module (the .wasm
// inlined, so the single binary needs no file beside it) is driven here in-process instead. The
// package's `exports` hide that file, hence the path into node_modules, which `bun build` bundles.
// It is CommonJS (`exports.default`): `require` reads it alike in Bun and in the bundle, where a
// default import gets the function in the one and the exports object in the other.
const { default: createAacModule } = require("../../node_modules/@mediabunny/aac-encoder/dist/modules/build/aac.js");

/** The C functions of the package's `src/bridge.c` (pointers are numbers, the pts an int64). */
interface AacModule {
  HEAPU8: Uint8Array;
  _init_encoder(channels: number, sampleRate: number, bitrate: number): number;
  _get_encoder_frame_size(ctx: number): number;
  _get_encode_input_ptr(ctx: number, bytes: number): number;
  _send_frame(ctx: number, pts: bigint): number;
  /** The next packet's size, 0 when there is none yet. */
  _receive_packet(ctx: number): number;
  _get_encoded_data(ctx: number): number;
  _flush_encoder_start(ctx: number): void;
  _close_encoder(ctx: number): void;
}

// One module for the process (instantiating it takes tens of milliseconds); each encoder is a context in its heap.
const aac = (await createAacModule()) as unknown as AacModule;
/** Contexts not yet released: the module's heap grows to hold them and never shrinks. */
let live = 0;

/** How many AAC encoders hold a context in the module's heap (tests check that every response frees its own). */
export const liveAacEncoders = () => live;

/**
 * Streaming AAC-LC in ADTS for 16-bit mono PCM: each call encodes the whole 1024-sample frames it
 * completes (so a call holds the event loop only for its own audio) and returns the packets the
 * encoder has ready, each behind its ADTS header. ADTS cannot say where the encoder's priming and
 * the last frame's zero padding are, so decoders give one or two frames (43–85 ms at 24 kHz)
 * more than the speech. `release` frees the context in the module's heap; a released encoder
 * takes and gives nothing.
 */
export class AacStreamEncoder {
  private readonly ctx: number;
  private readonly frame: number;
  private readonly carry = new SampleCarry();
  private pending = new Int16Array(0);
  private pts = 0;
  private released = false;

  constructor(
    private readonly sampleRate: number,
    kbps: number,
  ) {
    this.ctx = aac._init_encoder(1, sampleRate, kbps * 1000);
    if (!this.ctx) throw new Error(`the AAC encoder refused ${sampleRate} Hz at ${kbps} kb/s`);
    live++;
    this.frame = aac._get_encoder_frame_size(this.ctx);
  }

  encode(pcm: Uint8Array): Uint8Array {
    if (this.released) return new Uint8Array(0); // its context may already belong to another encoder
    const input = samplesOf(this.carry.wholeSamples(pcm));
    const all = new Int16Array(this.pending.length + input.length);
    all.set(this.pending);
    all.set(input, this.pending.length);
    const whole = all.length - (all.length % this.frame);
    this.pending = all.slice(whole);
    const out: Uint8Array[] = [];
    for (let at = 0; at < whole; at += this.frame) out.push(...this.send(all.subarray(at, at + this.frame)));
    return Bun.concatArrayBuffers(out, Infinity, true) as Uint8Array;
  }

  flush(): Uint8Array {
    if (this.released) return new Uint8Array(0);
    const out = this.pending.length ? this.send(this.pending) : []; // zero-padded to a whole frame
    this.pending = new Int16Array(0);
    aac._flush_encoder_start(this.ctx);
    out.push(...this.packets());
    return Bun.concatArrayBuffers(out, Infinity, true) as Uint8Array;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    live--;
    aac._close_encoder(this.ctx);
  }

  /** One frame in (shorter ones padded with silence), the packets it completes out. */
  private send(samples: Int16Array): Uint8Array[] {
    const pointer = aac._get_encode_input_ptr(this.ctx, this.frame * 4);
    if (!pointer) throw new Error("the AAC encoder could not allocate its input");
    const input = new Float32Array(aac.HEAPU8.buffer, pointer, this.frame);
    for (let i = 0; i < this.frame; i++) input[i] = i < samples.length ? samples[i] / 32768 : 0;
    const status = aac._send_frame(this.ctx, BigInt(this.pts));
    if (status < 0) throw new Error(`the AAC encoder failed (${status})`);
    this.pts += this.frame;
    return this.packets();
  }

  private packets(): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (let size = aac._receive_packet(this.ctx); size !== 0; size = aac._receive_packet(this.ctx)) {
      if (size < 0) throw new Error(`the AAC encoder failed (${size})`);
      const data = aac._get_encoded_data(this.ctx);
      // HEAPU8 is read after each call: the heap may have grown, which replaces the view.
      out.push(adtsHeader(this.sampleRate, size), aac.HEAPU8.slice(data, data + size));
    }
    return out;
  }
}
