import { CString, dlopen, FFIType, ptr, type Pointer } from "bun:ffi";

// CMU PocketSphinx 5prealpha (Debian: libpocketsphinx3, pocketsphinx-en-us) through bun:ffi.
// `cmd_ln_init` is variadic, which bun:ffi cannot call: the configuration is parsed from an argv
// with `cmd_ln_parse_r` instead. A decoder is single-threaded and not shareable: one per session,
// used only inside an audio worker.

export const MODEL_DIR = process.env.POCKETSPHINX_MODEL_DIR || "/usr/share/pocketsphinx/model/en-us";
export const SAMPLE_RATE = 16000;

function load() {
  const sphinxbase = dlopen("libsphinxbase.so.3", {
    cmd_ln_parse_r: { args: [FFIType.ptr, FFIType.ptr, FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.ptr },
  });
  const pocketsphinx = dlopen("libpocketsphinx.so.3", {
    ps_args: { args: [], returns: FFIType.ptr },
    ps_init: { args: [FFIType.ptr], returns: FFIType.ptr },
    ps_start_utt: { args: [FFIType.ptr], returns: FFIType.i32 },
    ps_process_raw: { args: [FFIType.ptr, FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    ps_end_utt: { args: [FFIType.ptr], returns: FFIType.i32 },
    ps_get_hyp: { args: [FFIType.ptr, FFIType.ptr], returns: FFIType.ptr },
  });
  return { ...sphinxbase.symbols, ...pocketsphinx.symbols };
}

let lib: ReturnType<typeof load> | undefined;

/** Whether the library and the model are on this machine; the reason when not. */
export function availability(): { ok: true } | { ok: false; reason: string } {
  try {
    lib ??= load();
  } catch (err) {
    return { ok: false, reason: `libpocketsphinx3 is not installed (${(err as Error).message})` };
  }
  if (!require("node:fs").existsSync(`${MODEL_DIR}/en-us`)) return { ok: false, reason: `no acoustic model at ${MODEL_DIR} (install pocketsphinx-en-us)` };
  return { ok: true };
}

export class SphinxDecoder {
  private readonly decoder: Pointer;
  private readonly score = new Int32Array(1);
  // The argv strings must outlive parsing: keep them referenced.
  private readonly argv: Buffer[];

  constructor() {
    const status = availability();
    if (!status.ok) throw new Error(status.reason);
    const args = ["-hmm", `${MODEL_DIR}/en-us`, "-lm", `${MODEL_DIR}/en-us.lm.bin`, "-dict", `${MODEL_DIR}/cmudict-en-us.dict`, "-logfn", "/dev/null"];
    this.argv = args.map((a) => Buffer.from(`${a}\0`));
    const pointers = new BigUint64Array(this.argv.map((b) => BigInt(ptr(b))));
    const config = lib!.cmd_ln_parse_r(null, lib!.ps_args(), args.length, ptr(pointers), 1);
    if (!config) throw new Error("pocketsphinx rejected its configuration");
    const decoder = lib!.ps_init(config);
    if (!decoder) throw new Error("pocketsphinx could not load its model");
    this.decoder = decoder as Pointer;
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
