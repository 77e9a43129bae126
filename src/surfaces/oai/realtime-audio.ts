import { alaw, mulaw } from "alawmulaw";
import { PcmResampler } from "../../audio/resampler.ts";
import { ApiError } from "../../errors.ts";
import { isObject } from "../../util/is-object.ts";

// The caller's audio on `/oai/realtime`: OpenAI's formats (16-bit PCM at 24 kHz, G.711 µ-law or
// A-law at 8 kHz), converted to the PCM rate the recognizer was planned for.

export type InputFormat = { type: "audio/pcm"; rate: 24000 } | { type: "audio/pcmu" } | { type: "audio/pcma" };

export const PCM_24K: InputFormat = { type: "audio/pcm", rate: 24000 };

/** `audio.input.format` of a session object; undefined when absent. */
export function inputFormatOf(value: unknown, param: string): InputFormat | undefined {
  if (value === undefined) return undefined;
  if (isObject(value)) {
    if (value.type === "audio/pcmu" || value.type === "audio/pcma") return { type: value.type };
    if (value.type === "audio/pcm" && (value.rate === undefined || value.rate === 24000)) return PCM_24K;
  }
  throw new ApiError("invalid_request", `${param} must be {"type":"audio/pcm","rate":24000}, {"type":"audio/pcmu"} or {"type":"audio/pcma"}`, { param });
}

const pcmOf = (samples: Int16Array) => new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);

/** The caller's audio as 16-bit PCM at `rate`, handed to `deliver` in the order it came. */
export class CallerAudio {
  private readonly decode: (bytes: Uint8Array) => Uint8Array;
  private readonly resampler: Promise<PcmResampler> | undefined;
  private order: Promise<unknown> = Promise.resolve();

  constructor(
    readonly format: InputFormat,
    rate: number,
    private readonly deliver: (pcm: Uint8Array) => void,
  ) {
    this.decode = format.type === "audio/pcmu" ? (b) => pcmOf(mulaw.decode(b)) : format.type === "audio/pcma" ? (b) => pcmOf(alaw.decode(b)) : (b) => b;
    const from = format.type === "audio/pcm" ? format.rate : 8000;
    if (from !== rate) this.resampler = PcmResampler.create(from, rate);
  }

  write(bytes: Uint8Array): void {
    const pcm = this.decode(bytes);
    const resampler = this.resampler;
    if (!resampler) return this.deliver(pcm);
    this.order = this.order.then(async () => this.deliver((await resampler).process(pcm)));
  }

  release(): void {
    this.resampler?.then((r) => r.destroy()).catch(() => {}); // a resampler that never started has nothing to free
  }
}
