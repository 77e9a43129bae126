import type { AsyncQueue } from "../util/async-queue.ts";
import { AUDIO_BACKLOG_BYTES, ttsEventQueue } from "./audio-backlog.ts";
import { UtteranceCutter, type Utterance } from "./sentences.ts";
import { ProviderError, type AudioFormat, type TtsEvent, type TtsStream } from "./types.ts";
import { bodyChunks } from "./upstream-http.ts";

/** One upstream request for one utterance: a response whose body is the audio. */
export type SpeakRequest = (input: string, signal: AbortSignal) => Promise<Response>;

/**
 * A streaming TTS session over an HTTP API that takes whole inputs: one request per utterance
 * (a complete sentence as text arrives, or the text of each flush), one at a time so audio stays
 * in order, each response's bytes streamed through as they arrive.
 */
export class UtteranceTtsStream implements TtsStream {
  private readonly queue: AsyncQueue<TtsEvent>;
  private readonly abort = new AbortController();
  private readonly cutter = new UtteranceCutter();
  private readonly work: (Utterance | { flush: true } | { end: true })[] = [];
  private running = false;
  /** Characters of the utterances requested so far. */
  given = 0;

  constructor(
    readonly audioFormat: AudioFormat,
    private readonly provider: string,
    private readonly idleTimeoutMs: number,
    private readonly request: SpeakRequest,
  ) {
    this.queue = ttsEventQueue(provider);
  }

  [Symbol.asyncIterator]() {
    return this.queue[Symbol.asyncIterator]();
  }

  write(text: string): void {
    for (const utterance of this.cutter.take(text)) this.push(utterance);
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
    const rest = this.cutter.rest();
    if (rest) this.push(rest);
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
        else {
          this.given += item.chars;
          await this.speak(item.text);
        }
      }
    } catch (err) {
      this.queue.fail(err);
    } finally {
      this.running = false;
    }
  }

  private async speak(input: string): Promise<void> {
    const res = await this.request(input, this.abort.signal);
    const type = res.headers.get("content-type") ?? "";
    if (!/^audio\/|^application\/octet-stream/.test(type)) {
      await res.body?.cancel();
      throw new ProviderError(`${this.provider} answered ${type || "no content type"} instead of audio`, true);
    }
    for await (const chunk of bodyChunks(this.provider, res, this.idleTimeoutMs, this.abort.signal)) {
      this.queue.push({ type: "audio", audio: chunk });
      // The upstream is read no faster than the client takes the audio: nothing piles up here.
      await this.queue.roomFor(AUDIO_BACKLOG_BYTES);
    }
  }
}
