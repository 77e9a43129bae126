import type { WireJson } from "../wire-json.ts";
import { ttsEventQueue } from "../audio-backlog.ts";
import { pacedText } from "../paced-text.ts";
import { ProviderError, type AudioFormat, type TtsEvent, type TtsStream, type TtsStreamRequest } from "../types.ts";
import type { HttpProviderOptions } from "../upstream-http.ts";
import { JsonSocketStream, openUpstreamSocket } from "../upstream-ws.ts";
import { cartesiaHeaders, cartesiaSocketBase, cartesiaSocketError } from "./api.ts";
import { SONIC_PCM_RATE, SONIC_RAW_PCM, sonicRequest } from "./sonic-request.ts";

// Sonic over `/tts/websocket`: one socket and one context per session. Text goes out as it comes
// (`continue: true`; Cartesia buffers it for up to `max_buffer_delay_ms` to speak whole phrases),
// a flush is `transcript:"", continue:true, flush:true` answered by `flush_done` with its flush id,
// the end is `transcript:"", continue:false` answered by `done`.

const MAX_BUFFER_DELAY_MS = 5000;

/** Connects; the options are checked before anything is sent. */
export async function openSonicWebSocket(provider: string, options: HttpProviderOptions, req: TtsStreamRequest): Promise<TtsStream> {
  const generation = { ...sonicRequest(req, SONIC_RAW_PCM), ...maxBufferDelay(req.options.max_buffer_delay_ms) };
  const ws = await openUpstreamSocket(provider, `${cartesiaSocketBase(options)}/tts/websocket`, { headers: cartesiaHeaders(options) });
  return pacedText(new SonicContextStream(provider, ws, options.idleTimeoutMs, generation));
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

  constructor(
    provider: string,
    ws: WebSocket,
    idleMs: number,
    private readonly generation: Record<string, unknown>,
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
    this.request({ transcript: text, continue: true });
  }

  flush(): void {
    if (!this.wroteSinceFlush) {
      this.flushes.push(0);
      return this.releaseLocalFlushes();
    }
    this.wroteSinceFlush = false;
    this.flushes.push(++this.flushesSent);
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
    if (ev.type === "chunk" && typeof ev.data === "string" && ev.data) this.socket.push({ type: "audio", audio: Buffer.from(ev.data, "base64") });
    else if (ev.type === "flush_done") this.flushDone(typeof ev.flush_id === "number" ? ev.flush_id : this.flushes.find((id) => id > 0));
    else if (ev.type === "done") this.socket.finish();
  }

  private flushDone(id: number | undefined): void {
    const at = id === undefined ? -1 : this.flushes.indexOf(id);
    if (at < 0) return;
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
