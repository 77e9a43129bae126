import { ProviderError, type SttFamily, type SttProvider, type Transcription, type TranscriptionRequest } from "../types.ts";
import { setAudioFile, upstreamFetch, upstreamJson, type HttpProviderOptions } from "../upstream-http.ts";
import { sentenceSegments } from "../word-segments.ts";
import { CARTESIA_API_VERSION } from "./tts.ts";

/** Cartesia batch `POST /stt` (Ink-Whisper) for files; the STT WebSockets are still to come. */
export class CartesiaStt implements SttProvider {
  readonly id = "cartesia";

  constructor(private readonly options: HttpProviderOptions) {}

  family(): SttFamily | undefined {
    return undefined;
  }

  async transcribe(req: TranscriptionRequest): Promise<Transcription> {
    const form = new FormData();
    form.set("model", req.model);
    setAudioFile(form, req);
    form.append("timestamp_granularities[]", "word");
    if (req.language) form.set("language", req.language.slice(0, 2));
    const headers: Record<string, string> = { "cartesia-version": CARTESIA_API_VERSION, ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) };
    const res = await upstreamFetch(this.id, `${this.options.baseUrl}/stt`, { method: "POST", headers, body: form }, Math.max(this.options.connectTimeoutMs, 60_000));
    const body = await upstreamJson<{ text?: unknown; words?: { word: string; start: number; end: number }[] }>(this.id, res);
    if (typeof body.text !== "string") throw new ProviderError("cartesia answered a transcription without text", true);
    const words = (body.words ?? []).map((w) => ({ text: w.word, start_ms: Math.round(w.start * 1000), end_ms: Math.round(w.end * 1000) }));
    return { text: body.text.trim(), segments: sentenceSegments(words) };
  }
}
