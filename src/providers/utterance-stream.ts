import type { AsyncQueue } from "../util/async-queue.ts";
import { AUDIO_BACKLOG_BYTES, ttsEventQueue } from "./audio-backlog.ts";
import { UtteranceCutter, type Utterance } from "./sentences.ts";
import { ProviderError } from "../errors.ts";
import type { AudioFormat, TtsEvent, TtsStream } from "./types.ts";
import { BodyReader, bodyChunks } from "./upstream-http.ts";

/**
 * Text cut into utterances (a complete sentence as text arrives, or the text of each flush), spoken
 * one at a time so audio stays in order. A flush is answered once the utterances before it are
 * spoken. The next utterance goes only while the client has less than AUDIO_BACKLOG_BYTES of audio
 * left to read: a client that stops reading holds at most that plus one utterance's audio.
 */
export abstract class UtteranceStream implements TtsStream {
  private readonly cutter = new UtteranceCutter();
  private readonly work: (Utterance | { flush: true } | { end: true })[] = [];
  private running = false;
  private cancelled = false;
  /** Characters of the utterances handed on so far. */
  given = 0;

  constructor(
    readonly audioFormat: AudioFormat,
    protected readonly queue: AsyncQueue<TtsEvent>,
  ) {}

  [Symbol.asyncIterator]() {
    return this.queue[Symbol.asyncIterator]();
  }

  offerTo(take: ((event: TtsEvent) => boolean) | undefined): void {
    this.queue.offer = take;
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
    this.cancelled = true;
    this.work.length = 0;
    this.stop();
    this.queue.end();
  }

  /** White space written after the last utterance (the text's end), which no utterance carries. */
  protected trailing(): string {
    return this.cutter.carried;
  }

  /** Speaks one utterance: resolves once its audio is all in the queue. */
  protected abstract speak(utterance: Utterance): Promise<void>;
  /** Everything was spoken and the client ended the session. */
  protected abstract finish(): void;
  /** Drops the work in progress (the session was cancelled). */
  protected abstract stop(): void;

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
        else if ("end" in item) this.finish();
        else {
          const room = this.queue.roomFor(AUDIO_BACKLOG_BYTES);
          if (room) await room;
          if (this.cancelled) return;
          this.given += item.chars;
          await this.speak(item);
          this.queue.push({ type: "spoken", chars: this.given });
        }
      }
    } catch (err) {
      this.queue.fail(err);
    } finally {
      this.running = false;
    }
  }
}

/** One upstream request for one utterance: `abort` is the stream's, aborted only to cancel the request under way (`upstreamFetch`'s `own`). */
export type SpeakRequest = (input: string, abort: AbortController) => Promise<Response>;

/** How an upstream's answer to one utterance is read: the content it must be, and its events from the body's chunks as they arrive. */
export interface UtteranceAnswer {
  contentType: RegExp;
  events(chunks: AsyncIterable<Uint8Array>, utterance: Utterance): AsyncIterable<TtsEvent>;
}

/** The content of an answer whose body is the audio. */
const AUDIO_CONTENT = /^audio\/|^application\/octet-stream/;

/** A streaming TTS session over an HTTP API that takes whole inputs: one request per utterance, each answer's events passed on as they arrive. */
export class UtteranceTtsStream extends UtteranceStream {
  private readonly abort = new AbortController();
  /** A request is under way: only then is there anything to abort (an abort costs an error object and its listeners). */
  private speaking = false;

  constructor(
    audioFormat: AudioFormat,
    private readonly provider: string,
    private readonly idleTimeoutMs: number,
    private readonly request: SpeakRequest,
    /** Absent: the body is the audio. */
    private readonly answer?: UtteranceAnswer,
  ) {
    super(audioFormat, ttsEventQueue(provider));
  }

  protected finish(): void {
    this.queue.end();
  }

  protected stop(): void {
    if (this.speaking) this.abort.abort();
  }

  protected async speak(utterance: Utterance): Promise<void> {
    this.speaking = true;
    try {
      await this.relay(await this.request(utterance.text, this.abort), utterance);
    } finally {
      this.speaking = false;
    }
  }

  private async relay(res: Response, utterance: Utterance): Promise<void> {
    const type = res.headers.get("content-type") ?? "";
    if (!(this.answer?.contentType ?? AUDIO_CONTENT).test(type)) {
      await res.body?.cancel();
      throw new ProviderError(`${this.provider} answered ${type || "no content type"} instead of audio`, true);
    }
    if (!this.answer) return this.relayAudio(res);
    for await (const event of this.answer.events(bodyChunks(this.provider, res, this.idleTimeoutMs, this.abort.signal), utterance)) {
      this.queue.push(event);
      // The upstream is read no faster than the client takes the audio: nothing piles up here.
      const room = event.type === "audio" && this.queue.roomFor(AUDIO_BACKLOG_BYTES);
      if (room) await room;
    }
  }

  /** The body is the audio: each chunk goes on as it is read, with nothing in between (the per-chunk path of every HTTP TTS upstream). */
  private async relayAudio(res: Response): Promise<void> {
    const body = new BodyReader(this.provider, res, this.idleTimeoutMs, this.abort.signal);
    try {
      for (let audio = await body.next(); audio; audio = body.buffered() ?? (await body.next())) {
        this.queue.push({ type: "audio", audio });
        const room = this.queue.roomFor(AUDIO_BACKLOG_BYTES);
        if (room) await room;
      }
    } finally {
      body.release();
    }
  }
}
