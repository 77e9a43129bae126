// The audio a conversation sends its client, by the names profiles and the wire use (`pcm_16000`,
// `ulaw_8000`): one list for the profile check, the plan, and every surface that names the format.

/** 16-bit PCM or G.711 µ-law at a fixed rate, converted when a voice speaks at another. */
export interface OutputFormat {
  encoding: "pcm_s16le" | "ulaw";
  sampleRate: number;
}

export const OUTPUT_FORMATS: Record<string, OutputFormat> = {
  pcm_8000: { encoding: "pcm_s16le", sampleRate: 8000 },
  pcm_16000: { encoding: "pcm_s16le", sampleRate: 16000 },
  pcm_22050: { encoding: "pcm_s16le", sampleRate: 22050 },
  pcm_24000: { encoding: "pcm_s16le", sampleRate: 24000 },
  pcm_44100: { encoding: "pcm_s16le", sampleRate: 44100 },
  pcm_48000: { encoding: "pcm_s16le", sampleRate: 48000 },
  ulaw_8000: { encoding: "ulaw", sampleRate: 8000 },
};

/** What a profile that names no `pipeline.tts.format` sends. */
export const DEFAULT_OUTPUT_FORMAT = "pcm_16000";

/** The format's name on the wire: `pcm_24000`, `ulaw_8000`. */
export function outputFormatName(format: OutputFormat): string {
  return `${format.encoding === "ulaw" ? "ulaw" : "pcm"}_${format.sampleRate}`;
}
