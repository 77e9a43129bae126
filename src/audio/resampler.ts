import SpeexResampler from "@echogarden/speex-resampler-wasm";
// By its path: the package's exports do not include its WASM.
import speexWasm from "../../node_modules/@echogarden/speex-resampler-wasm/wasm/speex-resampler-nonsimd.wasm" with { type: "file" };
import { SampleCarry } from "./sample-carry.ts";

// Streaming sample-rate conversion of 16-bit mono PCM with SpeexDSP's resampler (compiled to
// WASM), for surfaces that promise the caller a rate the provider does not produce
// (`pcm_16000` from a 24 kHz voice). One resampler per stream keeps its filter state across
// chunks, so chunk boundaries leave no clicks.

interface SpeexModule {
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  _speex_resampler_init(channels: number, inRate: number, outRate: number, quality: number, errPtr: number): number;
  _speex_resampler_process_int(state: number, channel: number, input: number, inLenPtr: number, output: number, outLenPtr: number): number;
  _speex_resampler_destroy(state: number): void;
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
}

let loading: Promise<SpeexModule> | undefined;
// Emscripten's loader is told where the WASM is: by itself it looks beside its script, which in `bun run build`'s executable is elsewhere.
const speex = () => (loading ??= SpeexResampler({ locateFile: () => speexWasm }) as Promise<SpeexModule>);

/** Speex quality 0–10; 5 is its default, good for speech at a small cost. */
const QUALITY = 5;

export class PcmResampler {
  private state = 0;
  /** Scratch memory in the WASM heap: [inLen, outLen, err] words, then input, then output. */
  private scratch = 0;
  private capacity = 0;
  private readonly carry = new SampleCarry();

  private constructor(
    private readonly m: SpeexModule,
    readonly inRate: number,
    readonly outRate: number,
  ) {
    const err = m._malloc(4);
    this.state = m._speex_resampler_init(1, inRate, outRate, QUALITY, err);
    m._free(err);
    if (!this.state) throw new Error(`the resampler cannot convert ${inRate} Hz to ${outRate} Hz`);
  }

  static async create(inRate: number, outRate: number): Promise<PcmResampler> {
    return new PcmResampler(await speex(), inRate, outRate);
  }

  /** The chunk at the output rate (a new buffer: conversion cannot pass bytes through). */
  process(chunk: Uint8Array): Uint8Array {
    const input = this.carry.wholeSamples(chunk);
    const samples = input.byteLength / 2;
    if (!samples) return new Uint8Array(0);
    const outSamples = Math.ceil((samples * this.outRate) / this.inRate) + 16;
    const m = this.m;
    this.reserve(12 + input.byteLength + outSamples * 2);
    const inPtr = this.scratch + 12;
    const outPtr = inPtr + input.byteLength;
    m.HEAPU8.set(input, inPtr);
    m.HEAPU32[this.scratch / 4] = samples;
    m.HEAPU32[this.scratch / 4 + 1] = outSamples;
    m._speex_resampler_process_int(this.state, 0, inPtr, this.scratch, outPtr, this.scratch + 4);
    const produced = m.HEAPU32[this.scratch / 4 + 1];
    return m.HEAPU8.slice(outPtr, outPtr + produced * 2);
  }

  destroy(): void {
    if (!this.state) return;
    this.m._speex_resampler_destroy(this.state);
    if (this.scratch) this.m._free(this.scratch);
    this.state = this.scratch = 0;
  }

  private reserve(bytes: number): void {
    if (bytes <= this.capacity) return;
    if (this.scratch) this.m._free(this.scratch);
    this.capacity = Math.max(bytes, 64 * 1024);
    this.scratch = this.m._malloc(this.capacity);
  }
}
