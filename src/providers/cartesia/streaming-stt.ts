import type { WireJson } from "../wire-json.ts";
import { CLOSE, ProviderError } from "../../errors.ts";
import type { SttEvent, SttFamily, SttStream, SttStreamRequest } from "../stt-types.ts";
import { SilenceKeepAlive } from "../silence-keep-alive.ts";
import { type HttpProviderOptions, keepAliveEvery } from "../upstream-http.ts";
import { JsonSocketStream } from "../upstream-ws.ts";
import { cartesiaSocketError } from "./api.ts";

// Ink-Whisper over Cartesia's manual-finalize `/stt/websocket`: binary audio in, plain-text
// `finalize` (transcribe what is buffered; answered by `flush_done`) and `close` (answered by the
// last transcripts and `done`). Cartesia has no turn detector here, so the session wraps this
// stream in the router's turns (sessions/router-turns.ts): with auto commit each end of speech
// commits it, a `finalize` whose `flush_done` commits the turn.

/** Ink-Whisper streaming: router-VAD turns, `finalize` as the commit frame. */
export const INK_WHISPER_FAMILY: SttFamily = {
  name: "cartesia-ink-whisper",
  portableOptions: ["language", "keyterms", "silence_duration_ms", "interim_results", "min_speech_duration_ms", "min_silence_duration_ms", "speech_threshold"],
  turnDetector: "none",
  turnStyles: ["acoustic"],
  commitFrame: true,
  interimDefault: true,
  // No µ-law: the router VAD, Ink's only turn detector, reads PCM.
  inputFormats: ["pcm_8000", "pcm_16000", "pcm_22050", "pcm_24000", "pcm_44100", "pcm_48000"],
  audioOptions: { encoding: "encoding", sampleRate: "sample_rate", encodingValues: { pcm: "pcm_s16le", ulaw: "pcm_mulaw" } }, // ulaw: for the type; never offered
  passthrough: true,
};

/** The upstream query: portable settings translated, provider_options winning. */
export function inkQuery(req: SttStreamRequest): URLSearchParams {
  if (req.channels !== 1) throw new ProviderError("cartesia ink-whisper takes mono audio only", false);
  const q = new URLSearchParams({ model: req.model, encoding: "pcm_s16le", sample_rate: req.audioFormat.split("_")[1] });
  if (req.language) q.set("language", req.language.split("-")[0].toLowerCase());
  const o = req.portable ?? {};
  if (o.silence_duration_ms !== undefined) q.set("max_silence_duration_secs", String(Number(o.silence_duration_ms) / 1000));
  for (const term of o.keyterms ?? []) q.append("keyterm", term);
  for (const [k, v] of Object.entries(req.options)) q.set(k, v);
  return q;
}

/** A `finalize` on its way: for a commit or a clear, and the audio time it was asked at. */
interface PendingFinalize {
  by: "commit" | "clear";
  atMs: number;
}

export class InkStream implements SttStream {
  private readonly socket: JsonSocketStream<SttEvent>;
  private readonly pending: PendingFinalize[] = [];
  private readonly bytesPerMs: number;
  private sentBytes = 0;
  /** Where the audio behind the next transcript begins, on Cartesia's clock: the end of the last final. */
  private segmentStartMs = 0;
  private closing = false;
  /** Ink has no keep-alive message. */
  private readonly quiet: SilenceKeepAlive;

  constructor(
    provider: string,
    ws: WebSocket,
    options: HttpProviderOptions,
    private readonly req: SttStreamRequest,
  ) {
    this.bytesPerMs = (Number(req.audioFormat.split("_")[1]) * 2) / 1000;
    this.quiet = new SilenceKeepAlive(
      req.audioFormat,
      () => this.sentMs,
      () => !this.closing,
      (silence) => silence,
    );
    this.socket = new JsonSocketStream<SttEvent>(provider, ws, options.idleTimeoutMs, {
      onJson: (ev) => this.onMessage(ev),
      normalClose: (code) => this.closing && code === CLOSE.normal,
      keepAlive: this.quiet.every(keepAliveEvery(options)),
    });
  }

  [Symbol.asyncIterator]() {
    return this.socket[Symbol.asyncIterator]();
  }

  send(audio: Uint8Array): void {
    this.sentBytes += audio.byteLength;
    this.socket.send(audio);
  }

  commit(): void {
    this.finalize("commit");
  }

  clear(): void {
    this.finalize("clear");
  }

  end(): void {
    this.closing = true;
    this.socket.send("close");
    this.socket.expectAnswer();
  }

  cancel(): void {
    this.socket.cancel();
  }

  get bufferedAmount(): number {
    return this.socket.bufferedAmount;
  }

  private get sentMs(): number {
    return Math.round(this.sentBytes / this.bytesPerMs);
  }

  private finalize(by: PendingFinalize["by"]): void {
    this.pending.push({ by, atMs: this.sentMs });
    this.socket.send("finalize");
    this.socket.expectAnswer();
  }

  private onMessage(ev: WireJson): void {
    if (ev.type === "error" || (ev.type === undefined && ev.error !== undefined)) {
      const err = cartesiaSocketError(ev);
      return this.socket.fail(err.message, err.retryable);
    }
    if (ev.type === "transcript") this.transcript(ev);
    else if (ev.type === "flush_done") this.flushDone();
    else if (ev.type === "done") this.socket.finish();
  }

  /** `text` is a delta since the last final; `duration` the audio behind it (keep-alive silence too), when given. */
  private transcript(ev: WireJson): void {
    const final = ev.is_final === true;
    const upstreamStartMs = this.segmentStartMs;
    const upstreamEndMs = typeof ev.duration === "number" ? upstreamStartMs + Math.round(ev.duration * 1000) : this.quiet.upstreamMs;
    if (final) this.segmentStartMs = upstreamEndMs;
    const startMs = this.quiet.clientTime(upstreamStartMs);
    const endMs = this.quiet.clientTime(upstreamEndMs);
    if (this.pending[0]?.by === "clear") return; // the audio being cleared
    const text = typeof ev.text === "string" ? ev.text.trim() : "";
    if (text && (final || this.req.interim)) this.socket.push({ type: "transcript", final, text, startMs, endMs });
  }

  private flushDone(): void {
    const done = this.pending.shift();
    if (!done) return;
    this.socket.push(done.by === "clear" ? { type: "cleared", atMs: done.atMs } : { type: "committed", origin: "client", atMs: done.atMs });
    if (!this.pending.length && !this.closing) this.socket.answered();
  }
}
