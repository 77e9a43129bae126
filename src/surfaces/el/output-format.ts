import { Mp3StreamEncoder } from "../../audio/mp3.ts";
import { OggOpusStreamEncoder, OPUS_RATE } from "../../audio/ogg-opus.ts";
import type { PcmPromise } from "../../audio/pcm-delivery.ts";
import { wavHeader } from "../../audio/wav.ts";
import type { HttpAudioShape } from "../http-tts-port.ts";
import { ApiError } from "../../errors.ts";

export interface OutputFormat {
  /** What the TTS session produces: MP3 only where the providers' own is the one asked for (see `askedOfElevenLabs`). */
  format: "pcm" | "mp3";
  /** The sample rate the caller asked for (`pcm_16000` → 16000). */
  sampleRate: number;
  /** For `pcm_*`, `wav_*`, transcoded `mp3_*`, `ulaw_8000` and `alaw_8000`: the PCM the provider's audio is converted to. */
  pcm?: PcmPromise;
  /** How that PCM is packaged: LAME or Opus (Ogg) at the asked bitrate, or behind a streaming WAV header. */
  transcode?: { codec: "mp3" | "opus"; kbps: number } | { codec: "wav" };
}

/** ElevenLabs' default `output_format`. */
const DEFAULT_FORMAT = "mp3_44100_128";
/** MPEG-1/2/2.5 sample rates (LAME takes no other). */
const MP3_RATES = new Set([8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]);
const MP3_KBPS = new Set([8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 192, 224, 256, 320]);

/** What a refused `output_format` is told to use instead: the HTTP endpoints' formats, and the `stream-input` socket's (no `wav_*`). */
const HTTP_FORMATS = "mp3_<rate>_<bitrate>, opus_48000_<bitrate>, pcm_<rate>, wav_<rate>, ulaw_8000 or alaw_8000";
const STREAM_INPUT_FORMATS = "mp3_<rate>_<bitrate>, opus_48000_<bitrate>, pcm_<rate>, ulaw_8000 or alaw_8000";
const refused = (value: string, offered: string) => new ApiError("invalid_output_format", `output_format ${value} is not offered here: use ${offered}`, { param: "output_format" });

/** `output_format` as ElevenLabs spells it: `mp3_44100_128`, `opus_48000_64`, `pcm_16000`, `wav_22050`, `ulaw_8000`, … (default `mp3_44100_128`). */
export function parseOutputFormat(value: string | null | undefined, offered = HTTP_FORMATS): OutputFormat {
  const v = value || DEFAULT_FORMAT;
  if (v === "ulaw_8000" || v === "alaw_8000") return { format: "pcm", sampleRate: 8000, pcm: { rate: 8000, companding: v === "ulaw_8000" ? "ulaw" : "alaw" } };
  const opus = /^opus_48000_(\d{2,3})$/.exec(v);
  if (opus) {
    const kbps = Number(opus[1]);
    if (kbps < 6 || kbps > 510) throw refused(v, offered);
    return { format: "pcm", sampleRate: OPUS_RATE, pcm: { rate: OPUS_RATE }, transcode: { codec: "opus", kbps } };
  }
  const m = /^(mp3|pcm|wav)_(\d{4,5})(?:_(\d{1,3}))?$/.exec(v);
  if (!m || (m[1] !== "mp3" && m[3])) throw refused(v, offered);
  const sampleRate = Number(m[2]);
  if (m[1] === "pcm") return { format: "pcm", sampleRate, pcm: { rate: sampleRate } };
  if (m[1] === "wav") return { format: "pcm", sampleRate, pcm: { rate: sampleRate }, transcode: { codec: "wav" } };
  const kbps = Number(m[3] ?? 128);
  if (!MP3_RATES.has(sampleRate) || !MP3_KBPS.has(kbps)) throw refused(v, offered);
  return { format: "pcm", sampleRate, pcm: { rate: sampleRate }, transcode: { codec: "mp3", kbps } };
}

/** `output_format` of the stream-input WebSocket, whose audio frames have no place for a WAV header: `wav_*` is not offered there. */
export function parseStreamInputFormat(value: string | null | undefined): OutputFormat {
  const output = parseOutputFormat(value, STREAM_INPUT_FORMATS);
  if (output.transcode?.codec === "wav") throw refused(value ?? "", STREAM_INPUT_FORMATS);
  return output;
}

/** The HTTP shape's part for a transcoded format: LAME's frames, Ogg Opus pages, or the WAV header before the PCM. */
export function transcoding(transcode: OutputFormat["transcode"]): Pick<HttpAudioShape, "encoder" | "preamble"> {
  if (transcode?.codec === "mp3") return { encoder: (a) => new Mp3StreamEncoder(a.sampleRate, transcode.kbps) };
  if (transcode?.codec === "opus") return { encoder: () => new OggOpusStreamEncoder(transcode.kbps) };
  if (transcode?.codec === "wav") return { preamble: (a) => wavHeader(a.sampleRate, a.channels) };
  return {};
}

/** The interface's Content-Type table: `mp3_*` → audio/mpeg, `pcm_*` → audio/L16 with its rate, `wav_*` → audio/wav, `opus_*` → audio/ogg, else octet-stream. */
export function contentTypeOf(outputFormat: string, sampleRate: number): string {
  if (outputFormat.startsWith("mp3_")) return "audio/mpeg";
  if (outputFormat.startsWith("pcm_")) return `audio/L16; rate=${sampleRate}`;
  if (outputFormat.startsWith("wav_")) return "audio/wav";
  if (outputFormat.startsWith("opus_")) return "audio/ogg";
  return "application/octet-stream";
}
