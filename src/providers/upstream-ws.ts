import type { WireJson } from "./wire-json.ts";
import { CLOSE, ProviderError } from "../errors.ts";
import { AsyncQueue } from "../util/async-queue.ts";
import type { RawUpstream } from "./stt-types.ts";
import { withTraceparent } from "../tracing/spans.ts";

// WebSockets to upstream providers: connecting with the provider's auth, relaying frames for
// passthrough, and reading a JSON event protocol with the failure rules every adapter shares
// (a non-JSON frame, an abnormal close or a silent upstream ends the stream with a retryable
// ProviderError). Secrets never appear in the messages.

export interface UpstreamSocketInit {
  headers?: Record<string, string>;
  protocols?: string[];
}

/** Connects; a refused connection or failed handshake (401/429/5xx) is a retryable ProviderError. */
export function openUpstreamSocket(provider: string, url: string, init: UpstreamSocketInit = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: withTraceparent(init.headers ?? {}), protocols: init.protocols } as never);
    ws.binaryType = "arraybuffer";
    ws.onopen = () => {
      ws.onopen = ws.onerror = null;
      resolve(ws);
    };
    ws.onerror = () => reject(new ProviderError(`${provider} refused the stream (connection or handshake failed)`, true));
  });
}

/**
 * A provider's socket as it is, for `event_format=provider`. Frames and a close that arrive before
 * the relay listens (a greeting such as OpenAI's `session.created`) are kept and handed over.
 */
export function rawUpstream(ws: WebSocket): RawUpstream {
  const early: (string | Uint8Array)[] = [];
  let frameListener: ((frame: string | Uint8Array) => void) | undefined;
  let closeListener: ((code: number, reason: string) => void) | undefined;
  let closed: { code: number; reason: string } | undefined;
  ws.addEventListener("message", (e) => {
    const frame = typeof e.data === "string" ? e.data : new Uint8Array(e.data as ArrayBuffer);
    if (frameListener) frameListener(frame);
    else early.push(frame);
  });
  ws.addEventListener("close", (e) => {
    closed = { code: e.code, reason: e.reason };
    closeListener?.(e.code, e.reason);
  });
  return {
    send: (frame) => ws.send(frame),
    onFrame: (listener) => {
      frameListener = listener;
      for (const frame of early.splice(0)) listener(frame);
    },
    onClose: (listener) => {
      closeListener = listener;
      if (closed) listener(closed.code, closed.reason);
    },
    close: (code, reason) => ws.close(code, reason),
  };
}

let liveStreams = 0;

/** Upstream JSON streams not yet finished: each may hold a liveness or keep-alive timer (tests check none leaks). */
export function openUpstreamStreams(): number {
  return liveStreams;
}

export interface JsonSocketHandlers<E> {
  /** Each JSON text frame. Unknown event types should be ignored, never thrown on. */
  onJson(ev: WireJson, stream: JsonSocketStream<E>): void;
  /** Binary frames, for protocols that send audio as binary. */
  onBinary?(data: Uint8Array, stream: JsonSocketStream<E>): void;
  /** Close codes that end the stream normally (default: `CLOSE.normal`). */
  normalClose?(code: number): boolean;
  /** A frame sent when nothing went out for `everyMs`, for providers that drop idle sockets. */
  keepAlive?: { everyMs: number; frame: string | (() => string | Uint8Array | undefined) };
  /**
   * The upstream answers audio as it hears it, silence too (Deepgram Nova with interim results), and
   * the audio comes at `bytesPerSecond`: one that said nothing for the idle timeout while it was
   * sent at least that much audio has hung, and is given up (seen as audio goes on: a caller who
   * stops sending is owed nothing).
   */
  answersAudio?: { bytesPerSecond: number };
}

/**
 * An upstream socket speaking JSON events, turned into an async stream of our events. The adapter
 * maps frames in `onJson` and pushes; this class owns the failure rules and the liveness timer:
 * `expectAnswer()` after a frame that must be answered (a commit, an end, a flush) arms a timer
 * that every received frame pushes back; `answered()` disarms it. An upstream that stays silent
 * that long while owing an answer is given up, never left hanging; so is one that reads nothing
 * for that long while what was sent waits in the socket's buffer (`bufferedAmount`).
 */
export class JsonSocketStream<E> implements AsyncIterable<E> {
  private liveness?: ReturnType<typeof setTimeout>;
  /** For an upstream that answers audio: when audio first went unanswered by any frame, and how much since. */
  private unansweredSince: number | undefined;
  private unansweredBytes = 0;
  private readonly answersAudio?: { bytesPerSecond: number };
  /** When a frame was last sent, or last seen waiting to go out: the keep-alive goes once the socket was idle for its interval. */
  private lastBusy = performance.now();
  private readonly keepAlive?: ReturnType<typeof setInterval>;
  /** Bytes given to the socket, and the most of them it had written out when last looked at, and when. */
  private sentBytes = 0;
  private writtenBytes = 0;
  private wroteAt = 0;
  private writing?: ReturnType<typeof setInterval>;
  private done = false;

  constructor(
    private readonly provider: string,
    private readonly ws: WebSocket,
    private readonly idleMs: number,
    handlers: JsonSocketHandlers<E>,
    /** Where events wait to be read; a TTS stream's is weighed in audio and capped (audio-backlog.ts). */
    private readonly queue = new AsyncQueue<E>(),
  ) {
    liveStreams++;
    this.answersAudio = handlers.answersAudio;
    const ka = handlers.keepAlive;
    if (ka) {
      this.keepAlive = setInterval(
        () => {
          // A socket whose frames still wait to go out is not idle (a keep-alive of silence must not slip into a recording).
          if (this.ws.bufferedAmount > 0) this.lastBusy = performance.now();
          if (performance.now() - this.lastBusy < ka.everyMs) return;
          const frame = typeof ka.frame === "string" ? ka.frame : ka.frame();
          if (frame !== undefined) this.send(frame);
        },
        Math.min(1000, ka.everyMs / 2),
      );
    }
    ws.onmessage = (e) => {
      if (this.done) return;
      this.liveness?.refresh();
      this.unansweredSince = undefined;
      this.unansweredBytes = 0;
      let ev: unknown;
      try {
        ev = typeof e.data === "string" ? JSON.parse(e.data) : undefined;
      } catch {
        return this.fail(`${provider} sent a frame that is not JSON`);
      }
      // A frame an adapter cannot make sense of fails its stream, never the process.
      try {
        if (typeof e.data !== "string") handlers.onBinary?.(new Uint8Array(e.data as ArrayBuffer), this);
        else if (ev && typeof ev === "object") handlers.onJson(ev as WireJson, this);
      } catch (err) {
        this.fail(`${provider} sent a frame this adapter could not read: ${(err as Error).message}`);
      }
    };
    ws.onclose = (e) => {
      if (this.done) return;
      if ((handlers.normalClose ?? ((c: number) => c === CLOSE.normal))(e.code)) this.finish();
      else this.fail(`${provider} closed the stream: ${e.code} ${e.reason}`.trim());
    };
  }

  [Symbol.asyncIterator]() {
    return this.queue[Symbol.asyncIterator]();
  }

  push(event: E): void {
    this.queue.push(event);
  }

  send(frame: string | Uint8Array): void {
    this.lastBusy = performance.now();
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(frame);
    if (this.answersAudio && typeof frame !== "string") this.unanswered(frame.byteLength);
    this.sentBytes += typeof frame === "string" ? Buffer.byteLength(frame) : frame.byteLength;
    if (this.ws.bufferedAmount > 0) this.watchWriting();
  }

  /** Bytes sent that wait in the socket's buffer: the network (the upstream reading) has not taken them yet. */
  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  /** The last frame sent calls for an answer: arm the liveness timer. */
  expectAnswer(): void {
    if (this.liveness || this.done) return;
    this.liveness = setTimeout(() => this.fail(`${this.provider} went silent for ${this.idleMs} ms`), this.idleMs);
  }

  /** Nothing more is owed: disarm it. */
  answered(): void {
    clearTimeout(this.liveness);
    this.liveness = undefined;
  }

  /** The stream is complete: the iteration ends once the queued events are read. */
  finish(): void {
    this.stop();
    this.queue.end();
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(CLOSE.normal);
  }

  /** The upstream did something wrong: the stream ends with a retryable ProviderError. */
  fail(message: string, retryable = true): void {
    this.stop();
    this.queue.fail(new ProviderError(message, retryable));
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(CLOSE.normal);
  }

  /** Stop now; nothing more is yielded. */
  cancel(): void {
    this.finish();
  }

  /**
   * While frames wait in the socket's buffer, the upstream must go on reading: one that takes none
   * of them for the idle timeout has stopped, and is given up like a silent one. (A client
   * WebSocket tells no drain, so the buffer is looked at while it holds anything.)
   */
  private watchWriting(): void {
    if (this.writing || this.done) return;
    this.writtenBytes = this.sentBytes - this.ws.bufferedAmount;
    this.wroteAt = performance.now();
    this.writing = setInterval(
      () => {
        const buffered = this.ws.bufferedAmount;
        if (this.sentBytes - buffered > this.writtenBytes) {
          this.writtenBytes = this.sentBytes - buffered;
          this.wroteAt = performance.now();
        }
        if (buffered === 0) {
          clearInterval(this.writing);
          this.writing = undefined;
        } else if (performance.now() - this.wroteAt >= this.idleMs) this.fail(`${this.provider} read nothing of what was sent for ${this.idleMs} ms`);
      },
      Math.min(1000, this.idleMs / 4),
    );
  }

  private unanswered(bytes: number): void {
    const now = performance.now();
    this.unansweredSince ??= now;
    this.unansweredBytes += bytes;
    const heardMs = (this.unansweredBytes / this.answersAudio!.bytesPerSecond) * 1000;
    if (now - this.unansweredSince >= this.idleMs && heardMs >= this.idleMs) this.fail(`${this.provider} said nothing for ${this.idleMs} ms while it was sent audio`);
  }

  private stop(): void {
    if (!this.done) liveStreams--;
    this.done = true;
    clearTimeout(this.liveness);
    clearInterval(this.keepAlive);
    clearInterval(this.writing);
  }
}
