import { ProviderError, type SttFamily, type SttProvider, type Transcription, type TranscriptionRequest } from "../types.ts";
import { setAudioFile, upstreamFetch, upstreamJson, type HttpProviderOptions } from "../upstream-http.ts";
import { sentenceSegments } from "../word-segments.ts";

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
    setAudioFile(form, req);
    form.set("timestamps_granularity", "word");
    form.set("tag_audio_events", "false");
    if (req.language) form.set("language_code", req.language.slice(0, 2));
    const res = await upstreamFetch(
      this.id,
      `${this.options.baseUrl}/v1/speech-to-text`,
      { method: "POST", headers: this.options.apiKey ? { "xi-api-key": this.options.apiKey } : {}, body: form },
      Math.max(this.options.connectTimeoutMs, 60_000),
    );
    const body = await upstreamJson<{ text?: unknown; words?: ScribeWord[] }>(this.id, res);
    if (typeof body.text !== "string") throw new ProviderError("elevenlabs answered a transcription without text", true);
    const words = (body.words ?? []).filter((w) => w.type === "word").map((w) => ({ text: w.text, start_ms: Math.round(w.start * 1000), end_ms: Math.round(w.end * 1000) }));
    return { text: body.text.trim(), segments: sentenceSegments(words) };
  }
}
