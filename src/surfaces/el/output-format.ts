import type { PcmPromise } from "../../audio/pcm-delivery.ts";
import { ApiError } from "../../errors.ts";

export interface OutputFormat {
  /** What the TTS session produces. */
  format: "pcm" | "mp3";
  /** The sample rate the caller asked for (`pcm_16000` → 16000). */
  sampleRate: number;
  /** For `pcm_*`, `ulaw_8000` and `alaw_8000`: the PCM the provider's audio is converted to. */
  pcm?: PcmPromise;
}

/** `output_format` as ElevenLabs spells it: `mp3_44100_128`, `pcm_16000`, `ulaw_8000`, … (default `mp3_44100_128`). */
export function parseOutputFormat(value: string | null | undefined): OutputFormat {
  const v = value || "mp3_44100_128";
  const m = /^(mp3|pcm)_(\d{4,5})(?:_(\d{2,3}))?$/.exec(v);
  if (v === "ulaw_8000" || v === "alaw_8000") return { format: "pcm", sampleRate: 8000, pcm: { rate: 8000, companding: v === "ulaw_8000" ? "ulaw" : "alaw" } };
  if (!m || (m[1] === "pcm" && m[3]))
    throw new ApiError("invalid_output_format", `output_format ${v} is not offered here: use mp3_<rate>_<bitrate>, pcm_<rate>, ulaw_8000 or alaw_8000`, { param: "output_format" });
  const sampleRate = Number(m[2]);
  return m[1] === "mp3" ? { format: "mp3", sampleRate } : { format: "pcm", sampleRate, pcm: { rate: sampleRate } };
}

/** The interface's Content-Type table: `mp3_*` → audio/mpeg, `pcm_*` → audio/L16 with its rate, else octet-stream. */
export function contentTypeOf(outputFormat: string, sampleRate: number): string {
  if (outputFormat.startsWith("mp3_")) return "audio/mpeg";
  if (outputFormat.startsWith("pcm_")) return `audio/L16; rate=${sampleRate}`;
  return "application/octet-stream";
}
