import { ProviderError, type SttFamily, type SttProvider, type Transcription, type TranscriptionRequest } from "../types.ts";
import { setAudioFile, upstreamFetch, upstreamJson, type HttpProviderOptions } from "../upstream-http.ts";

/** OpenAI's realtime transcription family (the streaming adapter is still to come). */
export const OPENAI_STT_FAMILY: SttFamily = {
  name: "openai-realtime",
  portableOptions: ["language", "keyterms", "silence_duration_ms", "speech_threshold", "interim_results"],
  turnDetector: "acoustic",
  turnStyles: ["acoustic", "semantic"],
  commitFrame: true,
  interimDefault: true,
  inputFormats: ["pcm_24000"],
  audioOptions: {},
  passthrough: true,
};

/** OpenAI `POST /audio/transcriptions` for files. */
export class OpenAiStt implements SttProvider {
  constructor(
    private readonly options: HttpProviderOptions,
    /** `openai`, or another id for an OpenAI-compatible server. */
    readonly id = "openai",
  ) {}

  family(): SttFamily {
    return OPENAI_STT_FAMILY;
  }

  async transcribe(req: TranscriptionRequest): Promise<Transcription> {
    const form = new FormData();
    form.set("model", req.model);
    setAudioFile(form, req);
    // whisper-1 gives segments in verbose_json; the gpt-4o transcribers answer json only.
    const verbose = req.model === "whisper-1";
    form.set("response_format", verbose ? "verbose_json" : "json");
    if (req.language) form.set("language", req.language.slice(0, 2));
    const res = await upstreamFetch(
      this.id,
      `${this.options.baseUrl}/audio/transcriptions`,
      { method: "POST", headers: this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}, body: form },
      Math.max(this.options.connectTimeoutMs, 60_000),
    );
    const body = await upstreamJson<{ text?: unknown; segments?: { start: number; end: number; text: string }[] }>(this.id, res);
    if (typeof body.text !== "string") throw new ProviderError(`${this.id} answered a transcription without text`, true);
    const segments = (body.segments ?? []).map((s) => ({ text: s.text.trim(), start_ms: Math.round(s.start * 1000), end_ms: Math.round(s.end * 1000) }));
    return { text: body.text.trim(), segments };
  }
}
