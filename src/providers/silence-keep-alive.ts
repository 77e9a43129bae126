import type { JsonSocketHandlers } from "./upstream-ws.ts";

// Some streaming recognizers have no keep-alive message (ElevenLabs Scribe realtime, OpenAI
// realtime, Deepgram Flux, Cartesia Ink: see upstreams.md) and may drop a socket that carries no
// audio, as in a call where only the application talks and the caller is muted. Their quiet
// socket is kept alive with a little silence instead. The upstream's clock counts that silence;
// the session's (the client's audio) does not, so the upstream's times are mapped back.

/** The silence one keep-alive carries. */
const SILENCE_MS = 100;

/** Silence for a quiet upstream socket, and the upstream's times on the client's audio clock. */
export class SilenceKeepAlive {
  /** The silences sent, each at its place on the upstream's clock; back to back ones are one. */
  private readonly spans: { atMs: number; ms: number }[] = [];
  private sentMs = 0;
  private readonly silence: Uint8Array;

  /**
   * `audioFormat`: the session's (`pcm_<rate>` or `ulaw_8000`); `clientMs`: the client's audio
   * sent so far; `open`: whether audio may still go (not after the end of stream); `frame`: the
   * silence as the protocol carries audio.
   */
  constructor(
    audioFormat: string,
    private readonly clientMs: () => number,
    private readonly open: () => boolean,
    private readonly frame: (silence: Uint8Array) => string | Uint8Array,
  ) {
    const ulaw = audioFormat.startsWith("ulaw");
    const bytes = (Number(audioFormat.split("_")[1]) * (ulaw ? 1 : 2) * SILENCE_MS) / 1000;
    this.silence = new Uint8Array(bytes).fill(ulaw ? 0xff : 0); // µ-law's zero is 0xFF
  }

  /** The socket's keep-alive: silence once nothing went out for `everyMs`. */
  every(everyMs: number): NonNullable<JsonSocketHandlers<unknown>["keepAlive"]> {
    return { everyMs, frame: () => this.next() };
  }

  private next(): string | Uint8Array | undefined {
    if (!this.open()) return undefined;
    const atMs = this.clientMs() + this.sentMs;
    const last = this.spans.at(-1);
    if (last && last.atMs + last.ms === atMs) last.ms += SILENCE_MS;
    else this.spans.push({ atMs, ms: SILENCE_MS });
    this.sentMs += SILENCE_MS;
    return this.frame(this.silence);
  }

  /** The upstream's clock now (the client's audio and the silence sent). */
  get upstreamMs(): number {
    return this.clientMs() + this.sentMs;
  }

  /** A time on the upstream's clock, on the client's: the silence sent before it taken out. */
  clientTime(upstreamMs: number): number {
    let ms = upstreamMs;
    for (const span of this.spans) {
      if (span.atMs >= upstreamMs) break;
      ms -= Math.min(span.ms, upstreamMs - span.atMs);
    }
    return ms;
  }
}
