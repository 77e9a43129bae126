import { ProviderError } from "../../errors.ts";
import { type RawUpstream, type SttProvider, type SttStream, type SttStreamRequest, type Transcription, type TranscriptionRequest, oneFamily } from "../stt-types.ts";
import { upstreamFetch, upstreamJson, type HttpProviderOptions } from "../upstream-http.ts";
import { sentenceSegments } from "../word-segments.ts";
import { isUniversalStreaming, openUniversalStreaming, streamingUrl, universalStreamingPassthrough, UNIVERSAL_STREAMING_FAMILY, type AssemblyAiStreamingOptions } from "./streaming-stt.ts";

export interface AssemblyAiOptions extends HttpProviderOptions {
  /** Longest wait for a submitted job to finish. */
  jobTimeoutMs?: number;
  /** The Universal-Streaming WebSocket URL; unset = derived from `baseUrl` (see `streamingUrl`). */
  streamingUrl?: string;
}

interface TranscriptJob {
  id: string;
  status: "queued" | "processing" | "completed" | "error";
  text?: string | null;
  words?: { text: string; start: number; end: number }[] | null;
  error?: string;
}

const FIRST_POLL_MS = 100;
const MAX_POLL_MS = 3000;

/**
 * AssemblyAI async transcription for files: upload the bytes, submit a job, poll it. Polling
 * starts at 100 ms and backs off to 3 s, so a short file is answered about as soon as it is done
 * without hammering the API on a long one. Universal-Streaming models stream (streaming-stt.ts).
 */
export class AssemblyAiStt implements SttProvider {
  readonly id = "assemblyai";
  private readonly streaming: AssemblyAiStreamingOptions;

  constructor(private readonly options: AssemblyAiOptions) {
    this.streaming = { ...options, streamingUrl: streamingUrl(options.baseUrl, options.streamingUrl) };
  }

  readonly family = oneFamily(UNIVERSAL_STREAMING_FAMILY, isUniversalStreaming);

  open(req: SttStreamRequest): Promise<SttStream> {
    return openUniversalStreaming(this.streaming, req);
  }

  passthrough(req: SttStreamRequest): Promise<RawUpstream> {
    return universalStreamingPassthrough(this.streaming, req);
  }

  async transcribe(req: TranscriptionRequest): Promise<Transcription> {
    const { upload_url } = await this.call<{ upload_url: string }>("/v2/upload", { method: "POST", headers: { "content-type": "application/octet-stream" }, body: req.bytes, signal: req.signal });
    const submitted: Record<string, unknown> = { audio_url: upload_url, speech_model: req.model };
    if (req.language) submitted.language_code = req.language.slice(0, 2);
    let job = await this.call<TranscriptJob>("/v2/transcript", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(submitted), signal: req.signal });
    const deadline = Date.now() + (this.options.jobTimeoutMs ?? 15 * 60_000);
    for (let wait = FIRST_POLL_MS; job.status === "queued" || job.status === "processing"; wait = Math.min(wait * 1.5, MAX_POLL_MS)) {
      if (Date.now() + wait > deadline) throw new ProviderError(`assemblyai job ${job.id} did not finish in time`, true);
      await Bun.sleep(wait);
      req.signal?.throwIfAborted();
      job = await this.call<TranscriptJob>(`/v2/transcript/${encodeURIComponent(job.id)}`, { signal: req.signal });
    }
    if (job.status !== "completed") throw new ProviderError(`assemblyai could not transcribe the file: ${job.error ?? job.status}`, false);
    const words = (job.words ?? []).map((w) => ({ text: w.text, start_ms: w.start, end_ms: w.end }));
    return { text: (job.text ?? "").trim(), segments: sentenceSegments(words) };
  }

  private async call<T>(path: string, init: RequestInit): Promise<T> {
    const headers = { ...(init.headers as Record<string, string>), ...(this.options.apiKey ? { authorization: this.options.apiKey } : {}) };
    const res = await upstreamFetch(this.id, `${this.options.baseUrl}${path}`, { ...init, headers }, Math.max(this.options.connectTimeoutMs, 60_000));
    return upstreamJson<T>(this.id, res);
  }
}
