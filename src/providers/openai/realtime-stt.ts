import type { WireJson } from "../wire-json.ts";
import { base64Of } from "../../audio/bytes.ts";
import { ProviderError } from "../../errors.ts";
import type { RawUpstream, SttEvent, SttFamily, SttStream, SttStreamRequest } from "../types.ts";
import type { HttpProviderOptions } from "../upstream-http.ts";
import { JsonSocketStream, openUpstreamSocket, rawUpstream } from "../upstream-ws.ts";

// OpenAI realtime transcription sessions (GA protocol): `wss://…/v1/realtime?intent=transcription`,
// a `session.update` of type `transcription`, audio as base64 in `input_audio_buffer.append`.
// Transcripts arrive per conversation item, after the item's audio was committed; the events of
// an item are held back while an earlier item is still open, so each turn's events stay together.

/** OpenAI's realtime transcription family: its server VAD decides turns, semantic VAD on request. */
export const OPENAI_REALTIME_FAMILY: SttFamily = {
  name: "openai-realtime",
  portableOptions: ["language", "keyterms", "context", "silence_duration_ms", "speech_threshold", "interim_results"],
  turnDetector: "acoustic",
  turnStyles: ["acoustic", "semantic"],
  commitFrame: true,
  interimDefault: true,
  // OpenAI takes 24 kHz PCM or 8 kHz G.711 µ-law, nothing else.
  inputFormats: ["pcm_24000", "ulaw_8000"],
  audioOptions: {},
  passthrough: true,
};

const NUMERIC_OPTIONS = ["silence_duration_ms", "threshold", "prefix_padding_ms"] as const;
const CHOICES = { eagerness: ["low", "medium", "high", "auto"], noise_reduction: ["near_field", "far_field", "none"] } as const;
const NATIVE_OPTIONS = [...NUMERIC_OPTIONS, ...Object.keys(CHOICES), "prompt", "language"];

const refuse = (why: string) => new ProviderError(`openai: ${why}`, false);

function nativeNumber(options: Record<string, string>, name: string): number | undefined {
  if (options[name] === undefined) return undefined;
  const n = Number(options[name]);
  if (options[name].trim() === "" || !Number.isFinite(n) || n < 0) throw refuse(`provider_options[${name}] must be a number >= 0`);
  return n;
}

function nativeChoice(options: Record<string, string>, name: keyof typeof CHOICES): string | undefined {
  const v = options[name];
  if (v !== undefined && !(CHOICES[name] as readonly string[]).includes(v)) throw refuse(`provider_options[${name}] must be one of ${CHOICES[name].join(", ")}`);
  return v;
}

function turnDetection(req: SttStreamRequest): Record<string, unknown> | null {
  if (req.commitStrategy === "manual") return null;
  if (req.turnDetection === "semantic") return { type: "semantic_vad", eagerness: nativeChoice(req.options, "eagerness") ?? "auto" };
  const vad: Record<string, unknown> = { type: "server_vad" };
  const portable = { silence_duration_ms: req.portable?.silence_duration_ms, threshold: req.portable?.speech_threshold, prefix_padding_ms: undefined };
  for (const name of NUMERIC_OPTIONS) {
    const value = nativeNumber(req.options, name) ?? portable[name];
    if (value !== undefined) vad[name] = value;
  }
  return vad;
}

/** The `session` of the opening `session.update`: portable settings translated, provider_options winning. */
export function transcriptionSession(req: SttStreamRequest): Record<string, unknown> {
  for (const name of Object.keys(req.options)) {
    if (!NATIVE_OPTIONS.includes(name)) throw refuse(`provider_options[${name}] is not a transcription session setting (${NATIVE_OPTIONS.join(", ")})`);
  }
  if (req.channels !== 1) throw refuse("realtime transcription takes mono audio only");
  const portable = req.portable ?? {};
  const transcription: Record<string, unknown> = { model: req.model };
  const language = req.options.language ?? req.language?.split("-")[0].toLowerCase(); // OpenAI wants ISO-639-1
  if (language) transcription.language = language;
  // gpt-4o transcribers take a free-text prompt: the context, then the key terms.
  const prompt = req.options.prompt ?? [portable.context, portable.keyterms?.join(", ")].filter(Boolean).join("\n");
  if (prompt) transcription.prompt = prompt;
  const input: Record<string, unknown> = {
    format: req.audioFormat === "ulaw_8000" ? { type: "audio/pcmu" } : { type: "audio/pcm", rate: 24000 },
    transcription,
    turn_detection: turnDetection(req),
  };
  const noise = nativeChoice(req.options, "noise_reduction");
  if (noise) input.noise_reduction = noise === "none" ? null : { type: noise };
  return { type: "transcription", audio: { input } };
}

/** Bytes per second of an OpenAI input audio format, GA (`{type, rate}`) or beta (`pcm16`, `g711_*`) spelling; undefined if unknown. */
function formatBytesPerSecond(format: unknown): number | undefined {
  if (format === "pcm16") return 48000;
  if (format === "g711_ulaw" || format === "g711_alaw") return 8000;
  if (!format || typeof format !== "object") return undefined;
  const { type, rate } = format as { type?: unknown; rate?: unknown };
  if (type === "audio/pcm") return (typeof rate === "number" ? rate : 24000) * 2;
  if (type === "audio/pcmu" || type === "audio/pcma") return 8000;
  return undefined;
}

/**
 * Metering of a passthrough session's client frames: the audio of each `input_audio_buffer.append`,
 * counted at the rate of the session's declared `audio_format` even when the client's own
 * `session.update` changes the input format (so a switch to 8 kHz µ-law is not billed at 1/6).
 * Every text frame is parsed, so no spelling of the event type escapes it.
 */
export function appendMeter(declaredBytesPerSecond: number): (frame: string) => number {
  let current = declaredBytesPerSecond;
  return (frame) => {
    let ev: WireJson;
    try {
      ev = JSON.parse(frame);
    } catch {
      return 0; // OpenAI answers it with an error event; nothing to meter
    }
    if (ev?.type === "session.update") {
      current = formatBytesPerSecond(ev.session?.audio?.input?.format ?? ev.session?.input_audio_format) ?? current;
      return 0;
    }
    if (ev?.type !== "input_audio_buffer.append" || typeof ev.audio !== "string") return 0;
    return Math.round((Buffer.byteLength(ev.audio, "base64") * declaredBytesPerSecond) / current);
  };
}

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

/** One transcription session over an open socket, as our SttStream. */
class RealtimeTranscription implements SttStream {
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

  constructor(
    ws: WebSocket,
    idleMs: number,
    private readonly req: SttStreamRequest,
  ) {
    this.bytesPerMs = req.audioFormat === "ulaw_8000" ? 8 : 48;
    let accept!: () => void;
    let reject!: (err: ProviderError) => void;
    this.ready = new Promise((resolve, fail) => {
      accept = resolve;
      reject = fail;
    });
    ws.addEventListener("close", () => reject(new ProviderError("openai closed the stream before the session was configured", true)));
    this.stream = new JsonSocketStream<SttEvent>("openai", ws, idleMs, {
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
        item.startMs = ev.audio_start_ms ?? item.startMs;
        return this.emit(item, { type: "signal", origin: "provider", signal: "started", atMs: item.startMs });
      }
      case "input_audio_buffer.speech_stopped": {
        const item = this.item(ev.item_id);
        const atMs: number = ev.audio_end_ms ?? this.audioMs;
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
    // The protocol carries audio as base64 inside JSON: one encode per frame.
    const b64 = base64Of(audio);
    this.stream.send(`{"type":"input_audio_buffer.append","audio":"${b64}"}`);
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

  [Symbol.asyncIterator]() {
    return this.stream[Symbol.asyncIterator]();
  }
}

/** OpenAI realtime transcription: normalized sessions and passthrough. */
export class OpenAiRealtimeStt {
  constructor(
    private readonly options: HttpProviderOptions,
    private readonly id: string,
  ) {}

  private async socket(req: SttStreamRequest): Promise<WebSocket> {
    const session = transcriptionSession(req); // a bad option fails before connecting
    const url = `${this.options.baseUrl.replace(/^http/, "ws")}/realtime?intent=transcription`;
    const ws = await openUpstreamSocket(this.id, url, { headers: this.options.apiKey ? { Authorization: `Bearer ${this.options.apiKey}` } : {} });
    ws.send(JSON.stringify({ type: "session.update", session }));
    return ws;
  }

  async open(req: SttStreamRequest): Promise<SttStream> {
    const ws = await this.socket(req);
    const session = new RealtimeTranscription(ws, this.options.idleTimeoutMs, req);
    session.stream.expectAnswer(); // session.updated is owed
    await session.ready;
    return session;
  }

  /** The client speaks OpenAI's events itself; the session is opened with the settings of the query. */
  async passthrough(req: SttStreamRequest): Promise<RawUpstream> {
    return { ...rawUpstream(await this.socket(req)), audioBytes: appendMeter(req.audioFormat === "ulaw_8000" ? 8000 : 48000) };
  }
}
