import type { JsonSocketHandlers } from "./upstream-ws.ts";

// Some streaming recognizers have no keep-alive message (ElevenLabs Scribe realtime, OpenAI
// realtime, Deepgram Flux, Cartesia Ink: see upstreams.md) and may drop a socket that carries no
// audio, as in a call where only the application talks and the caller is muted. Their quiet
// socket is kept alive with a little silence instead. The upstream's clock counts that silence;
// the session's (the client's audio) does not, so the upstream's times are mapped back.

/** The silence one keep-alive carries. */
const SILENCE_MS = 100;

/**
 * The upstream's clock against the client's: silence the router added to the client's audio
 * (keep-alives here, padding elsewhere) counts on the first, not on the second.
 */
export class AddedSilence {
  /** The silences added, each at its place on the upstream's clock; back to back ones are one. */
  private readonly spans: { atMs: number; ms: number }[] = [];
  private addedMs = 0;

  /** `clientMs`: the client's audio sent so far. */
  constructor(private readonly clientMs: () => number) {}

  /** `ms` of silence goes upstream now, after all the client's audio counted so far. */
  add(ms: number): void {
    const atMs = this.upstreamMs;
    const last = this.spans.at(-1);
    if (last && last.atMs + last.ms === atMs) last.ms += ms;
    else this.spans.push({ atMs, ms });
    this.addedMs += ms;
  }

  /** The upstream's clock now (the client's audio and the silence added). */
  get upstreamMs(): number {
    return this.clientMs() + this.addedMs;
  }

  /** A time on the upstream's clock, on the client's: the silence added before it taken out. */
  clientTime(upstreamMs: number): number {
    let ms = upstreamMs;
    for (const span of this.spans) {
      if (span.atMs >= upstreamMs) break;
      ms -= Math.min(span.ms, upstreamMs - span.atMs);
    }
    return ms;
  }
}

/** Silence for a quiet upstream socket, and the upstream's times on the client's audio clock. */
export class SilenceKeepAlive extends AddedSilence {
  private readonly silence: Uint8Array;

  /**
   * `audioFormat`: the session's (`pcm_<rate>` or `ulaw_8000`); `clientMs`: the client's audio
   * sent so far; `open`: whether audio may still go (not after the end of stream); `frame`: the
   * silence as the protocol carries audio.
   */
  constructor(
    audioFormat: string,
    clientMs: () => number,
    private readonly open: () => boolean,
    private readonly frame: (silence: Uint8Array) => string | Uint8Array,
  ) {
    super(clientMs);
    this.silence = silenceOf(audioFormat, (Number(audioFormat.split("_")[1]) * (audioFormat.startsWith("ulaw") ? 1 : 2) * SILENCE_MS) / 1000);
  }

  /** The socket's keep-alive: silence once nothing went out for `everyMs`. */
  every(everyMs: number): NonNullable<JsonSocketHandlers<unknown>["keepAlive"]> {
    return { everyMs, frame: () => this.next() };
  }

  private next(): string | Uint8Array | undefined {
    if (!this.open()) return undefined;
    this.add(SILENCE_MS);
    return this.frame(this.silence);
  }
}

/** `bytes` of silence in `audioFormat` (µ-law's zero is 0xFF). */
export const silenceOf = (audioFormat: string, bytes: number) => new Uint8Array(bytes).fill(audioFormat.startsWith("ulaw") ? 0xff : 0);
