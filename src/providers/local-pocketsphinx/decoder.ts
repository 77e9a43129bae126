import { CString, dlopen, FFIType, ptr, read, type Pointer } from "bun:ffi";

// CMU PocketSphinx 5prealpha (Debian: libpocketsphinx3, pocketsphinx-en-us) through bun:ffi.
// `cmd_ln_init` is variadic, which bun:ffi cannot call: the configuration is parsed from an argv
// with `cmd_ln_parse_r` instead. A decoder is single-threaded, costs ~95 MiB and ~0.5 s to build:
// it serves one session at a time and is reused by the next (decoder-pool.ts), used only inside
// an audio worker.

/** Where Debian's pocketsphinx-en-us puts the model; `POCKETSPHINX_MODEL_DIR` (config.ts) overrides it. */
const DEFAULT_MODEL_DIR = "/usr/share/pocketsphinx/model/en-us";
export const SAMPLE_RATE = 16000;

function load() {
  const sphinxbase = dlopen("libsphinxbase.so.3", {
    cmd_ln_parse_r: { args: [FFIType.ptr, FFIType.ptr, FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.ptr },
    cmn_live_get: { args: [FFIType.ptr, FFIType.ptr], returns: FFIType.void },
    cmn_live_set: { args: [FFIType.ptr, FFIType.ptr], returns: FFIType.void },
  });
  const pocketsphinx = dlopen("libpocketsphinx.so.3", {
    ps_args: { args: [], returns: FFIType.ptr },
    ps_init: { args: [FFIType.ptr], returns: FFIType.ptr },
    ps_get_feat: { args: [FFIType.ptr], returns: FFIType.ptr },
    ps_start_stream: { args: [FFIType.ptr], returns: FFIType.i32 },
    ps_start_utt: { args: [FFIType.ptr], returns: FFIType.i32 },
    ps_process_raw: { args: [FFIType.ptr, FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    ps_end_utt: { args: [FFIType.ptr], returns: FFIType.i32 },
    ps_get_hyp: { args: [FFIType.ptr, FFIType.ptr], returns: FFIType.ptr },
  });
  return { ...sphinxbase.symbols, ...pocketsphinx.symbols };
}

let lib: ReturnType<typeof load> | undefined;

/** Whether the library and the model (in `modelDir`, unset: Debian's place) are on this machine; the reason when not. */
export function availability(modelDir: string | undefined): { ok: true } | { ok: false; reason: string } {
  const dir = modelDir || DEFAULT_MODEL_DIR;
  try {
    lib ??= load();
  } catch (err) {
    return { ok: false, reason: `libpocketsphinx3 is not installed (${(err as Error).message})` };
  }
  if (!require("node:fs").existsSync(`${dir}/en-us`)) return { ok: false, reason: `no acoustic model at ${dir} (install pocketsphinx-en-us)` };
  return { ok: true };
}

// sphinxbase's feat_t and cmn_t are not exported, but their layout has been the same since 2016
// (x86-64: feat_t.cepsize at 16, .cmn at 68, .cmn_struct at 88; cmn_t.veclen at 28). They are
// read only after the fields around them hold the values they must.
const FEAT_T = { cepsize: 16, cmn: 68, cmnStruct: 88 } as const;
const CMN_T = { veclen: 28 } as const;
/** cmn_type_t: the model asks for batch CMN; decoding live switches it to live. */
const CMN_TYPE = { batch: 1, live: 2 } as const;

/** The live cepstral mean normalisation of a decoder: where its estimate lives, and the model's initial one. */
function liveCmn(decoder: Pointer): { cmn: Pointer; initial: Float32Array } {
  const feat = lib!.ps_get_feat(decoder);
  const cepsize = feat ? read.i32(feat, FEAT_T.cepsize) : 0;
  const type = feat ? read.i32(feat, FEAT_T.cmn) : -1;
  const cmn = feat && cepsize > 0 && cepsize <= 64 && (type === CMN_TYPE.batch || type === CMN_TYPE.live) ? read.ptr(feat, FEAT_T.cmnStruct) : 0;
  if (!cmn || read.i32(cmn, CMN_T.veclen) !== cepsize) throw new Error("libsphinxbase's feature layout is not the one this build knows: decoders cannot be reset between sessions");
  const initial = new Float32Array(cepsize);
  lib!.cmn_live_get(cmn as Pointer, ptr(initial));
  return { cmn: cmn as Pointer, initial };
}

export class SphinxDecoder {
  private readonly decoder: Pointer;
  private readonly score = new Int32Array(1);
  // The argv strings must outlive parsing: keep them referenced.
  private readonly argv: Buffer[];
  private readonly cmn: { cmn: Pointer; initial: Float32Array };

  constructor(modelDir: string | undefined) {
    const status = availability(modelDir);
    if (!status.ok) throw new Error(status.reason);
    const dir = modelDir || DEFAULT_MODEL_DIR;
    const args = ["-hmm", `${dir}/en-us`, "-lm", `${dir}/en-us.lm.bin`, "-dict", `${dir}/cmudict-en-us.dict`, "-logfn", "/dev/null"];
    this.argv = args.map((a) => Buffer.from(`${a}\0`));
    const pointers = new BigUint64Array(this.argv.map((b) => BigInt(ptr(b))));
    const config = lib!.cmd_ln_parse_r(null, lib!.ps_args(), args.length, ptr(pointers), 1);
    if (!config) throw new Error("pocketsphinx rejected its configuration");
    const decoder = lib!.ps_init(config);
    if (!decoder) throw new Error("pocketsphinx could not load its model");
    this.decoder = decoder as Pointer;
    this.cmn = liveCmn(this.decoder);
  }

  /**
   * Makes the decoder hear the next session as it would any other: the front end's noise
   * estimate (`ps_start_stream`) and the live CMN estimate, which adapts after every utterance,
   * start again from the model's values. `cmn_live_set` weighs the initial mean as 500 frames,
   * as later PocketSphinx releases initialise it; every session starts from that same state.
   */
  reset(): void {
    lib!.ps_start_stream(this.decoder);
    lib!.cmn_live_set(this.cmn.cmn, ptr(this.cmn.initial));
  }

  start(): void {
    lib!.ps_start_utt(this.decoder);
  }

  process(samples: Int16Array): void {
    if (samples.length) lib!.ps_process_raw(this.decoder, ptr(samples), samples.length, 0, 0);
  }

  hypothesis(): string {
    const p = lib!.ps_get_hyp(this.decoder, ptr(this.score));
    return p ? new CString(p).toString() : "";
  }

  /** Ends the utterance and returns its final hypothesis. */
  end(): string {
    lib!.ps_end_utt(this.decoder);
    return this.hypothesis();
  }
}
