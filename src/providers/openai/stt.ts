import { ProviderError } from "../../errors.ts";
import type { RawUpstream, SttFamily, SttProvider, SttStream, SttStreamRequest, Transcription, TranscriptionRequest } from "../stt-types.ts";
import { setAudioFile, upstreamFetch, upstreamJson, type HttpProviderOptions } from "../upstream-http.ts";
import { OPENAI_REALTIME_FAMILY, OpenAiRealtimeStt } from "./realtime-stt.ts";

/** OpenAI `POST /audio/transcriptions` for files, and realtime transcription sessions where the server has them. */
export class OpenAiStt implements SttProvider {
  readonly open?: (req: SttStreamRequest) => Promise<SttStream>;
  readonly passthrough?: (req: SttStreamRequest) => Promise<RawUpstream>;

  constructor(
    private readonly options: HttpProviderOptions,
    /** `openai`, or another id for an OpenAI-compatible server. */
    readonly id = "openai",
    /** OpenAI's own API has realtime transcription; an OpenAI-compatible server is not assumed to. */
    realtime = id === "openai",
  ) {
    if (!realtime) return;
    const sessions = new OpenAiRealtimeStt(options, id);
    this.open = (req) => sessions.open(req);
    this.passthrough = (req) => sessions.passthrough(req);
  }

  family(): SttFamily | undefined {
    return this.open ? OPENAI_REALTIME_FAMILY : undefined;
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
      { method: "POST", headers: this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}, body: form, signal: req.signal },
      Math.max(this.options.connectTimeoutMs, 60_000),
    );
    const body = await upstreamJson<{ text?: unknown; segments?: { start: number; end: number; text: string }[] }>(this.id, res);
    if (typeof body.text !== "string") throw new ProviderError(`${this.id} answered a transcription without text`, true);
    const segments = (body.segments ?? []).map((s) => ({ text: s.text.trim(), start_ms: Math.round(s.start * 1000), end_ms: Math.round(s.end * 1000) }));
    return { text: body.text.trim(), segments };
  }
}
