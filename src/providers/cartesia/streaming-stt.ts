import type { AudioLane, AudioPool } from "../../../workers/audio-pool.ts";
import type { FromAudio } from "../../../workers/audio-protocol.ts";
import { CLOSE } from "../../errors.ts";
import { ProviderError, type SttEvent, type SttFamily, type SttStream, type SttStreamRequest } from "../types.ts";
import { JsonSocketStream } from "../upstream-ws.ts";
import { cartesiaSocketError } from "./api.ts";

// Ink-Whisper over Cartesia's manual-finalize `/stt/websocket`: binary audio in, plain-text
// `finalize` (transcribe what is buffered; answered by `flush_done`) and `close` (answered by the
// last transcripts and `done`). Cartesia has no turn detector here, so the router VAD decides
// turns: it reads the same audio in the audio workers, and with auto commit each end of speech
// sends a `finalize` whose `flush_done` commits the turn.

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

/** A `finalize` on its way: who asked, and router events that came after it (they belong to the next turn). */
interface PendingFinalize {
  by: "client" | "router" | "clear";
  atMs: number;
  after: SttEvent[];
}

export class InkStream implements SttStream {
  private readonly socket: JsonSocketStream<SttEvent>;
  private readonly lane?: AudioLane;
  private readonly pending: PendingFinalize[] = [];
  private readonly bytesPerMs: number;
  private sentBytes = 0;
  /** Where the audio behind the next transcript begins: the end of the last final. */
  private segmentStartMs = 0;
  private closing = false;
  /**
   * The router VAD hears speech that no client commit or clear has ended. The VAD is not reset by
   * those, so the `speech_ended` of an utterance they cut short is ignored: its turn is over.
   */
  private speaking = false;

  constructor(
    provider: string,
    ws: WebSocket,
    idleMs: number,
    private readonly req: SttStreamRequest,
    pool: AudioPool | undefined,
  ) {
    const rate = Number(req.audioFormat.split("_")[1]);
    this.bytesPerMs = (rate * 2) / 1000;
    this.socket = new JsonSocketStream<SttEvent>(provider, ws, idleMs, { onJson: (ev) => this.onMessage(ev), normalClose: (code) => this.closing && code === CLOSE.normal });
    if (req.routerVad && pool) this.lane = pool.open({ rate, vad: req.routerVad, autoCommit: false, interim: false }, (msg) => this.onVad(msg));
  }

  [Symbol.asyncIterator]() {
    return this.socket[Symbol.asyncIterator]();
  }

  send(audio: Uint8Array): void {
    this.sentBytes += audio.byteLength;
    this.socket.send(audio); // copied out before the VAD lane takes the buffer
    this.lane?.audio(audio);
  }

  commit(): void {
    this.finalize("client", this.sentMs);
    this.lane?.commit();
  }

  clear(): void {
    this.finalize("clear", this.sentMs);
    this.lane?.clear();
  }

  /** With the router VAD, `close` goes upstream once it has read all the audio, so the last turn is committed first. */
  end(): void {
    if (this.lane) this.lane.end();
    else this.close();
  }

  cancel(): void {
    this.lane?.drop();
    this.socket.cancel();
  }

  private get sentMs(): number {
    return Math.round(this.sentBytes / this.bytesPerMs);
  }

  private finalize(by: PendingFinalize["by"], atMs: number): void {
    this.pending.push({ by, atMs, after: [] });
    this.socket.send("finalize");
    this.socket.expectAnswer();
  }

  private close(): void {
    this.closing = true;
    this.socket.send("close");
    this.socket.expectAnswer();
  }

  /** A router event: held back behind a finalize on its way, so it lands in the turn it belongs to. */
  private emitRouter(ev: SttEvent): void {
    const last = this.pending.at(-1);
    if (last) last.after.push(ev);
    else this.socket.push(ev);
  }

  private onVad(msg: FromAudio): void {
    if (msg.ev === "speech_started") {
      this.speaking = true;
      this.emitRouter({ type: "signal", origin: "router", signal: "started", atMs: msg.atMs });
    } else if (msg.ev === "speech_ended") {
      if (!this.speaking) return;
      this.speaking = false;
      if (this.req.commitStrategy === "auto") this.finalize("router", msg.atMs);
      else this.emitRouter({ type: "signal", origin: "router", signal: "end", atMs: msg.atMs });
    } else if (msg.ev === "committed" || msg.ev === "cleared") this.speaking = false; // in order with the audio before the commit
    else if (msg.ev === "ended") this.close();
    else if (msg.ev === "error") this.socket.fail(`the router VAD failed: ${msg.message}`);
  }

  private onMessage(ev: Record<string, any>): void {
    if (ev.type === "error" || (ev.type === undefined && ev.error !== undefined)) {
      const err = cartesiaSocketError(ev);
      return this.socket.fail(err.message, err.retryable);
    }
    if (ev.type === "transcript") this.transcript(ev);
    else if (ev.type === "flush_done") this.flushDone();
    else if (ev.type === "done") this.socket.finish();
  }

  /** `text` is a delta since the last final; `duration` the audio behind it, when given. */
  private transcript(ev: Record<string, any>): void {
    const final = ev.is_final === true;
    const startMs = this.segmentStartMs;
    const endMs = typeof ev.duration === "number" ? startMs + Math.round(ev.duration * 1000) : this.sentMs;
    if (final) this.segmentStartMs = endMs;
    if (this.pending[0]?.by === "clear") return; // the audio being cleared
    const text = typeof ev.text === "string" ? ev.text.trim() : "";
    if (text && (final || this.req.interim)) this.socket.push({ type: "transcript", final, text, startMs, endMs });
  }

  private flushDone(): void {
    const done = this.pending.shift();
    if (!done) return;
    if (done.by === "clear") this.socket.push({ type: "cleared", atMs: done.atMs });
    else {
      if (done.by === "router") this.socket.push({ type: "signal", origin: "router", signal: "end", atMs: done.atMs });
      this.socket.push({ type: "committed", origin: done.by, atMs: done.atMs });
    }
    for (const ev of done.after) this.socket.push(ev);
    if (!this.pending.length && !this.closing) this.socket.answered();
  }
}
