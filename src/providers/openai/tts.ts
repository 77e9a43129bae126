import { AsyncQueue } from "../../util/async-queue.ts";
import { takeSentences } from "../sentences.ts";
import { ProviderError, type AudioFormat, type TtsEvent, type TtsProvider, type TtsStream, type TtsStreamRequest, type Voice } from "../types.ts";
import { bodyChunks, upstreamFetch } from "../upstream-http.ts";

export interface OpenAiOptions {
  apiKey?: string;
  baseUrl: string;
  /** Bound on connect / first byte of each request. */
  connectTimeoutMs: number;
  /** Longest silence inside a response before the upstream is given up. */
  idleTimeoutMs: number;
}

const PCM_RATE = 24000;
const VOICES = ["alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse", "marin", "cedar"];

/**
 * OpenAI `POST /audio/speech`. The endpoint takes whole inputs, so a streaming session sends one
 * request per utterance (sentence, or flushed text) and streams each response's bytes through as
 * they arrive. Provider options: `instructions` (native: gpt-4o-mini-tts honours it), `speed`.
 */
export class OpenAiTts implements TtsProvider {
  constructor(
    private readonly options: OpenAiOptions,
    /** `openai`, or another id for an OpenAI-compatible server. */
    readonly id = "openai",
  ) {}

  async open(req: TtsStreamRequest): Promise<TtsStream> {
    if (req.format !== "pcm" && req.format !== "mp3") throw new ProviderError(`openai streaming sessions produce pcm or mp3, not ${req.format}`, false);
    return new OpenAiTtsStream(this.options, req, this.id);
  }

  async voices(): Promise<Voice[]> {
    return VOICES.map((id) => ({ id, name: id, languages: [] }));
  }
}

class OpenAiTtsStream implements TtsStream {
  readonly audioFormat: AudioFormat;
  private readonly queue = new AsyncQueue<TtsEvent>();
  private readonly abort = new AbortController();
  private buffer = "";
  /** Utterances and flush marks, in order; one request in flight at a time keeps audio in order. */
  private readonly work: ({ text: string } | { flush: true } | { end: true })[] = [];
  private running = false;

  constructor(
    private readonly options: OpenAiOptions,
    private readonly req: TtsStreamRequest,
    private readonly provider: string,
  ) {
    this.audioFormat = { encoding: req.format === "mp3" ? "mp3" : "pcm_s16le", sampleRate: PCM_RATE, channels: 1 };
  }

  [Symbol.asyncIterator]() {
    return this.queue[Symbol.asyncIterator]();
  }

  write(text: string): void {
    const { sentences, rest } = takeSentences(this.buffer + text);
    this.buffer = rest;
    for (const s of sentences) this.push({ text: s });
  }

  flush(): void {
    this.pushRest();
    this.push({ flush: true });
  }

  end(): void {
    this.pushRest();
    this.push({ end: true });
  }

  cancel(): void {
    this.abort.abort();
    this.queue.end();
  }

  private pushRest(): void {
    const rest = this.buffer.trim();
    this.buffer = "";
    if (rest) this.push({ text: rest });
  }

  private push(item: (typeof this.work)[number]): void {
    this.work.push(item);
    if (!this.running) void this.drain();
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.work.length) {
        const item = this.work.shift()!;
        if ("flush" in item) this.queue.push({ type: "flushed" });
        else if ("end" in item) this.queue.end();
        else await this.speak(item.text);
      }
    } catch (err) {
      this.queue.fail(err);
    } finally {
      this.running = false;
    }
  }

  private async speak(input: string): Promise<void> {
    const { options, req } = this;
    const body: Record<string, unknown> = { model: req.model, input, voice: req.voice, response_format: req.format };
    if (req.options.instructions) body.instructions = req.options.instructions;
    if (req.options.speed) body.speed = Number(req.options.speed);
    const res = await upstreamFetch(
      this.provider,
      `${options.baseUrl}/audio/speech`,
      {
        method: "POST",
        headers: { "content-type": "application/json", ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
        body: JSON.stringify(body),
        signal: this.abort.signal,
      },
      options.connectTimeoutMs,
    );
    const type = res.headers.get("content-type") ?? "";
    if (!/^audio\/|^application\/octet-stream/.test(type)) {
      await res.body?.cancel();
      throw new ProviderError(`${this.provider} answered ${type || "no content type"} instead of audio`, true);
    }
    for await (const chunk of bodyChunks(this.provider, res, options.idleTimeoutMs, this.abort.signal)) this.queue.push({ type: "audio", audio: chunk });
  }
}
