import { base64Of } from "../../audio/bytes.ts";
import { ProviderError } from "../../errors.ts";
import type { SttEvent, SttStream, SttStreamRequest } from "../stt-types.ts";
import { SilenceKeepAlive } from "../silence-keep-alive.ts";
import { type HttpProviderOptions, keepAliveEvery } from "../upstream-http.ts";
import { JsonSocketStream } from "../upstream-ws.ts";
import type { WireJson } from "../wire-json.ts";

// Transcripts arrive per conversation item, after the item's audio was committed; the events of
// an item are held back while an earlier item is still open, so each turn's events stay together.

/** Whether an OpenAI error object may be retried elsewhere: the request's own mistakes may not. */
const retryable = (error: { type?: string } | undefined) => error?.type !== "invalid_request_error";

interface Item {
  id: string;
  startMs: number;
  endMs?: number;
  /** The deltas so far: the cumulative interim text. */
  text: string;
  /** The server VAD ended its speech (its commit is the provider's, not ours). */
  stopped: boolean;
  /** Committed only to flush the end of the stream: no `committed` event unless it had words. */
  flushOnly: boolean;
  /** Its transcript had words. */
  heard: boolean;
  /** Events held back while an earlier item is still open. */
  held: SttEvent[];
  /** `committed` or `cleared`, once the audio buffer that made the item is closed. */
  closing?: SttEvent;
  transcribed: boolean;
}

/** The protocol carries audio as base64 inside JSON: one encode per frame. */
const appendOf = (audio: Uint8Array) => `{"type":"input_audio_buffer.append","audio":"${base64Of(audio)}"}`;

/** One transcription session over an open socket, as our SttStream. */
export class RealtimeTranscription implements SttStream {
  readonly stream: JsonSocketStream<SttEvent>;
  readonly ready: Promise<void>;
  private readonly items: Item[] = [];
  private readonly bytesPerMs: number;
  private sentBytes = 0;
  /** Where the audio not yet committed or cleared begins. */
  private bufferStartMs = 0;
  private uncommittedBytes = 0;
  /** The commits and clears we sent that are not answered yet, with their audio clocks. */
  private readonly commits: { atMs: number; flushOnly: boolean }[] = [];
  private readonly clears: number[] = [];
  private ending = false;
  /** OpenAI's realtime protocol has no keep-alive message; its audio_start_ms and audio_end_ms count the silence. */
  private readonly quiet: SilenceKeepAlive;

  constructor(
    ws: WebSocket,
    options: HttpProviderOptions,
    private readonly req: SttStreamRequest,
  ) {
    this.bytesPerMs = req.audioFormat === "ulaw_8000" ? 8 : 48;
    this.quiet = new SilenceKeepAlive(
      req.audioFormat,
      () => this.audioMs,
      () => !this.ending,
      (silence) => appendOf(silence),
    );
    let accept!: () => void;
    let reject!: (err: ProviderError) => void;
    this.ready = new Promise((resolve, fail) => {
      accept = resolve;
      reject = fail;
    });
    ws.addEventListener("close", () => reject(new ProviderError("openai closed the stream before the session was configured", true)));
    this.stream = new JsonSocketStream<SttEvent>("openai", ws, options.idleTimeoutMs, {
      keepAlive: this.quiet.every(keepAliveEvery(options)),
      onJson: (ev, s) => {
        if (ev.type === "session.updated") {
          s.answered();
          accept();
        } else if (ev.type === "error") {
          reject(new ProviderError(`openai refused the session: ${ev.error?.message}`, retryable(ev.error)));
          this.onError(ev.error ?? {});
        } else this.onEvent(ev);
      },
    });
  }

  private get audioMs(): number {
    return Math.round(this.sentBytes / this.bytesPerMs);
  }

  private onEvent(ev: WireJson): void {
    switch (ev.type) {
      case "input_audio_buffer.speech_started": {
        const item = this.item(ev.item_id);
        item.startMs = typeof ev.audio_start_ms === "number" ? this.quiet.clientTime(ev.audio_start_ms) : item.startMs;
        return this.emit(item, { type: "signal", origin: "provider", signal: "started", atMs: item.startMs });
      }
      case "input_audio_buffer.speech_stopped": {
        const item = this.item(ev.item_id);
        const atMs = typeof ev.audio_end_ms === "number" ? this.quiet.clientTime(ev.audio_end_ms) : this.audioMs;
        item.endMs = atMs;
        item.stopped = true;
        return this.emit(item, { type: "signal", origin: "provider", signal: "end", atMs });
      }
      case "input_audio_buffer.committed": {
        const item = this.item(ev.item_id);
        const ours = item.stopped ? undefined : this.commits.shift();
        const atMs = ours?.atMs ?? item.endMs ?? this.audioMs;
        item.endMs ??= atMs;
        item.flushOnly = ours?.flushOnly ?? false;
        item.closing = { type: "committed", origin: ours ? "client" : "provider", atMs };
        this.closeBuffer(atMs);
        return this.settle();
      }
      case "input_audio_buffer.cleared": {
        const atMs = this.clears.shift() ?? this.audioMs;
        const open = this.items.filter((i) => !i.closing);
        const item = open[0] ?? this.newItem("");
        for (const dropped of open.slice(1)) this.items.splice(this.items.indexOf(dropped), 1);
        item.closing = { type: "cleared", atMs };
        item.transcribed = true;
        this.closeBuffer(atMs);
        return this.settle();
      }
      case "conversation.item.input_audio_transcription.delta": {
        const item = this.items.find((i) => i.id === ev.item_id);
        if (!item || typeof ev.delta !== "string") return;
        item.text += ev.delta;
        if (this.req.interim && item.text.trim()) this.emit(item, { type: "transcript", final: false, text: item.text.trim(), startMs: item.startMs, endMs: item.endMs ?? this.audioMs });
        return;
      }
      case "conversation.item.input_audio_transcription.completed": {
        const item = this.items.find((i) => i.id === ev.item_id);
        if (!item) return;
        const text = (typeof ev.transcript === "string" ? ev.transcript : item.text).trim();
        if (text) this.emit(item, { type: "transcript", final: true, text, startMs: item.startMs, endMs: item.endMs ?? this.audioMs });
        item.heard = Boolean(text);
        item.transcribed = true;
        return this.settle();
      }
      case "conversation.item.input_audio_transcription.failed":
        return this.stream.fail(`openai could not transcribe an utterance: ${ev.error?.message ?? "no reason given"}`, retryable(ev.error));
    }
  }

  private onError(error: { type?: string; code?: string; message?: string }): void {
    // A commit of an empty buffer: nothing to transcribe, and the commit is still acknowledged.
    if (error.code === "input_audio_buffer_commit_empty" && this.commits.length) {
      const commit = this.commits.shift()!;
      const item = this.newItem("");
      item.closing = { type: "committed", origin: "client", atMs: commit.atMs };
      item.flushOnly = commit.flushOnly;
      item.transcribed = true;
      return this.settle();
    }
    this.stream.fail(`openai reported an error: ${error.message ?? error.code ?? "unknown"}`, retryable(error));
  }

  private newItem(id: string): Item {
    const item: Item = { id, startMs: this.bufferStartMs, text: "", stopped: false, flushOnly: false, heard: false, held: [], transcribed: false };
    this.items.push(item);
    return item;
  }

  private item(id: string): Item {
    return this.items.find((i) => i.id === id && !i.closing) ?? this.items.find((i) => i.id === id) ?? this.newItem(id);
  }

  private closeBuffer(atMs: number): void {
    this.bufferStartMs = atMs;
    this.uncommittedBytes = Math.max(0, this.sentBytes - atMs * this.bytesPerMs);
  }

  private emit(item: Item, ev: SttEvent): void {
    if (item === this.items[0]) this.stream.push(ev);
    else item.held.push(ev);
  }

  /** Closes finished items in order, releasing the next item's held events; ends the stream once all is said after `end()`. */
  private settle(): void {
    while (this.items[0]?.closing && this.items[0].transcribed) {
      const done = this.items.shift()!;
      if (!done.flushOnly || done.heard) this.stream.push(done.closing!);
      for (const ev of this.items[0]?.held.splice(0) ?? []) this.stream.push(ev);
    }
    const owed = this.commits.length > 0 || this.clears.length > 0 || this.items.some((i) => i.closing);
    if (owed) return;
    this.stream.answered();
    if (this.ending && this.items.length === 0) this.stream.finish();
  }

  send(audio: Uint8Array): void {
    this.sentBytes += audio.byteLength;
    this.uncommittedBytes += audio.byteLength;
    this.stream.send(appendOf(audio));
  }

  commit(flushOnly = false): void {
    this.commits.push({ atMs: this.audioMs, flushOnly });
    this.uncommittedBytes = 0;
    this.stream.send('{"type":"input_audio_buffer.commit"}');
    this.stream.expectAnswer();
  }

  clear(): void {
    this.clears.push(this.audioMs);
    this.uncommittedBytes = 0;
    this.stream.send('{"type":"input_audio_buffer.clear"}');
    this.stream.expectAnswer();
  }

  /**
   * The protocol has no end-of-stream frame: commit what is buffered (its answer also tells that
   * the server VAD has seen all the audio), wait for the transcripts, close.
   */
  end(): void {
    if (this.ending) return;
    this.ending = true;
    if (this.uncommittedBytes > 0) this.commit(true);
    else this.stream.expectAnswer();
    this.settle();
  }

  cancel(): void {
    this.stream.cancel();
  }

  get bufferedAmount(): number {
    return this.stream.bufferedAmount;
  }

  [Symbol.asyncIterator]() {
    return this.stream[Symbol.asyncIterator]();
  }
}
