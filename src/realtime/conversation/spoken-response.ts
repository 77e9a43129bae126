import { type PcmPromise, PcmDelivery } from "../../audio/pcm-delivery.ts";
import { CLOSE, type ErrorCode } from "../../errors.ts";
import type { TtsPort, TtsSessionEvent } from "../../sessions/tts-events.ts";
import type { OutputFormat } from "../output-formats.ts";
import type { Interruptible } from "../app-messages.ts";
import type { ConversationEvent } from "./conversation-events.ts";

// One answer of the application, spoken: its own TTS session (its own credit hold, fallback and
// activity record), fed the application's tokens as they arrive and closed at `last: true`, or by
// the router when no token has come for the quiet time (an application that forgot `last`). Its
// audio goes to the client converted to the conversation's output format; a barge-in stops it.
// Audio goes out as fast as it is made, so the client holds what it has yet to play: the response
// counts as playing until its audio has had time to play in real time from its first byte.

/** What a response needs of the text-to-speech room: a TTS session for this id, speaking to `port` (in `language`, when the answer names one). */
export type OpenTts = (id: string, port: TtsPort, language?: string) => { command(cmd: { type: "text"; text: string } | { type: "close" }): void; interrupt(): void; abort(): void };

export type ResponseEnd =
  /** Spoken to its end, or stopped by a barge-in: the characters billed. */
  | { ok: true; characters: number }
  /** The TTS session ended with an error close (`code`), after the error event it sent. */
  | { ok: false; code: number; reason: string; error?: { code: ErrorCode; message: string } };

export interface ResponseHooks {
  event(event: ConversationEvent): void;
  sendAudio(chunk: Uint8Array): void | Promise<void>;
  ended(response: SpokenResponse, end: ResponseEnd): void;
}

export class SpokenResponse {
  /** The text given so far (what an interruption reports as spoken: there are no word timings). */
  private text = "";
  /** What may stop the response: each token's `interruptible` narrows it (one sent "none" makes it play to its end). */
  private stoppableBy = { speech: true, dtmf: true };
  /** The application allowed its next response to cut this one off. */
  preemptible = false;
  /** The application sent `last: true`: no more tokens belong to this response. */
  complete = false;
  private audioBytes = 0;
  private characters = 0;
  private stopped = false;
  /** The TTS session closed: nothing more will be generated. */
  private generated = false;
  private firstAudioAt: number | undefined;
  private error: { code: ErrorCode; message: string } | undefined;
  private delivery: PcmDelivery | undefined;
  /** The voice of the fallback model that connected, as its status told it (none for the primary's). */
  private fallbackVoice: string | undefined;
  /** Its audio began (`audio_started`): a provider has spoken some of it. */
  private speaking = false;
  /** The provider speaking it failed after its audio began: told once the next candidate connects. */
  private failure: { previous: string; reason: string } | undefined;
  private readonly session: ReturnType<OpenTts>;
  /** Finishes the response once `quietMs` pass without a token. */
  private quiet: Timer | undefined;
  private readonly sessionClosed = Promise.withResolvers<void>();

  constructor(
    readonly id: string,
    openTts: OpenTts,
    private readonly output: OutputFormat,
    private readonly quietMs: number,
    private readonly hooks: ResponseHooks,
    language?: string,
  ) {
    this.session = openTts(id, { event: (ev) => this.onEvent(ev), sendAudio: (chunk) => this.onAudio(chunk), close: (code, reason) => this.onClose(code, reason) }, language);
  }

  add(token: string, last: boolean, interruptible: Interruptible = "any", preemptible = false): void {
    if (this.complete) return;
    this.text += token;
    if (interruptible === "none" || interruptible === "dtmf") this.stoppableBy.speech = false;
    if (interruptible === "none" || interruptible === "speech") this.stoppableBy.dtmf = false;
    this.preemptible = preemptible;
    this.hooks.event({ type: "response_text", responseId: this.id, token, last });
    if (token) this.session.command({ type: "text", text: token });
    if (!last) {
      if (this.quiet) this.quiet.refresh();
      else this.quiet = setTimeout(() => this.finish(), this.quietMs);
    } else {
      clearTimeout(this.quiet);
      this.complete = true;
      this.session.command({ type: "close" });
    }
  }

  /** No more tokens will come: what was given is spoken, and the response ends (told as an empty last token). */
  finish(): void {
    this.add("", true);
  }

  interruptibleBy(by: "speech" | "dtmf"): boolean {
    return this.stoppableBy[by];
  }

  /** Settles once the TTS session has closed: nothing more of the response is being made. */
  get made(): Promise<void> {
    return this.sessionClosed.promise;
  }

  /** Milliseconds of audio sent to the client so far. */
  get audioMs(): number {
    const bytesPerSecond = this.output.sampleRate * (this.output.encoding === "pcm_s16le" ? 2 : 1);
    return Math.round((this.audioBytes / bytesPerSecond) * 1000);
  }

  /** Milliseconds of its audio the client has had time to play. */
  private get playedMs(): number {
    return this.firstAudioAt === undefined ? 0 : Math.min(Math.round(performance.now() - this.firstAudioAt), this.audioMs);
  }

  /** Being generated, or its audio still playing at the client. */
  get playing(): boolean {
    return !this.stopped && (!this.generated || this.playedMs < this.audioMs);
  }

  /**
   * Stops generating now and sends no more audio (billed for the text the provider was given).
   * What the listener heard, for the application: the time played, and the text up to the word
   * that share of the audio reached (there are no word timings).
   */
  interrupt(): { spokenText: string; audioMs: number } {
    this.stopped = true;
    clearTimeout(this.quiet);
    if (!this.generated) this.session.interrupt();
    const played = this.playedMs;
    const share = this.audioMs ? played / this.audioMs : 0;
    const cut = Math.round(this.text.length * share);
    const end = share >= 1 ? this.text.length : this.text.lastIndexOf(" ", cut);
    return { spokenText: this.text.slice(0, Math.max(0, end)).trim(), audioMs: played };
  }

  /** The conversation is over: stop without a word. */
  abort(): void {
    this.stopped = true;
    clearTimeout(this.quiet);
    this.session.abort();
  }

  private onEvent(ev: TtsSessionEvent): void {
    if (ev.type === "provider_status") this.onStatus(ev);
    else if (ev.type === "audio_started") {
      this.speaking = true;
      this.delivery = PcmDelivery.for(promiseOf(this.output), ev.format);
      const voice = this.fallbackVoice;
      this.hooks.event({ type: "response_audio_started", responseId: this.id, provider: ev.provider, model: ev.model, ...(voice ? { voice } : {}) });
    } else if (ev.type === "error") this.error = { code: ev.code, message: ev.message };
    else if (ev.type === "ended") this.characters = ev.characters;
  }

  /** Before the first audio, the candidate that serves is told by `response_audio_started`; after it, a failover by `provider_switched`. */
  private onStatus(ev: Extract<TtsSessionEvent, { type: "provider_status" }>): void {
    // Only a fallback model's candidate names its voice from `connecting` on (`connected` always does).
    if (!this.speaking) {
      if (ev.status === "connecting") this.fallbackVoice = ev.voice;
      return;
    }
    // The first failure after the audio began is the provider that was speaking; others may fail before one connects.
    if (ev.status === "failed") this.failure ??= { previous: ev.provider, reason: ev.reason ?? "" };
    if (ev.status !== "connected" || !this.failure) return;
    const { previous, reason } = this.failure;
    this.failure = undefined;
    if (this.stopped) return;
    this.hooks.event({ type: "provider_switched", stage: "tts", responseId: this.id, provider: ev.provider, model: ev.model, ...(ev.voice ? { voice: ev.voice } : {}), previous, reason });
  }

  private onAudio(chunk: Uint8Array): void | Promise<void> {
    if (this.stopped) return;
    if (!this.delivery) return this.send(chunk);
    return this.delivery.process(chunk).then((out) => this.send(out));
  }

  private send(chunk: Uint8Array): void | Promise<void> {
    if (this.stopped || !chunk.byteLength) return;
    this.firstAudioAt ??= performance.now();
    this.audioBytes += chunk.byteLength;
    return this.hooks.sendAudio(chunk);
  }

  private onClose(code: number, reason: string): void {
    clearTimeout(this.quiet);
    this.delivery?.release();
    this.generated = true;
    this.sessionClosed.resolve();
    if (code === CLOSE.normal) {
      if (!this.stopped) this.hooks.event({ type: "response_audio_done", responseId: this.id, characters: this.characters, audioMs: this.audioMs });
      this.hooks.ended(this, { ok: true, characters: this.characters });
    } else this.hooks.ended(this, { ok: false, code, reason, error: this.error });
  }
}

function promiseOf(output: OutputFormat): PcmPromise {
  return { rate: output.sampleRate, ...(output.encoding === "ulaw" ? { companding: "ulaw" as const } : {}) };
}
