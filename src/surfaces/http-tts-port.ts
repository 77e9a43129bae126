import { PcmDelivery, type PcmPromise } from "../audio/pcm-delivery.ts";
import { ApiError, CLIENT_GONE_STATUS, CLOSE } from "../errors.ts";
import type { AudioFormat } from "../providers/types.ts";
import type { TtsPort, TtsSessionEvent } from "../sessions/tts-events.ts";

export interface HttpAudioShape {
  /** The PCM the caller was promised (rate, G.711 companding); the provider's PCM is converted to it. */
  pcm?: PcmPromise;
  /** Of the audio as delivered (after any resampling). */
  contentType(audio: AudioFormat): string;
  /** Encodes the delivered PCM (MP3 at the asked rate and bitrate), if the format is transcoded. */
  encoder?(audio: AudioFormat): PcmEncoder;
  /** Bytes that go before the audio (a streaming WAV header), if the format has any. */
  preamble?(audio: AudioFormat): Uint8Array;
  /** Wraps each piece of the body as it is sent (server-sent events), if the format frames its audio. */
  frame?(bytes: Uint8Array): Uint8Array;
  /** Bytes after the audio when it ended well (SSE's closing event). */
  trailer?(): Uint8Array | undefined;
  /** Character timings as the session gives them, for a format that carries them (ElevenLabs' with-timestamps). */
  alignment?(event: Extract<TtsSessionEvent, { type: "alignment" }>): void;
  /** Bytes that end a body that failed after it began, which then closes instead of breaking off (SSE's error event). */
  failure?(err: ApiError): Uint8Array;
}

/** A streaming encoder: bytes out for each piece of PCM in, and the rest at the end. */
export interface PcmEncoder {
  encode(pcm: Uint8Array): Uint8Array;
  flush(): Uint8Array;
  /** Frees what the encoder holds outside the JS heap; called once the response has ended, well or not, or was abandoned. */
  release?(): void;
}

/** Bytes the response may queue ahead of a slow client before the session waits for it. */
const HIGH_WATER_BYTES = 256 * 1024;

/**
 * A TTS session's output as one HTTP response, for the surfaces whose speech endpoints are plain
 * HTTP. The status is decided by what comes first: audio → 200 with the body streamed as it is
 * produced (chunks passed through, never copied, unless PCM must be converted to the promised
 * rate or companding); a failure before any audio → that error's
 * status in the surface's envelope. A failure after audio started can only cut the body short.
 * A client that goes away cancels the session.
 */
export class HttpTtsPort implements TtsPort {
  readonly response: Promise<Response>;
  private answer!: (res: Response) => void;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  private pulled: (() => void) | undefined;
  private audio: AudioFormat = { encoding: "pcm_s16le", sampleRate: 24000, channels: 1 };
  private error: ApiError | undefined;
  private cancelled: () => void = () => {};
  private delivery: PcmDelivery | undefined;
  private encoder: PcmEncoder | undefined;

  constructor(
    private readonly shape: HttpAudioShape,
    private readonly errorResponse: (err: ApiError) => Response,
  ) {
    this.response = new Promise((resolve) => (this.answer = resolve));
  }

  /**
   * The client went away: the session is aborted (no close follows), so the response is settled
   * here — before the first byte with nginx's "client closed request" that nobody will read, after
   * it by ending the body in error — and a send waiting for the reader is released.
   */
  abandon(): void {
    if (!this.controller) this.answer(new Response(null, { status: CLIENT_GONE_STATUS }));
    else this.end(new ApiError("upstream_error", "the client went away"));
    this.release();
    this.wake();
  }

  /** What to do when the client stops reading (the session's `abort`). */
  onCancel(cancel: () => void): void {
    this.cancelled = cancel;
  }

  event(event: TtsSessionEvent): void {
    if (event.type === "audio_started") this.started(event.format);
    else if (event.type === "alignment") this.shape.alignment?.(event);
    else if (event.type === "error")
      this.error = new ApiError(event.code, event.message, { ...(event.param ? { param: event.param } : {}), ...(event.retryAfter ? { retry_after: event.retryAfter } : {}) });
  }

  sendAudio(chunk: Uint8Array): void | Promise<void> {
    if (this.delivery) return this.delivery.process(chunk).then((bytes) => this.deliver(bytes));
    return this.deliver(chunk);
  }

  private started(audio: AudioFormat): void {
    this.delivery = PcmDelivery.for(this.shape.pcm, audio);
    this.audio = this.delivery ? { ...audio, sampleRate: this.shape.pcm!.rate } : audio;
    this.encoder = this.shape.encoder?.(this.audio);
  }

  private deliver(pcm: Uint8Array): void | Promise<void> {
    return this.enqueue(this.encoder && pcm.byteLength ? this.encoder.encode(pcm) : pcm);
  }

  private enqueue(chunk: Uint8Array): void | Promise<void> {
    if (!chunk.byteLength) return;
    const controller = this.controller ?? this.begin();
    controller.enqueue(this.shape.frame ? this.shape.frame(chunk) : chunk);
    if ((controller.desiredSize ?? 1) <= 0) return new Promise((resolve) => (this.pulled = resolve));
  }

  close(code: number, reason: string): void {
    const error = code === CLOSE.normal ? undefined : (this.error ?? new ApiError("upstream_error", reason));
    if (error && !this.controller) this.answer(this.errorResponse(error));
    else {
      if (!this.controller) this.begin();
      this.end(error);
    }
    this.release();
    this.wake();
  }

  /** Closes the body (after the encoder's last frames and the shape's trailer), or ends it with the error (an `ApiError`, so a reader can tell a 402 from a 502) or with the shape's failure bytes. */
  private end(error?: ApiError): void {
    try {
      const rest = error ? undefined : this.encoder?.flush(); // the encoder's last frames
      if (rest?.byteLength) this.controller!.enqueue(this.shape.frame ? this.shape.frame(rest) : rest);
      const last = error ? this.shape.failure?.(error) : this.shape.trailer?.();
      if (last) this.controller!.enqueue(last);
      if (error && !this.shape.failure) this.controller!.error(error);
      else this.controller!.close();
    } catch {
      // the client already cancelled the body, or it has ended
    }
  }

  /** Frees the PCM conversion and the encoder: every way the response ends (close, abandon, the reader cancelling) comes here. */
  private release(): void {
    this.delivery?.release();
    this.encoder?.release?.();
  }

  private begin(): ReadableStreamDefaultController<Uint8Array> {
    const body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        pull: () => this.wake(),
        cancel: () => {
          this.release();
          this.wake();
          this.cancelled();
        },
      },
      { highWaterMark: HIGH_WATER_BYTES, size: (chunk) => chunk?.byteLength ?? 0 },
    );
    const preamble = this.shape.preamble?.(this.audio);
    if (preamble) this.controller!.enqueue(this.shape.frame ? this.shape.frame(preamble) : preamble);
    this.answer(new Response(body, { status: 200, headers: { "content-type": this.shape.contentType(this.audio) } }));
    return this.controller!;
  }

  private wake(): void {
    const resolve = this.pulled;
    this.pulled = undefined;
    resolve?.();
  }
}
