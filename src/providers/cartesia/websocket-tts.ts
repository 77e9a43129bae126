import { sampleClock } from "../../audio/audio-clock.ts";
import type { WireJson } from "../wire-json.ts";
import { ttsEventQueue } from "../audio-backlog.ts";
import { pacedText } from "../paced-text.ts";
import { ProviderError } from "../../errors.ts";
import type { AudioFormat, TtsEvent, TtsStream, TtsStreamRequest } from "../types.ts";
import type { HttpProviderOptions } from "../upstream-http.ts";
import { JsonSocketStream, openUpstreamSocket } from "../upstream-ws.ts";
import { WordTimer } from "../timing/word-timer.ts";
import { cartesiaHeaders, cartesiaSocketBase, cartesiaSocketError } from "./api.ts";
import { SONIC_PCM_RATE, SONIC_RAW_PCM, sonicRequest } from "./sonic-request.ts";

// Sonic over `/tts/websocket`: one socket and one context per session. Text goes out as it comes
// (`continue: true`; Cartesia buffers it for up to `max_buffer_delay_ms` to speak whole phrases),
// a flush is `transcript:"", continue:true, flush:true` answered by `flush_done` with its flush id,
// the end is `transcript:"", continue:false` answered by `done`. Asked for timings, it asks for
// Cartesia's word timestamps (`add_timestamps`), laid over the text written (WordTimer); as they
// may come after the audio they time, audio waits until the words timed reach its end (or its
// flush or the end is answered), so that timings go out before their audio.

const MAX_BUFFER_DELAY_MS = 5000;

/** Connects; the options are checked before anything is sent. */
export async function openSonicWebSocket(provider: string, options: HttpProviderOptions, req: TtsStreamRequest): Promise<TtsStream> {
  const generation = { ...sonicRequest(req, SONIC_RAW_PCM), ...maxBufferDelay(req.options.max_buffer_delay_ms), ...(req.alignment ? { add_timestamps: true } : {}) };
  const ws = await openUpstreamSocket(provider, `${cartesiaSocketBase(options)}/tts/websocket`, { headers: cartesiaHeaders(options) });
  return pacedText(new SonicContextStream(provider, ws, options.idleTimeoutMs, generation, req.alignment ? new WordTimer() : undefined));
}

function maxBufferDelay(value: string | undefined): { max_buffer_delay_ms?: number } {
  if (value === undefined) return {};
  const ms = Number(value);
  if (value.trim() === "" || !Number.isInteger(ms) || ms < 0 || ms > MAX_BUFFER_DELAY_MS) {
    throw new ProviderError(`cartesia option max_buffer_delay_ms must be a whole number from 0 to ${MAX_BUFFER_DELAY_MS}, not ${JSON.stringify(value)}`, false);
  }
  return { max_buffer_delay_ms: ms };
}

class SonicContextStream implements TtsStream {
  readonly audioFormat: AudioFormat = { encoding: "pcm_s16le", sampleRate: SONIC_PCM_RATE, channels: 1 };
  private readonly contextId = crypto.randomUUID();
  private readonly socket: JsonSocketStream<TtsEvent>;
  /** Flushes not yet answered, in order: Cartesia's flush id, or 0 for a flush with no new text (answered here, in turn). */
  private readonly flushes: number[] = [];
  private flushesSent = 0;
  private wroteSinceFlush = false;
  private wroteAny = false;
  private ending = false;
  /** With timings: the characters written when each flush was asked, by flush id. */
  private readonly flushMarks = new Map<number, number>();
  /** With timings: audio waiting for the words that time it, with where it ends on the stream. */
  private held: { audio: Uint8Array; end: number }[] = [];
  private readonly clock = sampleClock(SONIC_PCM_RATE, 2);

  constructor(
    provider: string,
    ws: WebSocket,
    idleMs: number,
    private readonly generation: Record<string, unknown>,
    private readonly timer?: WordTimer,
  ) {
    // Any close before `done` (or our own close) is a failure: the context was not finished.
    this.socket = new JsonSocketStream<TtsEvent>(provider, ws, idleMs, { onJson: (ev) => this.onMessage(ev), normalClose: () => false }, ttsEventQueue(provider));
  }

  [Symbol.asyncIterator]() {
    return this.socket[Symbol.asyncIterator]();
  }

  write(text: string): void {
    if (!text) return;
    this.wroteAny = this.wroteSinceFlush = true;
    this.timer?.write(text);
    this.request({ transcript: text, continue: true });
  }

  flush(): void {
    if (!this.wroteSinceFlush) {
      this.flushes.push(0);
      return this.releaseLocalFlushes();
    }
    this.wroteSinceFlush = false;
    this.flushes.push(++this.flushesSent);
    if (this.timer) this.flushMarks.set(this.flushesSent, this.timer.written);
    this.request({ transcript: "", continue: true, flush: true });
    this.socket.expectAnswer();
  }

  end(): void {
    this.ending = true;
    if (!this.wroteAny) return this.socket.finish(); // no context was ever opened upstream
    this.request({ transcript: "", continue: false });
    this.socket.expectAnswer();
  }

  cancel(): void {
    this.socket.send(JSON.stringify({ context_id: this.contextId, cancel: true }));
    this.socket.cancel();
  }

  private request(fields: { transcript: string; continue: boolean; flush?: true }): void {
    this.socket.send(JSON.stringify({ ...this.generation, ...fields, context_id: this.contextId }));
  }

  private onMessage(ev: WireJson): void {
    if (ev.context_id !== undefined && ev.context_id !== this.contextId) return;
    if (ev.type === "error" || (ev.type === undefined && ev.error !== undefined)) {
      const err = cartesiaSocketError(ev);
      return this.socket.fail(err.message, err.retryable);
    }
    if (ev.type === "chunk" && typeof ev.data === "string" && ev.data) this.audio(Buffer.from(ev.data, "base64"));
    else if (ev.type === "timestamps" && this.timer) this.timestamps(ev.word_timestamps);
    else if (ev.type === "flush_done") this.flushDone(typeof ev.flush_id === "number" ? ev.flush_id : this.flushes.find((id) => id > 0));
    else if (ev.type === "done") {
      this.settle();
      this.socket.finish();
    }
  }

  private audio(audio: Uint8Array): void {
    if (!this.timer) return this.socket.push({ type: "audio", audio });
    this.held.push({ audio, end: this.clock.advance(audio) });
    this.release(this.timer.until);
  }

  /** `{words, start, end}` (seconds on the context's timeline). */
  private timestamps(words: WireJson | undefined): void {
    const [starts, ends] = [words?.start, words?.end];
    if (!Array.isArray(starts) || !Array.isArray(ends)) return;
    const times = this.timer!.words(starts.map((start: number, i: number) => ({ start: Number(start), end: Number(ends[i] ?? start) })));
    if (times.chars.length) this.socket.push({ type: "alignment", alignment: times });
    this.release(this.timer!.until);
  }

  /** Sends the held audio that ends by `until`. */
  private release(until: number): void {
    while (this.held[0] && this.held[0].end <= until) this.socket.push({ type: "audio", audio: this.held.shift()!.audio });
  }

  /** Everything up to a flush (or the end) has been generated: the white space left is timed at the last word's end, and all held audio goes. */
  private settle(written?: number): void {
    if (!this.timer) return;
    const rest = this.timer.rest(written);
    if (rest.chars.length) this.socket.push({ type: "alignment", alignment: rest });
    this.release(Number.POSITIVE_INFINITY);
  }

  private flushDone(id: number | undefined): void {
    const at = id === undefined ? -1 : this.flushes.indexOf(id);
    if (at < 0) return;
    this.settle(this.flushMarks.get(id!));
    this.flushMarks.delete(id!);
    for (let i = 0; i <= at; i++) this.socket.push({ type: "flushed" });
    this.flushes.splice(0, at + 1);
    this.releaseLocalFlushes();
    if (!this.flushes.length && !this.ending) this.socket.answered();
  }

  private releaseLocalFlushes(): void {
    while (this.flushes[0] === 0) {
      this.flushes.shift();
      this.socket.push({ type: "flushed" });
    }
  }
}
