import { ProviderError, type SttFamily, type SttProvider, type Transcription, type TranscriptionRequest } from "../types.ts";
import { upstreamFetch, type HttpProviderOptions } from "../upstream-http.ts";

interface ScribeWord {
  text: string;
  start: number;
  end: number;
  type: "word" | "spacing" | "audio_event";
}

/** ElevenLabs Scribe `POST /v1/speech-to-text` for files (Scribe realtime is still to come). */
export class ElevenLabsStt implements SttProvider {
  readonly id = "elevenlabs";

  constructor(private readonly options: HttpProviderOptions) {}

  family(): SttFamily | undefined {
    return undefined;
  }

  async transcribe(req: TranscriptionRequest): Promise<Transcription> {
    const form = new FormData();
    form.set("model_id", req.model);
    form.set("file", new Blob([req.bytes], req.mimeType ? { type: req.mimeType } : undefined), `audio.${req.container.toLowerCase().split(/[/ ]/)[0]}`);
    form.set("timestamps_granularity", "word");
    form.set("tag_audio_events", "false");
    if (req.language) form.set("language_code", req.language.slice(0, 2));
    const res = await upstreamFetch(
      this.id,
      `${this.options.baseUrl}/v1/speech-to-text`,
      { method: "POST", headers: this.options.apiKey ? { "xi-api-key": this.options.apiKey } : {}, body: form },
      Math.max(this.options.connectTimeoutMs, 60_000),
    );
    let body: { text?: unknown; words?: ScribeWord[] };
    try {
      body = (await res.json()) as typeof body;
    } catch {
      throw new ProviderError("elevenlabs answered a transcription that is not JSON", true);
    }
    if (typeof body.text !== "string") throw new ProviderError("elevenlabs answered a transcription without text", true);
    return { text: body.text.trim(), segments: sentences(body.words ?? []) };
  }
}

/** Scribe gives words, not segments: a segment per sentence, timed by its first and last word. */
function sentences(words: ScribeWord[]): Transcription["segments"] {
  const segments: Transcription["segments"] = [];
  let current: ScribeWord[] = [];
  const close = () => {
    if (!current.length) return;
    segments.push({ text: current.map((w) => w.text).join(" "), start_ms: Math.round(current[0]!.start * 1000), end_ms: Math.round(current.at(-1)!.end * 1000) });
    current = [];
  };
  for (const w of words) {
    if (w.type !== "word") continue;
    current.push(w);
    if (/[.?!]$/.test(w.text)) close();
  }
  close();
  return segments;
}
